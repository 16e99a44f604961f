//! Conformance vectors shared with the pure engine (tests/data/ at the repository root).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use toolsurface_core::{Analyzer, CharTable, Index, Lexicon, Searcher, Settings};

fn analyzer() -> Analyzer {
    let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
        .expect("chars.tsv parses");
    let en = include_str!("../../../python/toolsurface/data/stopwords_en.txt");
    let ru = include_str!("../../../python/toolsurface/data/stopwords_ru.txt");
    Analyzer::new(table, en.lines().chain(ru.lines()))
}

fn data(name: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(name);
    std::fs::read_to_string(path).ok()
}

#[test]
fn analysis_vectors() {
    let Some(text) = data("analysis_vectors.jsonl") else {
        eprintln!("analysis_vectors.jsonl absent: skipped");
        return;
    };
    let a = analyzer();
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("valid JSON line");
        let input = v["text"].as_str().expect("text");
        let want: Vec<String> = v["tokens"]
            .as_array()
            .expect("tokens")
            .iter()
            .map(|t| t.as_str().expect("token string").to_string())
            .collect();
        let got = a.tokens(input);
        if got != want {
            failures.push(format!("{input:?}: got {got:?}, want {want:?}"));
        }
        n += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {n} vectors differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Per-field values: five (the learned field's weight and `b` then 0, as the binding
/// takes them) or six.
fn floats(v: &Value) -> [f64; 6] {
    let arr = v.as_array().expect("array");
    assert!(arr.len() == 5 || arr.len() == 6, "five or six values");
    std::array::from_fn(|i| arr.get(i).map_or(0.0, |x| x.as_f64().expect("number")))
}

#[test]
fn scoring_vectors() {
    let Some(text) = data("scoring_vectors.json") else {
        eprintln!("scoring_vectors.json absent: skipped");
        return;
    };
    let payload: Value = serde_json::from_str(&text).expect("valid JSON");
    let a = Arc::new(analyzer());
    let docs = payload["documents"].as_array().expect("documents");
    let names: Vec<String> = docs
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    // Five field texts (the learned field then empty) or six.
    let fields: Vec<[String; 6]> = docs
        .iter()
        .map(|d| {
            let f = d["fields"].as_array().unwrap();
            std::array::from_fn(|i| f.get(i).map_or("", |t| t.as_str().unwrap()).to_string())
        })
        .collect();
    let entries: Vec<(String, String)> = payload["lexicon"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e[0].as_str().unwrap().to_string(),
                e[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let lexicon = Lexicon::new(&a, &entries).expect("lexicon");
    let index = Index::build(a, names.clone(), fields).expect("index");
    let mut failures = Vec::new();
    for case in payload["cases"].as_array().unwrap() {
        let s = &case["settings"];
        let settings = Settings::new(
            floats(&s["weights"]),
            floats(&s["b"]),
            s["k1"].as_f64().unwrap(),
            s["expansion_weight"].as_f64().unwrap(),
        );
        let query = case["query"].as_str().unwrap();
        let got = Searcher::new(&index)
            .search(query, 10, &settings, Some(&lexicon), None)
            .expect("search");
        let got_names: Vec<&str> = got
            .docs
            .iter()
            .map(|&d| names[d as usize].as_str())
            .collect();
        let want_names: Vec<&str> = case["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        let want_scores: Vec<f64> = case["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let same_scores = got.scores.len() == want_scores.len()
            && got
                .scores
                .iter()
                .zip(&want_scores)
                .all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs());
        if got_names != want_names
            || !same_scores
            || got.fallback != case["fallback"].as_bool().unwrap()
        {
            failures.push(format!(
                "{query:?}: got {got_names:?} {:?} {}, want {want_names:?} {want_scores:?} {}",
                got.scores, got.fallback, case["fallback"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
