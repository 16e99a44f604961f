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
pub mod fields;
pub mod index;
pub mod lexicon;
mod strtab;

pub use analysis::{Analyzer, Memo, TokenBuf, TokenScratch};
pub use chars::{CharTable, Class};
pub use index::{Explanation, Filter, Index, SearchResult, Settings, FIELD_NAMES, N_FIELDS};
pub use lexicon::Lexicon;
