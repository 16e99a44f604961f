//! A query's ordered, weighted terms.

use rustc_hash::FxHashMap;

/// Ordered query terms (vocabulary ids) with weights; adding a present term keeps the larger
/// weight and the first position.
#[derive(Debug, Default)]
pub(crate) struct TermList {
    pub(crate) items: Vec<(u32, f64)>,
    pub(crate) pos: FxHashMap<u32, usize>,
}

const TERM_LIST_LINEAR: usize = 32;

impl TermList {
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.pos.clear();
    }

    pub(crate) fn add(&mut self, id: u32, weight: f64) {
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
            }
            None => {
                if !self.pos.is_empty() {
                    self.pos.insert(id, self.items.len());
                }
                self.items.push((id, weight));
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
}
