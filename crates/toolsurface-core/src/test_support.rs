//! Fixtures shared by the unit tests: analyzers, documents, a small catalogue, seeded
//! randomness and scoring by definition.

// What the tests of every module use, in one import (`use crate::test_support::*`).
pub(crate) use std::sync::Arc;

pub(crate) use crate::analysis::analyzer::Analyzer;
use crate::chars::CharTable;
pub(crate) use crate::consts::{N_FIELDS, SETTINGS_CACHE};
pub(crate) use crate::index::core::Index;
pub(crate) use crate::index::filter::Filter;
pub(crate) use crate::lexicon::Lexicon;
pub(crate) use crate::query::term_list::TermList;
use crate::query::terms::main_terms as build_main_terms;
use crate::query::tokens::analyse_query;
pub(crate) use crate::scoring::settings::Settings;
use crate::search::scratch::with_scratch;
pub(crate) use crate::search::searcher::Searcher;
pub(crate) use crate::strtab::str_hash;

pub(crate) fn analyzer() -> Arc<Analyzer> {
    let table = chars();
    let en = include_str!("../../../python/toolsurface/data/stopwords_en.txt");
    let ru = include_str!("../../../python/toolsurface/data/stopwords_ru.txt");
    Arc::new(Analyzer::new(table, en.lines().chain(ru.lines())))
}

pub(crate) fn doc(
    name: &str,
    hint: &str,
    summary: &str,
    body: &str,
    params: &str,
) -> [String; N_FIELDS] {
    [name, hint, summary, body, params, ""].map(String::from)
}

pub(crate) fn settings() -> Settings {
    Settings::new(
        [3.0, 2.5, 2.0, 1.0, 0.4, 1.0],
        [0.3, 0.5, 0.5, 0.75, 0.75, 0.5],
        1.2,
        0.6,
    )
}

pub(crate) fn catalogue() -> Index {
    let docs = vec![
        doc(
            "github__list_pull_requests",
            "",
            "Lists pull requests.",
            "Filter by state.",
            "owner\nrepo",
        ),
        doc(
            "github__create_pull_request",
            "",
            "Opens a new pull request.",
            "",
            "title\nbody",
        ),
        doc(
            "github__list_issues",
            "",
            "Lists issues in a repository.",
            "",
            "state",
        ),
        doc(
            "slack__send_message",
            "chat",
            "Sends a message to a channel.",
            "",
            "channel\ntext",
        ),
        doc(
            "calendar__create_event",
            "",
            "Creates a calendar event or meeting.",
            "",
            "start\nend",
        ),
    ];
    let names = docs.iter().map(|d| d[0].clone()).collect();
    Index::build(analyzer(), names, docs).expect("index")
}

/// Straightforward re-implementation of the scoring formula, for comparison.
pub(crate) fn naive_score(idx: &Index, query: &str, s: &Settings, doc: usize) -> f64 {
    let toks = idx.analyzer().tokens(query);
    let mut seen: Vec<&str> = Vec::new();
    let mut score = 0.0;
    for t in &toks {
        if seen.contains(&t.as_str()) {
            continue;
        }
        seen.push(t);
        let Some(id) = idx.vocab.find(t, str_hash(t)) else {
            continue;
        };
        let id = id as usize;
        for p in idx.postings(id) {
            if idx.post_doc[p] as usize != doc {
                continue;
            }
            let tf = idx.tf(p);
            let lens = idx.doc_len[doc];
            let mut x = 0.0;
            for f in 0..N_FIELDS {
                if tf[f] > 0 {
                    x += (s.weights[f] * tf[f] as f64)
                        / ((1.0 - s.b[f]) + s.b[f] * (lens[f] as f64 / idx.avglen[f]));
                }
            }
            // The saturation is kept in single precision (`bm25f::to_single`).
            score += (1.0 * idx.idf[id]) * f64::from((x / (s.k1 + x)) as f32);
        }
    }
    score
}

/// The shared character table with one stopword, "the".
pub(crate) fn the_analyzer() -> Arc<Analyzer> {
    analyzer_with(&["the"])
}

/// The shared character table with the given stopwords.
pub(crate) fn analyzer_with(stopwords: &[&str]) -> Arc<Analyzer> {
    Arc::new(Analyzer::new(chars(), stopwords.iter().copied()))
}

/// The shared character table (`python/toolsurface/data/chars.tsv`).
pub(crate) fn chars() -> CharTable {
    CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv")).expect("table")
}

/// A seeded linear congruential generator: the same documents on every run.
pub(crate) fn lcg(seed: u64) -> impl FnMut() -> usize {
    let mut x = seed;
    move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as usize
    }
}

/// The ranking by definition: every document scored term by term in query order, hits
/// ordered by score, name, then first touch of a term-at-a-time scan.
pub(crate) fn naive(
    idx: &Index,
    terms: &TermList,
    sat: &[f32],
    k: usize,
    allowed: Option<&Filter>,
) -> Vec<(u32, f64)> {
    let n = idx.len();
    let mut acc = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut seen = vec![false; n];
    for &(id, w) in &terms.items {
        let q = w * idf_of(idx, id);
        for p in idx.postings(id as usize) {
            let d = idx.post_doc[p] as usize;
            if !seen[d] {
                seen[d] = true;
                touched.push(d as u32);
            }
            acc[d] += q * f64::from(sat[p]);
        }
    }
    let mut hits: Vec<(usize, u32, f64)> = touched
        .iter()
        .enumerate()
        .filter(|&(_, &d)| acc[d as usize] > 0.0 && allowed.is_none_or(|f| f.contains(d as usize)))
        .map(|(pos, &d)| (pos, d, acc[d as usize]))
        .collect();
    hits.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| idx.name(a.1 as usize).cmp(idx.name(b.1 as usize)))
            .then(a.0.cmp(&b.0))
    });
    hits.into_iter().take(k).map(|(_, d, s)| (d, s)).collect()
}

pub(crate) fn idf_of(idx: &Index, id: u32) -> f64 {
    idx.idf[id as usize]
}

/// The main stage's terms of `query` in `idx`, as a search makes them (no lexicon).
pub(crate) fn main_terms(idx: &Index, query: &str) -> TermList {
    with_scratch(|sc| {
        analyse_query(&idx.analyzer, query, &mut sc.query);
        build_main_terms(idx, &mut sc.query, None, 0.0);
        let mut terms = TermList::default();
        for &(id, w) in &sc.query.terms.items {
            terms.add(id, w);
        }
        terms
    })
}

/// Every query's top `k`, unfiltered and filtered (documents `i % modulus != left_out`
/// only), equals the definition's ranking (`naive`), scores and order alike.
pub(crate) fn assert_ranks_as_naive(
    idx: &Index,
    s: &Settings,
    queries: &[&str],
    ks: &[usize],
    modulus: i64,
    left_out: i64,
) {
    let n = idx.len();
    let sat = idx.sat_table(s);
    let kept: Vec<i64> = (0..n as i64).filter(|i| i % modulus != left_out).collect();
    let filter = idx.make_filter(&kept).unwrap();
    for &q in queries {
        let terms = main_terms(idx, q);
        for allowed in [None, Some(&filter)] {
            let full = naive(idx, &terms, &sat.sat, usize::MAX, allowed);
            assert!(!full.is_empty(), "{q} n={n}");
            for &k in ks {
                let r = Searcher::new(idx).search(q, k, s, None, allowed).unwrap();
                let want = &full[..k.min(full.len())];
                let got: Vec<(u32, f64)> = r
                    .docs
                    .iter()
                    .copied()
                    .zip(r.scores.iter().copied())
                    .collect();
                assert_eq!(got, want, "{q} n={n} k={k} filtered={}", allowed.is_some());
                assert!(!r.fallback);
            }
        }
    }
}
