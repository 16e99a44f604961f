//! A search with boosts: sets of documents whose hits have their scores multiplied up.
//!
//! The rule is the one `python/toolsurface/boosts.py` states and docs/analysis.md §8 and
//! §10 make normative: a hit scores its BM25F score times the factor of every boost whose
//! set holds it; the best `k` are among the best `k` of the plain ranking and the best `k`
//! of each boost's own documents, each of those a whole search of its own (its own
//! fallback). Here the query is analysed once and scanned once per ranking; the result is
//! what those separate searches merged give, bit for bit.

use std::collections::HashSet;

use crate::index::core::Index;
use crate::index::filter::Filter;
use crate::query::fuzzy::fallback_terms;
use crate::query::terms::main_terms;
use crate::query::tokens::analyse_query;
use crate::search::request::{Request, SearchResult};
use crate::search::scan::scan;
use crate::search::scratch::Scratch;

/// One boost of a search: the documents it raises and their scores' factor.
#[derive(Clone, Copy, Debug)]
pub struct Boost<'a> {
    /// The documents raised (a boost's set; the documents a run admits only).
    pub members: &'a Filter,
    /// What their scores are multiplied by: finite and at least 1.
    pub factor: f64,
}

/// The best `k` of one ranking (`docs`, `scores`), and whether it fell back.
type Ranking = (Vec<u32>, Vec<f64>, bool);

/// The best `k` of one ranking of `index` for the query's current terms in `sc` (the main
/// stage's, or the fallback's once the caller made them), and whether nothing scored.
fn ranking(index: &Index, req: &Request<'_>, only: Option<&Filter>, sc: &mut Scratch) -> Ranking {
    let found = scan(index, &sc.query.terms, req.sat, req.k, only, &mut sc.accum);
    let top = &sc.accum.top[..req.k.min(sc.accum.top.len())];
    (
        top.iter().map(|h| h.doc).collect(),
        top.iter().map(|h| h.score).collect(),
        !found,
    )
}

/// `Searcher::search_boosted` of `query` in `sc` (boosts checked, at least one, `k > 0`):
/// the query analysed once, the plain ranking and each boost's scanned, merged.
pub(crate) fn search_boosted_in(
    index: &Index,
    query: &str,
    req: &Request<'_>,
    boosts: &[Boost<'_>],
    sc: &mut Scratch,
) -> SearchResult {
    analyse_query(&index.analyzer, query, &mut sc.query);
    main_terms(index, &mut sc.query, req.lexicon, req.expansion_weight);
    // A boost raises admitted documents only: its ranking is over both sets.
    let within: Vec<Filter> = match req.allowed {
        Some(allowed) => boosts.iter().map(|b| b.members.and(allowed)).collect(),
        None => Vec::new(),
    };
    let filters: Vec<Option<&Filter>> = std::iter::once(req.allowed)
        .chain(
            boosts
                .iter()
                .enumerate()
                .map(|(i, b)| Some(within.get(i).unwrap_or(b.members))),
        )
        .collect();
    let mut runs: Vec<Ranking> = filters
        .iter()
        .map(|&only| ranking(index, req, only, sc))
        .collect();
    // A ranking that found nothing falls back on its own, as its own search would; the
    // merge keeps a boost's only when it fell back as the plain one did, so the fallback
    // is worked out only when the plain ranking needs it.
    if runs[0].2 {
        fallback_terms(index, &mut sc.query);
        for (run, &only) in runs.iter_mut().zip(&filters) {
            if run.2 {
                let found = ranking(index, req, only, sc);
                *run = (found.0, found.1, true);
            }
        }
    }
    merge(req.k, &runs, boosts)
}

/// The product of the factors of the boosts that hold `doc`, in the boosts' order.
fn factor(doc: u32, boosts: &[Boost<'_>]) -> f64 {
    let mut f = 1.0;
    for b in boosts {
        if b.members.contains(doc as usize) {
            f *= b.factor;
        }
    }
    f
}

/// `runs[0]` (the plain ranking) with every boost applied, then each boost's ranking
/// (`runs[1..]`) adding the documents not yet in, best `k` first, ties by id.
fn merge(k: usize, runs: &[Ranking], boosts: &[Boost<'_>]) -> SearchResult {
    let fallback = runs[0].2;
    let mut seen: HashSet<u32> = HashSet::new();
    let mut merged: Vec<(u32, f64)> = Vec::new();
    for (i, (docs, scores, fell_back)) in runs.iter().enumerate() {
        if i > 0 && *fell_back != fallback {
            continue;
        }
        for (&doc, &score) in docs.iter().zip(scores) {
            if seen.insert(doc) {
                merged.push((doc, score * factor(doc, boosts)));
            }
        }
    }
    // Scores are finite (BM25F of finite settings times finite factors): a total order.
    merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    merged.truncate(k);
    SearchResult {
        docs: merged.iter().map(|&(d, _)| d).collect(),
        scores: merged.iter().map(|&(_, s)| s).collect(),
        fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// The boosted ranking made from separate searches, as `boosts.py` merges them.
    fn by_separate_searches(
        idx: &Index,
        q: &str,
        k: usize,
        allowed: Option<&Filter>,
        boosts: &[Boost<'_>],
    ) -> SearchResult {
        let s = settings();
        let plain = Searcher::new(idx).search(q, k, &s, None, allowed).unwrap();
        let mut merged: Vec<(u32, f64)> = Vec::new();
        let mut add = |docs: &[u32], scores: &[f64]| {
            for (&d, &sc) in docs.iter().zip(scores) {
                if !merged.iter().any(|&(m, _)| m == d) {
                    merged.push((d, sc * factor(d, boosts)));
                }
            }
        };
        add(&plain.docs, &plain.scores);
        for b in boosts {
            let within = allowed.map(|a| b.members.and(a));
            let only = within.as_ref().unwrap_or(b.members);
            let r = Searcher::new(idx)
                .search(q, k, &s, None, Some(only))
                .unwrap();
            if r.fallback == plain.fallback {
                add(&r.docs, &r.scores);
            }
        }
        merged.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
        merged.truncate(k);
        SearchResult {
            docs: merged.iter().map(|m| m.0).collect(),
            scores: merged.iter().map(|m| m.1).collect(),
            fallback: plain.fallback,
        }
    }

    #[test]
    fn one_analysis_gives_what_separate_searches_merged_give() {
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
                            let want = by_separate_searches(&idx, q, k, allowed, &boosts);
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
