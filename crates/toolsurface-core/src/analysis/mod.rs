//! Text analysis: text -> index terms (`analyzer.rs`, the pipeline the pure engine's
//! `Analyzer` runs), and the kinds of request identifier the query analysis weighs apart
//! (`idents.rs`), the languages of requests (`language.rs`), the keys words are matched
//! by in a lexicon (`lexkey.rs`), and the function words (`function_words.rs`).

pub(crate) mod analyzer;
pub(crate) mod function_words;
pub(crate) mod idents;
pub mod language;
pub(crate) mod lexkey;
pub mod reading;

pub use self::analyzer::{
    in_payload, Analyzer, Memo, TokenBuf, TokenScratch, CONNECTORS, ER_ROOTS, MIN_TOKEN_CHARS,
};
pub use self::function_words::{is_function_word, FUNCTION_WORDS};
pub use self::idents::{ASK_MARKERS, FILE_EXTENSIONS, SUBJECT_MARKERS};
pub use self::lexkey::{english_base, lexicon_key, KEY_SEPARATOR};
