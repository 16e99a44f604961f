//! Property tests: analysis, index build and search never panic on arbitrary Unicode.

use std::sync::Arc;

use proptest::prelude::*;
use toolsurface_core::{Analyzer, CharTable, Index, Lexicon, Searcher, Settings};

fn analyzer() -> Arc<Analyzer> {
    let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
        .expect("chars.tsv parses");
    let en = include_str!("../../../python/toolsurface/data/stopwords_en.txt");
    let ru = include_str!("../../../python/toolsurface/data/stopwords_ru.txt");
    Arc::new(Analyzer::new(table, en.lines().chain(ru.lines())))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(
            prop::sample::select(vec![
                'a', 'b', 'X', 'Y', '0', '9', '_', '-', '.', ' ', 'п', 'Р', 'ё', 'Ё', '\u{301}',
                '\u{200b}', '\u{202e}', '🚀', 'İ', 'ß', 'Σ', '日', '\u{fe0f}', '٣', 'Ⅻ', 'ǅ', '\t',
            ]),
            0..40
        )
        .prop_map(|v| v.into_iter().collect()),
    ]
}

/// Cases per property: 300 in CI, more on demand (`PROPTEST_CASES=1000000` for a long run).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn analysis_never_panics(s in text()) {
        let a = analyzer();
        let toks = a.tokens(&s);
        for t in &toks {
            prop_assert!(t.chars().count() >= 1);
        }
        // Analysis is a function of the text: memoised or not, the same tokens.
        let mut memo = toolsurface_core::Memo::new();
        let mut sc = toolsurface_core::TokenScratch::default();
        let mut got = Vec::new();
        a.for_each_token_memo(&s, &mut sc, &mut memo, |t| got.push(t.to_string()));
        prop_assert_eq!(got, toks);
    }

    #[test]
    fn index_and_search_never_panic(
        docs in proptest::collection::vec(proptest::collection::vec(text(), 6), 0..8),
        queries in proptest::collection::vec(text(), 1..4),
        k in 0usize..12,
        w in proptest::array::uniform6(0.0f64..5.0),
        b in proptest::array::uniform6(0.0f64..=1.0),
        k1 in 0.01f64..4.0,
        ew in 0.0f64..2.0,
    ) {
        let a = analyzer();
        let names: Vec<String> = (0..docs.len()).map(|i| format!("doc{i}")).collect();
        let fields: Vec<[String; 6]> = docs
            .into_iter()
            .map(|d| std::array::from_fn(|i| d[i].clone()))
            .collect();
        let n = fields.len();
        let index = Index::build(a.clone(), names, fields).unwrap();
        let lex = Lexicon::new(&a, &[("abc".to_string(), "xyz data".to_string())]).unwrap();
        let settings = Settings::new(w, b, k1, ew);
        let filter = index.make_filter(&(0..n as i64).step_by(2).collect::<Vec<_>>()).unwrap();
        for q in &queries {
            let r = Searcher::new(&index).search(q, k, &settings, Some(&lex), Some(&filter)).unwrap();
            prop_assert!(r.docs.len() <= k);
            for s in &r.scores {
                prop_assert!(*s > 0.0);
            }
            for d in &r.docs {
                prop_assert!(*d as usize % 2 == 0);
            }
            let _ = Searcher::new(&index).query_terms(q, Some(&lex), ew);
            if let Some(&d) = r.docs.first() {
                let ex = Searcher::new(&index).explain(q, d as i64, &settings, Some(&lex), r.fallback).unwrap();
                prop_assert!(!ex.is_empty());
            }
        }
        let many = Searcher::new(&index).search_many(&queries, k, &settings, Some(&lex), None).unwrap();
        prop_assert_eq!(many.len(), queries.len());
    }

    #[test]
    fn a_learned_field_replaced_searches_as_a_build(
        docs in proptest::collection::vec(proptest::collection::vec(text(), 7), 0..8),
        queries in proptest::collection::vec(text(), 1..4),
    ) {
        // Each document's five own texts, its learned text before and after.
        let a = analyzer();
        let names: Vec<String> = (0..docs.len()).map(|i| format!("doc{i}")).collect();
        let fields = |learned: usize| -> Vec<[String; 6]> {
            docs.iter()
                .map(|d| std::array::from_fn(|i| d[if i == 5 { learned } else { i }].clone()))
                .collect()
        };
        let before = Index::build(a.clone(), names.clone(), fields(5)).unwrap();
        let built = Index::build(a.clone(), names, fields(6)).unwrap();
        let learned: Vec<&str> = docs.iter().map(|d| d[6].as_str()).collect();
        let merged = before.with_learned(&learned).unwrap();
        prop_assert_eq!(merged.vocabulary_size(), built.vocabulary_size());
        prop_assert_eq!(merged.postings_len(), built.postings_len());
        let settings = Settings::new([3.0, 2.0, 1.5, 1.0, 0.5, 1.0], [0.75; 6], 1.2, 0.5);
        for q in queries.iter().chain(learned.iter().map(|s| s.to_string()).collect::<Vec<_>>().iter()) {
            let x = Searcher::new(&merged).search(q, 8, &settings, None, None).unwrap();
            let y = Searcher::new(&built).search(q, 8, &settings, None, None).unwrap();
            prop_assert_eq!((x.docs, x.scores, x.fallback), (y.docs, y.scores, y.fallback));
        }
    }
}

#[test]
fn hostile_inputs() {
    let a = analyzer();
    let big = "a_".repeat(50_000) + &"Б".repeat(10_000) + &"\u{301}".repeat(1000);
    let _ = a.tokens(&big);
    let names = vec!["x".to_string(); 3];
    let fields = vec![
        std::array::from_fn(|_| big.clone()),
        std::array::from_fn(|_| String::new()),
        std::array::from_fn(|_| "word ".repeat(10_000)),
    ];
    let index = Index::build(a, names, fields).unwrap();
    let s = Settings::new([1e308; 6], [1.0; 6], 1e-300, 1e308);
    let r = Searcher::new(&index)
        .search(&"word ".repeat(5000), usize::MAX, &s, None, None)
        .unwrap();
    for x in &r.scores {
        assert!(*x > 0.0);
    }
    let long_query: String = (0..5000).map(|i| format!("w{i} ")).collect();
    let _ = Searcher::new(&index)
        .search(&long_query, 10, &s, None, None)
        .unwrap();
}
