//! Text analysis: text -> index terms (`analyzer.rs`, the pipeline the pure engine's
//! `Analyzer` runs), and the kinds of request identifier the query analysis weighs apart
//! (`idents.rs`), and the languages of requests (`language.rs`).

pub(crate) mod analyzer;
pub(crate) mod idents;
pub mod language;

pub use self::analyzer::{
    in_payload, Analyzer, Memo, TokenBuf, TokenScratch, CONNECTORS, ER_ROOTS, MIN_TOKEN_CHARS,
};
pub use self::idents::{ASK_MARKERS, FILE_EXTENSIONS, SUBJECT_MARKERS};
