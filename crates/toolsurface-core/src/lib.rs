//! The native engine of `toolsurface`: text analysis, a columnar BM25F index over six
//! fields, its search with lexicon expansion and a trigram fallback, and explanations.
//!
//! Pure Rust with no Python dependency; `toolsurface-py` binds it. Every step mirrors the
//! pure-Python reference (`python/toolsurface/retrieval/analysis.py` and `pure.py`) so that
//! both engines give the same tokens, the same ranking and the same scores.
//!
//! # Examples
//!
//! Build an index of a few tools and search it. Each tool is a name and six field texts:
//! name, search hint, summary (the description's first sentence), the rest of the
//! description, the parameters, and the requests a host learned lead to the tool (empty
//! unless it taught some).
//!
//! ```
//! use std::sync::Arc;
//! use toolsurface_core::{Analyzer, CharTable, Index, Searcher, Settings};
//!
//! let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))?;
//! let analyzer = Arc::new(Analyzer::new(table, ["a", "the", "to"]));
//! let tools = [
//!     ("github__list_pull_requests", "Lists pull requests.", "owner\nrepo"),
//!     ("slack__send_message", "Sends a message to a channel.", "channel\ntext"),
//!     ("calendar__create_event", "Creates a calendar event.", "start\nend"),
//! ];
//! let names: Vec<String> = tools.iter().map(|t| t.0.to_string()).collect();
//! let fields: Vec<[String; 6]> = tools
//!     .iter()
//!     .map(|&(name, summary, params)| {
//!         let learned = if name.starts_with("calendar") { "book a slot with bob" } else { "" };
//!         [name.into(), String::new(), summary.into(), String::new(), params.into(), learned.into()]
//!     })
//!     .collect();
//! let index = Index::build(analyzer, names, fields)?;
//!
//! // Field weights and b per field, k1, and the weight of lexicon expansions.
//! let settings =
//!     Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.3, 0.5, 0.5, 0.75, 0.75, 0.5], 1.2, 0.6);
//! let searcher = Searcher::new(&index);
//! let hits = searcher.search("send a message", 2, &settings, None, None)?;
//! assert_eq!(index.name(hits.docs[0] as usize), "slack__send_message");
//! assert!(!hits.fallback);
//!
//! // A learned request finds its tool though no description says "book".
//! let learned = searcher.search("book a slot", 1, &settings, None, None)?;
//! assert_eq!(index.name(learned.docs[0] as usize), "calendar__create_event");
//!
//! // Why it scored: per matched term (stemmed), its query weight and its part of the
//! // score in each field; the parts add up to the score.
//! let why = searcher.explain("send a message", hits.docs[0].into(), &settings, None, false)?;
//! assert!(why.iter().any(|(term, _, _)| term == "messag"));
//! let total: f64 = why.iter().flat_map(|(_, _, parts)| parts).sum();
//! assert!((total - hits.scores[0]).abs() <= 1e-12 * hits.scores[0]);
//!
//! // A typo matches nothing as it is: the trigram fallback finds the near terms.
//! let typo = searcher.search("calendr", 1, &settings, None, None)?;
//! assert!(typo.fallback);
//! assert_eq!(index.name(typo.docs[0] as usize), "calendar__create_event");
//! # Ok::<(), toolsurface_core::Error>(())
//! ```
//!
//! A [`Lexicon`] expands the words people type (Russian, abbreviations, synonyms) to the
//! catalogue's words, each expansion weighing [`Settings::expansion_weight`] times its
//! source:
//!
//! ```
//! # use std::sync::Arc;
//! # use toolsurface_core::{Analyzer, CharTable, Index, Searcher, Settings};
//! use toolsurface_core::Lexicon;
//! # let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))?;
//! # let analyzer = Arc::new(Analyzer::new(table, ["a", "the"]));
//! # let doc = |name: &str, summary: &str| {
//! #     [name, "", summary, "", "", ""].map(String::from)
//! # };
//! # let fields = vec![
//! #     doc("slack__send_message", "Sends a message to a channel."),
//! #     doc("calendar__create_event", "Creates a calendar event."),
//! # ];
//! # let names = fields.iter().map(|f| f[0].clone()).collect();
//! # let index = Index::build(analyzer, names, fields)?;
//! # let settings =
//! #     Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.3, 0.5, 0.5, 0.75, 0.75, 0.5], 1.2, 0.6);
//! let entries = [("созвон".to_string(), "meeting event".to_string())];
//! let lexicon = Lexicon::new(index.analyzer(), &entries)?;
//! let searcher = Searcher::new(&index);
//! let terms = searcher.query_terms("созвон", Some(&lexicon), settings.expansion_weight);
//! assert_eq!(
//!     terms,
//!     [("созвон".to_string(), 1.0), ("meet".to_string(), 0.6), ("event".to_string(), 0.6)]
//! );
//! let hits = searcher.search("созвон", 1, &settings, Some(&lexicon), None)?;
//! assert_eq!(index.name(hits.docs[0] as usize), "calendar__create_event");
//! # Ok::<(), toolsurface_core::Error>(())
//! ```
//!
//! # Layout
//!
//! Layers, bottom first; a file imports only from its own layer or a lower one
//! (`tests/layers/rust.toml` states them and a test checks it):
//!
//! 1. base: the public constants (`consts`), the [`Error`] type (`error`), Python's string
//!    semantics (`pystr`), the string tables (`strtab`), the character table ([`chars`]);
//! 2. analysis: text to index terms ([`analysis`]), the query [`Lexicon`] ([`lexicon`]),
//!    the description's first-sentence cut ([`fields`]);
//! 3. scoring: [`Settings`] and the BM25F formulas (`scoring/bm25f.rs`), knowing no index;
//! 4. index: the [`Index`] and its arrays, its saturated-weight tables and their cache, its
//!    build, the trigram index, and [`Filter`] ([`index`]);
//! 5. query: a query's tokens, terms, fallback terms and mentioned groups ([`Aliases`]),
//!    built in buffers the caller lends (`query`);
//! 6. search: [`Searcher`], which borrows an index and owns the per-thread scratch; the
//!    scan, the top k, boosts ([`Boost`]) and explanations (`search`);
//! 7. this file: declarations and re-exports only.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod chars;
mod consts;
pub mod error;
pub mod fields;
pub mod index;
pub mod lexicon;
mod pystr;
mod query;
mod scoring;
mod search;
mod strtab;
#[cfg(test)]
mod test_support;

pub use crate::analysis::{Analyzer, Memo, TokenBuf, TokenScratch, CONNECTORS, MIN_TOKEN_CHARS};
pub use crate::chars::{CharTable, Class};
pub use crate::consts::{
    ALIASES_PRUNED_UP_TO, FIELD_NAMES, FUZZY_MIN_CHARS, FUZZY_MIN_SIMILARITY, FUZZY_PER_TOKEN,
    ISSUE_KEY_SHAPE, N_FIELDS, PAYLOAD_WEIGHT, SETTINGS_CACHE,
};
pub use crate::error::Error;
pub use crate::index::{AnalysedDocs, Filter, Index};
pub use crate::lexicon::Lexicon;
pub use crate::query::{is_question, Aliases, QuestionWords, QUESTION_MAX_CHARS};
pub use crate::scoring::Settings;
pub use crate::search::{Boost, BoostRules, Chunks, Explanation, SearchResult, Searcher};
