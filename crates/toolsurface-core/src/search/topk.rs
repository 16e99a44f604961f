//! The bounded top-k of a scan and the order of hits: score descending, name, first touch.

use std::cmp::Ordering;

use crate::index::core::Index;
use crate::query::term_list::TermList;

/// Up to this `k`, the best hits are kept in a sorted array as they come; above it, all
/// hits are collected and partially sorted.
pub(crate) const TOP_INSERT_MAX: usize = 64;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    pub(crate) score: f64,
    pub(crate) doc: u32,
}

/// Put `hit` into `top` (sorted, best first, at most `k` long) if it belongs there;
/// whether `top` is full afterwards.
#[inline]
pub(crate) fn offer(
    index: &Index,
    top: &mut Vec<Hit>,
    k: usize,
    hit: Hit,
    terms: &TermList,
) -> bool {
    let mut at = top.len();
    if at == k {
        if !before(index, &hit, &top[k - 1], terms) {
            return true;
        }
        at = k - 1;
    } else {
        top.push(hit);
    }
    // Insertion step: move worse hits down one place.
    while at > 0 && before(index, &hit, &top[at - 1], terms) {
        top[at] = top[at - 1];
        at -= 1;
    }
    top[at] = hit;
    top.len() == k
}

/// Whether `a` ranks before `b`.
#[inline]
fn before(index: &Index, a: &Hit, b: &Hit, terms: &TermList) -> bool {
    if a.score != b.score {
        return a.score > b.score;
    }
    tie_order(index, a.doc, b.doc, terms) == Ordering::Less
}

/// Order of hits: score descending, then name (code point order), then first touch.
pub(crate) fn hit_order(index: &Index, a: &Hit, b: &Hit, terms: &TermList) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| tie_order(index, a.doc, b.doc, terms))
}

/// Order of two documents with equal scores: name, then the order in which the scan of
/// `terms` first touched them (as the pure engine's dict of accumulators has them).
/// Names in id order are the ids' order (a tie at the k-th best is common where tools
/// are alike, and reading two names was two cold misses).
#[inline]
fn tie_order(index: &Index, a: u32, b: u32, terms: &TermList) -> Ordering {
    if index.name_ordered {
        return a.cmp(&b);
    }
    tie_order_by_name(index, a, b, terms)
}

/// [`tie_order`] for names not in id order.
#[cold]
fn tie_order_by_name(index: &Index, a: u32, b: u32, terms: &TermList) -> Ordering {
    let (na, nb) = (index.names.get(a as usize), index.names.get(b as usize));
    na.as_bytes()
        .cmp(nb.as_bytes())
        .then_with(|| first_touch(index, a, terms).cmp(&first_touch(index, b, terms)))
}

/// When the scan of `terms` first touches `doc`: (index of the first term whose
/// postings hold it, doc); postings are scanned in ascending doc order.
fn first_touch(index: &Index, doc: u32, terms: &TermList) -> (usize, u32) {
    let first = terms
        .items
        .iter()
        .position(|&(id, _)| {
            index.post_doc[index.postings(id as usize)]
                .binary_search(&doc)
                .is_ok()
        })
        .unwrap_or(usize::MAX);
    (first, doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn k_ties_and_limits() {
        let idx = catalogue();
        let s = settings();
        let all = Searcher::new(&idx)
            .search("create", 100, &s, None, None)
            .unwrap();
        assert_eq!(all.docs.len(), 2);
        let zero = Searcher::new(&idx)
            .search("create", 0, &s, None, None)
            .unwrap();
        assert!(zero.docs.is_empty() && !zero.fallback);
        let one = Searcher::new(&idx)
            .search("create", 1, &s, None, None)
            .unwrap();
        assert_eq!(one.docs, all.docs[..1]);
        let huge = Searcher::new(&idx)
            .search("create", usize::MAX, &s, None, None)
            .unwrap();
        assert_eq!(huge, all);
        // Identical documents tie on score: the name decides.
        let docs = vec![
            doc("b", "", "same words", "", ""),
            doc("a", "", "same words", "", ""),
            doc("c", "", "same words", "", ""),
        ];
        let idx2 =
            Index::build(analyzer(), vec!["b".into(), "a".into(), "c".into()], docs).unwrap();
        let r = Searcher::new(&idx2)
            .search("words", 10, &s, None, None)
            .unwrap();
        assert_eq!(r.docs, vec![1, 0, 2]);
        assert_eq!(r.scores[0], r.scores[1]);
        let r = Searcher::new(&idx2)
            .search("words", 2, &s, None, None)
            .unwrap();
        assert_eq!(r.docs, vec![1, 0]);
    }

    #[test]
    fn top_k_is_a_prefix_of_the_full_ranking() {
        let a = the_analyzer();
        let words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"];
        let mut names = Vec::new();
        let mut fields = Vec::new();
        let mut next = lcg(12345);
        for i in 0..300 {
            let mut text = String::new();
            for _ in 0..(i % 7 + 1) {
                text.push_str(words[next() % words.len()]);
                text.push(' ');
            }
            // Duplicate names and identical documents create exact ties.
            names.push(format!("tool{}", i % 50));
            fields.push([
                String::new(),
                String::new(),
                text,
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        let idx = Index::build(a, names, fields).unwrap();
        let s = Settings::new([1.0; N_FIELDS], [0.75; N_FIELDS], 1.2, 0.0);
        for q in ["alpha", "alpha beta", "omega sigma gamma", "delt"] {
            let full = Searcher::new(&idx)
                .search(q, usize::MAX, &s, None, None)
                .unwrap();
            assert!(full.docs.len() > 40, "{q}");
            for k in 0..=full.docs.len() + 1 {
                let r = Searcher::new(&idx).search(q, k, &s, None, None).unwrap();
                let m = k.min(full.docs.len());
                assert_eq!(r.docs, full.docs[..m], "{q} k={k}");
                assert_eq!(r.scores, full.scores[..m]);
                assert_eq!(r.fallback, full.fallback);
            }
        }
    }
}
