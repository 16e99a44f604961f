//! Boosts: sets of documents whose hits have their scores multiplied up.
//!
//! The rule is docs/analysis.md §8 and §10: a hit scores its BM25F score times the factor
//! of every boost whose set holds it, and the best `k` of those scores are the answer. The
//! scan applies the factors as it collects each document (`scan.rs`), so a boosted search
//! is one scan, with its fallback as a plain search has it; [`factor`] is the product, the
//! same IEEE operations in the same order as the pure engine's
//! (`retrieval/engine/pure.py`).

use crate::index::filter::Filter;

/// One boost of a search: the documents it raises and their scores' factor.
#[derive(Clone, Copy, Debug)]
pub struct Boost<'a> {
    /// The documents raised (a boost's set; the documents a run admits only).
    pub members: &'a Filter,
    /// What their scores are multiplied by: finite and at least 1.
    pub factor: f64,
}

/// The product of the factors of the boosts that hold `doc`, in the boosts' order.
#[inline]
pub(crate) fn factor(doc: u32, boosts: &[Boost<'_>]) -> f64 {
    let mut f = 1.0;
    for b in boosts {
        if b.members.contains(doc as usize) {
            f *= b.factor;
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::core::Index;
    use crate::search::request::SearchResult;
    use crate::search::searcher::Searcher;
    use crate::test_support::*;

    /// The boosted ranking by its definition: every admitted document's plain score (the
    /// fallback's when nothing scores) times its factor, best `k`, ties by id.
    fn by_definition(
        idx: &Index,
        q: &str,
        k: usize,
        allowed: Option<&Filter>,
        boosts: &[Boost<'_>],
    ) -> SearchResult {
        let s = settings();
        let all = Searcher::new(idx)
            .search(q, idx.len(), &s, None, allowed)
            .unwrap();
        let mut scored: Vec<(u32, f64)> = all
            .docs
            .iter()
            .zip(&all.scores)
            .map(|(&d, &sc)| (d, sc * factor(d, boosts)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        SearchResult {
            docs: scored.iter().map(|m| m.0).collect(),
            scores: scored.iter().map(|m| m.1).collect(),
            fallback: all.fallback,
        }
    }

    #[test]
    fn a_boosted_search_is_the_best_k_of_the_boosted_scores() {
        let idx = catalogue();
        let s = settings();
        let n = idx.len() as i64;
        let evens = idx
            .make_filter(&(0..n).step_by(2).collect::<Vec<_>>())
            .unwrap();
        let first = idx.make_filter(&[0, 1]).unwrap();
        let last = idx.make_filter(&[n - 1]).unwrap();
        let none = idx.make_filter(&[]).unwrap();
        let sets = [&evens, &first, &last, &none];
        let queries = [
            "list pull requests",
            "send message",
            "calendr",
            "",
            "open issues",
            "create a pull request or an event",
        ];
        for q in queries {
            for k in [1, 2, 3, 10] {
                for allowed in [None, Some(&evens)] {
                    for (i, a) in sets.iter().enumerate() {
                        for bset in [vec![], vec![*a], vec![*a, sets[(i + 1) % 4]]] {
                            let boosts: Vec<Boost<'_>> = bset
                                .iter()
                                .enumerate()
                                .map(|(j, m)| Boost {
                                    members: m,
                                    factor: 1.5 + j as f64,
                                })
                                .collect();
                            let got = Searcher::new(&idx)
                                .search_boosted(q, k, &s, None, allowed, &boosts)
                                .unwrap();
                            let want = by_definition(&idx, q, k, allowed, &boosts);
                            assert_eq!(got, want, "{q:?} k {k} boosts {}", boosts.len());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_factor_below_one_or_not_finite_is_refused() {
        let idx = catalogue();
        let s = settings();
        let all = idx.make_filter(&[0]).unwrap();
        for f in [0.5, f64::NAN, f64::INFINITY] {
            let boost = Boost {
                members: &all,
                factor: f,
            };
            assert!(Searcher::new(&idx)
                .search_boosted("send", 3, &s, None, None, &[boost])
                .is_err());
        }
    }
}
