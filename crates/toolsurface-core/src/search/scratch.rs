//! The per-thread buffers of the query path.

use std::cell::RefCell;

use crate::analysis::TokenScratch;
use crate::query::fuzzy::FuzzyScratch;
use crate::query::memo::QueryMemo;
use crate::query::targets::TargetIds;
use crate::query::terms::TermList;
use crate::search::scan::Accum;

/// Per-thread buffers of the query path.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) tok: TokenScratch,
    pub(crate) memo: QueryMemo,
    /// The query's tokens, as positions in `memo.toks`.
    pub(crate) qtoks: Vec<usize>,
    /// The weight of each query token (1, or [`PAYLOAD_WEIGHT`] in the payload).
    pub(crate) qweights: Vec<f64>,
    /// The query's payload ranges ([`Analyzer::payload_spans`]).
    pub(crate) spans: Vec<(usize, usize)>,
    /// The weight of each issue-key identifier of the query, in order
    /// ([`Analyzer::is_issue_key`]).
    pub(crate) issue_keys: Vec<f64>,
    /// Per identifier of the query: where its tokens start in `qtoks`, how many issue keys
    /// came before it, its ask-marker word code, and whether it is a subject marker
    /// ([`crate::query::ask`]).
    pub(crate) idents: Vec<(usize, usize, u8, bool)>,
    /// The query tokens' lexicon word ids.
    pub(crate) lex_ids: Vec<u32>,
    /// The vocabulary ids of one lexicon's targets in one index, as they are looked up.
    pub(crate) targets: TargetIds,
    pub(crate) terms: TermList,
    pub(crate) accum: Accum,
    pub(crate) fuzzy: FuzzyScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch (or a fresh one if it is busy or gone).
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut slot = Some(f);
    let done = SCRATCH
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut s) => slot.take().map(|f| f(&mut s)),
            Err(_) => None,
        })
        .ok()
        .flatten();
    match (done, slot.take()) {
        (Some(r), _) => r,
        (None, Some(f)) => f(&mut Scratch::default()),
        // `slot` is emptied only by running `f`, which yields `Some`.
        (None, None) => unreachable!("scratch closure ran without a result"),
    }
}
