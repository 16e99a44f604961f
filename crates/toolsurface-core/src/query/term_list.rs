//! A query's ordered, weighted terms.

use rustc_hash::FxHashMap;

/// Ordered query terms (vocabulary ids) with weights; adding a present term keeps the larger
/// weight and the first position. A term is strong when one of its additions was; once
/// [`TermList::partition`] ran, the last [`TermList::weak`] items are the weak terms
/// (docs/analysis.md §4, "Weak evidence"), else every term counts as strong.
#[derive(Debug, Default)]
pub(crate) struct TermList {
    pub(crate) items: Vec<(u32, f64)>,
    pub(crate) pos: FxHashMap<u32, usize>,
    /// Per item: whether it is strong.
    strong: Vec<bool>,
    /// How many items, at the end, are weak.
    pub(crate) weak: usize,
}

const TERM_LIST_LINEAR: usize = 32;

impl TermList {
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.pos.clear();
        self.strong.clear();
        self.weak = 0;
    }

    /// The number of strong terms (the first ones once partitioned).
    #[inline]
    pub(crate) fn strong_count(&self) -> usize {
        self.items.len() - self.weak
    }

    /// Add a strong term (see [`TermList::add_as`]).
    pub(crate) fn add(&mut self, id: u32, weight: f64) {
        self.add_as(id, weight, true);
    }

    /// Move the weak terms after the strong ones, each group in its order, and count them.
    pub(crate) fn partition(&mut self) {
        let weak = self.strong.iter().filter(|&&s| !s).count();
        if weak > 0 && weak < self.items.len() {
            // In place, stably (a query has a few dozen terms): each strong term moves to
            // just after the strong ones before it.
            let mut next = 0;
            for j in 0..self.items.len() {
                if self.strong[j] {
                    self.items[next..=j].rotate_right(1);
                    self.strong[next..=j].rotate_right(1);
                    next += 1;
                }
            }
            self.pos.clear();
        }
        self.weak = weak;
    }

    /// Add `id` at `weight`, strong or weak: a present term keeps its first position and
    /// the larger weight, and is strong if either addition is.
    pub(crate) fn add_as(&mut self, id: u32, weight: f64, strong: bool) {
        let found = if self.items.len() <= TERM_LIST_LINEAR {
            self.items.iter().position(|&(t, _)| t == id)
        } else {
            if self.pos.is_empty() {
                self.pos
                    .extend(self.items.iter().enumerate().map(|(i, &(t, _))| (t, i)));
            }
            self.pos.get(&id).copied()
        };
        match found {
            Some(i) => {
                if weight > self.items[i].1 {
                    self.items[i].1 = weight;
                }
                self.strong[i] |= strong;
            }
            None => {
                if !self.pos.is_empty() {
                    self.pos.insert(id, self.items.len());
                }
                self.items.push((id, weight));
                self.strong.push(strong);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_position_and_largest_weight_past_the_linear_limit() {
        let mut t = TermList::default();
        for round in 0..3 {
            for id in 0..100u32 {
                t.add(id, f64::from(round) * 0.5 + f64::from(id % 3));
            }
            t.add(7, 0.1);
        }
        assert_eq!(t.items.len(), 100);
        for (i, &(id, w)) in t.items.iter().enumerate() {
            assert_eq!(id as usize, i);
            assert_eq!(w, 1.0 + f64::from(id % 3));
        }
        t.clear();
        t.add(5, 1.0);
        assert_eq!(t.items, vec![(5, 1.0)]);
    }

    #[test]
    fn partition_puts_weak_terms_last_in_order() {
        let mut t = TermList::default();
        for (id, strong) in [(1, false), (2, true), (3, false), (4, true), (5, true)] {
            t.add_as(id, 1.0, strong);
        }
        // A weak term added again as strong is strong.
        t.add_as(3, 0.5, true);
        t.partition();
        let ids: Vec<u32> = t.items.iter().map(|x| x.0).collect();
        assert_eq!((ids, t.weak, t.strong_count()), (vec![2, 3, 4, 5, 1], 1, 4));
        t.clear();
        t.add(7, 1.0);
        t.partition();
        assert_eq!(t.weak, 0);
    }
}
