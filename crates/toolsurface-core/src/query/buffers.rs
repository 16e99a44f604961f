//! The buffers a query's analysis and terms are built in, lent by the caller.
//!
//! The query layer owns no buffers: every function of `tokens.rs`, `terms.rs` and
//! `fuzzy.rs` works in a [`QueryBuffers`] its caller owns and reuses (the search layer's
//! per-thread scratch, `search/scratch.rs`), whose vectors and memo keep their capacity and
//! contents from one query to the next. Between two steps of one query the buffers hold its state: the
//! tokens (`qtoks`, as positions in `memo`) and their weights, then the terms.

use crate::analysis::analyzer::TokenScratch;
use crate::analysis::language::Lang;
use crate::query::memo::{LangWord, QueryMemo};
use crate::query::targets::TargetIds;
use crate::query::term_list::TermList;

/// A query's buffers: its tokens, their weights, its terms, and the caches they go through.
#[derive(Debug, Default)]
pub(crate) struct QueryBuffers {
    pub(crate) tok: TokenScratch,
    pub(crate) memo: QueryMemo,
    /// The query's tokens, as positions in `memo.toks`.
    pub(crate) qtoks: Vec<usize>,
    /// The weight of each query token (1, or [`PAYLOAD_WEIGHT`](crate::consts::PAYLOAD_WEIGHT)
    /// in the payload).
    pub(crate) qweights: Vec<f64>,
    /// The query's payload ranges (`Analyzer::payload_spans`).
    pub(crate) spans: Vec<(usize, usize)>,
    /// The weight of each issue-key identifier of the query, in order
    /// (`Analyzer::is_issue_key`).
    pub(crate) issue_keys: Vec<f64>,
    /// Per identifier of the query: where its tokens start in `qtoks`, how many issue keys
    /// came before it, its ask-marker word code, and whether it is a subject marker
    /// (`query/ask.rs`).
    pub(crate) idents: Vec<(usize, usize, u8, bool)>,
    /// Per identifier of the query: its tokens' range in `qtoks`, whether it is outside the
    /// payload, where it ends in the query, and its separable-verb particle code (0 for
    /// none): what a German request's separable verbs are found by (`query/tokens.rs`).
    pub(crate) clauses: Vec<(usize, usize, bool, usize, u8)>,
    /// Per token of `qtoks`, when the request is German: the lexicon word of a separable
    /// verb made whole again (`query/tokens.rs`), looked up before the token's own; empty
    /// otherwise.
    pub(crate) joined: Vec<Option<LangWord>>,
    /// The request's language (docs/analysis.md §4a), detected by its analysis.
    pub(crate) lang: Lang,
    /// The query tokens' lexicon word ids.
    pub(crate) lex_ids: Vec<u32>,
    /// Per lexicon entry a query expanded (its first target slot): the best weight, the
    /// strength and the content its expansions added (`query/terms.rs`).
    pub(crate) applied: Vec<(usize, f64, bool, bool)>,
    /// The vocabulary ids of one lexicon's targets in one index, as they are looked up.
    pub(crate) targets: TargetIds,
    /// The query's terms: the main stage's or the fallback's, whichever was built last.
    pub(crate) terms: TermList,
    /// Whether the main stage's terms (`query/terms.rs`) hold one that is not only a
    /// function word's or its expansion's: without one the request matches nothing.
    pub(crate) content: bool,
    pub(crate) fuzzy: FuzzyScratch,
}

/// The fallback's buffers (`query/fuzzy.rs`): a token's trigrams, and per vocabulary term
/// its count of shared trigrams, valid where its stamp is the current generation.
#[derive(Debug, Default)]
pub(crate) struct FuzzyScratch {
    pub(crate) grams: Vec<u64>,
    pub(crate) count: Vec<u32>,
    pub(crate) stamp: Vec<u32>,
    pub(crate) gen: u32,
    pub(crate) touched: Vec<u32>,
}
