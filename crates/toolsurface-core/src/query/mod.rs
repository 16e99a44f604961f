//! The query layer: a query's path to its terms, built in buffers the caller lends
//! (`buffers.rs`). Tokenising through the identifier memo (`tokens.rs`, `memo.rs`), the
//! context before its ask and its subject (`ask.rs`), the weighted term list (`term_list.rs`)
//! with lexicon expansions (`terms.rs`, `targets.rs`), the fallback's fuzzy terms
//! (`fuzzy.rs`), the groups a query mentions (`aliases.rs`, resolved against an index in
//! `index_aliases.rs`), and whether it asks
//! (`question.rs`). Declarations and
//! re-exports only.

pub(crate) mod aliases;
pub(crate) mod ask;
pub(crate) mod buffers;
pub(crate) mod fuzzy;
pub(crate) mod index_aliases;
pub(crate) mod memo;
pub(crate) mod question;
pub(crate) mod targets;
pub(crate) mod term_list;
pub(crate) mod terms;
pub(crate) mod tokens;

pub use self::aliases::Aliases;
pub use self::question::{is_question, QuestionWords, QUESTION_MAX_CHARS};
