//! The per-thread buffers of the query path, and the one way to borrow them.

use std::cell::RefCell;

use crate::query::buffers::QueryBuffers;
use crate::search::scan::Accum;

/// Per-thread buffers of a search: the query's (lent to the query layer) and the scan's.
/// Owned here, in the search layer only, so that no lower layer reaches for a thread's
/// buffers on its own: every function of the lower layers takes what it works in from its
/// caller.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) query: QueryBuffers,
    pub(crate) accum: Accum,
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
