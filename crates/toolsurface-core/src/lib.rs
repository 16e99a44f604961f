//! The native engine of `toolsurface`: text analysis, a columnar BM25F index over five
//! fields, its search with lexicon expansion and a trigram fallback, and explanations.
//!
//! Pure Rust with no Python dependency; `toolsurface-py` binds it. Every step mirrors the
//! pure-Python reference (`python/toolsurface/retrieval/analysis.py` and `pure.py`) so that
//! both engines give the same tokens, the same ranking and the same scores.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod chars;
mod consts;
mod explain;
pub mod fields;
pub mod index;
pub mod lexicon;
mod query;
mod scoring;
mod search;
mod strtab;
#[cfg(test)]
mod test_support;

pub use analysis::{Analyzer, Memo, TokenBuf, TokenScratch, CONNECTORS, MIN_TOKEN_CHARS};
pub use chars::{CharTable, Class};
pub use consts::{
    FIELD_NAMES, FUZZY_MIN_CHARS, FUZZY_MIN_SIMILARITY, FUZZY_PER_TOKEN, N_FIELDS, PAYLOAD_WEIGHT,
    SETTINGS_CACHE,
};
pub use explain::Explanation;
pub use index::Index;
pub use lexicon::Lexicon;
pub use scoring::Settings;
pub use search::{Filter, SearchResult};
