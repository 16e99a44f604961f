//! Profiling harness for the native engine (not part of the library).
//!
//! ```sh
//! cargo run --release --example bench -- FIELDS.json QUERIES.json LEXICON.json [ROUNDS] [MODE]
//! ```
//!
//! `FIELDS.json`: `[[name, [name, search_hint, summary, body, params]], ...]`;
//! `QUERIES.json`: `["query", ...]`; `LEXICON.json`: `[["source", "targets"], ...]`.
//! `MODE`: `all` (default: build, then time `ROUNDS` passes over the queries, one search at a
//! time, and print a checksum of every result's ids and score bits), `build` (build only),
//! `check` (one pass, checksum and per-query results to stdout, for diffing), `check2`
//! (fallback, filters, other settings, explain, query terms and batches to stdout, for
//! diffing two builds), `digest` (a digest of every array of the index, equal before and
//! after a change of the build), `stats` (query terms and postings a query reads, on
//! average), `parse` (stop before the build: `build` minus `parse` is the build's cost).
//! Run it under `valgrind --tool=callgrind` with `ROUNDS` 0 and 1 and subtract to get the
//! instructions of the query pass.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use toolsurface_core::{Analyzer, CharTable, Index, Lexicon, Searcher, Settings};

fn analyzer() -> Analyzer {
    let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
        .expect("chars.tsv parses");
    let en = include_str!("../../../python/toolsurface/data/stopwords_en.txt");
    let ru = include_str!("../../../python/toolsurface/data/stopwords_ru.txt");
    Analyzer::new(table, en.lines().chain(ru.lines()))
}

fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

/// CPU time of this thread (ns), from /proc (0 where unavailable).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU time of the process, all threads (user + system, seconds), from /proc.
fn process_cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: bench FIELDS.json QUERIES.json LEXICON.json [ROUNDS] [MODE]");
        std::process::exit(2);
    }
    let rounds: usize = args.get(4).map_or(5, |r| r.parse().expect("rounds"));
    let mode = args.get(5).map_or("all", String::as_str);

    let fields_json = read(&args[1]);
    let mut names = Vec::new();
    let mut fields = Vec::new();
    for row in fields_json.as_array().expect("rows") {
        names.push(row[0].as_str().expect("name").to_string());
        // Five fields (a file written before the learned field) or six.
        let mut f = strings(&row[1]);
        f.resize(6, String::new());
        fields.push(<[String; 6]>::try_from(f).expect("five or six fields"));
    }
    drop(fields_json);
    let text_bytes: usize = fields.iter().flatten().map(String::len).sum();
    let queries = strings(&read(&args[2]));
    let lex_entries: Vec<(String, String)> = read(&args[3])
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e[0].as_str().expect("source").to_string(),
                e[1].as_str().expect("target").to_string(),
            )
        })
        .collect();

    let an = Arc::new(analyzer());
    let lexicon = Lexicon::new(&an, &lex_entries).expect("lexicon");
    let n = names.len();
    if mode == "parse" {
        // Everything but the build: subtract from `build` to cost the build alone.
        std::hint::black_box((&names, &fields, &lexicon));
        return;
    }
    let t0 = Instant::now();
    let c0 = process_cpu_s();
    let index = Index::build(Arc::clone(&an), names, fields).expect("index");
    let build = t0.elapsed();
    let build_cpu = process_cpu_s() - c0;
    eprintln!(
        "docs {n}  text {text_bytes} B  build {:.1} ms wall, {:.2} s cpu  memory_bytes {}  ({:.2}x text)  vocab {}  postings {}",
        build.as_secs_f64() * 1e3,
        build_cpu,
        index.memory_bytes(),
        index.memory_bytes() as f64 / text_bytes as f64,
        index.vocabulary_size(),
        index.postings_len(),
    );
    if mode == "build" {
        return;
    }
    if mode == "digest" {
        // A digest of the whole index: equal before and after a change of the build.
        println!("digest {:016x}", index.digest());
        return;
    }
    let settings = Settings::new(
        [5.0, 2.5, 1.25, 0.4, 0.4, 1.0],
        [0.5, 0.5, 0.5, 0.6, 0.6, 0.5],
        2.0,
        1.0,
    );
    if mode == "stats" {
        let nf = index.len() as f64;
        let (mut tot_terms, mut tot_post, mut maxp) = (0usize, 0f64, 0f64);
        for q in &queries {
            let terms = Searcher::new(&index).query_terms(q, Some(&lexicon), 1.0);
            let mut p = 0.0;
            let mut nt = 0;
            for (t, _) in &terms {
                if let Some(idf) = index.idf(t) {
                    let r = idf.exp() - 1.0;
                    p += (nf + 0.5 - 0.5 * r) / (1.0 + r);
                    nt += 1;
                }
            }
            tot_terms += nt;
            tot_post += p;
            if p > maxp {
                maxp = p;
            }
        }
        eprintln!(
            "avg terms {:.2}  avg postings {:.1} max {:.0}",
            tot_terms as f64 / queries.len() as f64,
            tot_post / queries.len() as f64,
            maxp
        );
        return;
    }
    if mode == "check2" {
        check_other_paths(&index, &queries, &lexicon);
        return;
    }
    // Warm the settings table.
    Searcher::new(&index)
        .search("", 10, &settings, Some(&lexicon), None)
        .expect("search");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut fallbacks = 0;
    let verbose = mode == "check";
    for q in &queries {
        let r = Searcher::new(&index)
            .search(q, 10, &settings, Some(&lexicon), None)
            .expect("search");
        r.docs.hash(&mut hasher);
        for s in &r.scores {
            s.to_bits().hash(&mut hasher);
        }
        r.fallback.hash(&mut hasher);
        fallbacks += usize::from(r.fallback);
        if verbose {
            println!("{q}\t{}\t{}", r.fallback, hit_bits(&r));
        }
    }
    eprintln!(
        "checksum {:016x}  fallbacks {fallbacks}/{}",
        hasher.finish(),
        queries.len()
    );
    let best = timed_rounds(&index, &queries, &settings, &lexicon, rounds);
    if rounds > 0 {
        eprintln!(
            "search: best of {rounds} rounds {:.2} us/query wall, {:.2} us/query cpu",
            best.0 / queries.len() as f64 * 1e6,
            best.1 / queries.len() as f64 * 1e6
        );
    }
}

/// The timed passes (a function of its own so that callgrind can collect just it:
/// `--collect-atstart=no --toggle-collect='*timed_rounds*'`).
#[inline(never)]
fn timed_rounds(
    index: &Index,
    queries: &[String],
    settings: &Settings,
    lexicon: &Lexicon,
    rounds: usize,
) -> (f64, f64) {
    let mut best = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        let t0 = Instant::now();
        let c0 = thread_cpu_ns();
        for q in queries {
            let r = Searcher::new(index)
                .search(q, 10, settings, Some(lexicon), None)
                .expect("search");
            std::hint::black_box(r);
        }
        best.0 = best.0.min(t0.elapsed().as_secs_f64());
        best.1 = best.1.min((thread_cpu_ns() - c0) as f64 * 1e-9);
    }
    best
}

/// Every other path a search can take, printed for diffing two builds.
fn check_other_paths(index: &Index, queries: &[String], lexicon: &Lexicon) {
    let other = Settings::new(
        [3.0, 2.5, 2.0, 1.0, 0.4, 1.0],
        [0.3, 0.5, 0.5, 0.75, 0.75, 0.5],
        1.2,
        0.6,
    );
    let n = index.len() as i64;
    let filter = index
        .make_filter(&(0..n).filter(|i| i % 3 != 0).collect::<Vec<_>>())
        .expect("filter");
    let show = |r: &toolsurface_core::SearchResult| format!("{} {}", r.fallback, hit_bits(r));
    for (i, q) in queries.iter().enumerate().step_by(3) {
        // A typo in every word of three letters or more sends most of these to the fallback.
        let typo: String = q
            .split(' ')
            .map(|w| {
                let c: Vec<char> = w.chars().collect();
                if c.len() >= 4 {
                    c.iter()
                        .enumerate()
                        .filter(|&(j, _)| j != 2)
                        .map(|(_, &x)| x)
                        .collect()
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        for (label, query) in [("q", q.as_str()), ("typo", typo.as_str())] {
            let a = Searcher::new(index)
                .search(query, 10, &other, None, None)
                .expect("search");
            let b = Searcher::new(index)
                .search(query, 5, &other, Some(lexicon), Some(&filter))
                .expect("search");
            let c = Searcher::new(index)
                .search(query, 100, &other, Some(lexicon), None)
                .expect("search");
            println!("{i} {label} A {}", show(&a));
            println!("{i} {label} B {}", show(&b));
            println!("{i} {label} C {}", show(&c));
            for &d in a.docs.iter().take(3) {
                let ex = Searcher::new(index)
                    .explain(query, i64::from(d), &other, Some(lexicon), a.fallback)
                    .expect("explain");
                let parts: Vec<String> = ex
                    .iter()
                    .map(|(t, w, f)| {
                        let bits: Vec<String> =
                            f.iter().map(|x| format!("{:016x}", x.to_bits())).collect();
                        format!("{t}/{w}/{}", bits.join(","))
                    })
                    .collect();
                println!("{i} {label} X {d} {}", parts.join(" "));
            }
        }
        let terms = Searcher::new(index).query_terms(q, Some(lexicon), 0.6);
        println!("{i} T {terms:?}");
    }
    let batch = Searcher::new(index)
        .search_many(queries, 10, &other, Some(lexicon), Some(&filter))
        .expect("batch");
    for (i, r) in batch.iter().enumerate() {
        println!("{i} M {}", show(r));
    }
}

/// A result's hits as `doc:score-bits`, space-separated: exact, for comparing runs.
fn hit_bits(r: &toolsurface_core::SearchResult) -> String {
    let parts: Vec<String> = r
        .docs
        .iter()
        .zip(&r.scores)
        .map(|(d, s)| format!("{d}:{:016x}", s.to_bits()))
        .collect();
    parts.join(" ")
}
