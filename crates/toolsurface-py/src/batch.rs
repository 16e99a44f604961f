//! A batch's results as a Python list, made a chunk at a time with the interpreter let go
//! between chunks.
//!
//! A batch is scored detached (`Python::detach`), but its Python objects can only be made
//! attached: at 8,000 queries of 10 hits that is tens of milliseconds in one go, during which
//! no other Python thread runs (a host's event loop, say). Released every [`CHUNK_ITEMS`]
//! items, another thread waits at most about one chunk (plus the interpreter's switch
//! interval, the wait it would have behind any Python code) instead of the whole conversion.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::{panic_error, Failure};

/// Items (hits, or a query's result when it has none) converted between two releases of the
/// interpreter: about a tenth of a millisecond's work, so the release (a few hundred
/// nanoseconds) costs nothing measurable.
pub(crate) const CHUNK_ITEMS: usize = 256;

/// `[convert(r) for r in results]`, letting go of the interpreter after every
/// [`CHUNK_ITEMS`] items, counted by `size` (at least one a result). The list is ours alone
/// until returned, and the items are plain Rust values, so nothing another thread does
/// between chunks changes what is made; `convert` re-reads any Python state it depends on.
pub(crate) fn list_in_chunks<'py, T>(
    py: Python<'py>,
    results: Vec<T>,
    size: impl Fn(&T) -> usize,
    mut convert: impl FnMut(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let mut since = 0;
    for result in results {
        since += size(&result).max(1);
        out.append(convert(result)?)?;
        if since >= CHUNK_ITEMS {
            since = 0;
            py.detach(|| ());
        }
    }
    Ok(out)
}

/// What a producer hands each chunk to: its number and results; `false` once the consumer
/// has stopped (the producer should start no more chunks).
pub(crate) type Sink<'a, T> = dyn Fn(usize, Vec<T>) -> bool + Sync + 'a;

/// `[convert(r) for r in results]` where `produce` makes the results on the rayon pool, a
/// numbered chunk at a time in any order, while this thread converts the chunks in order
/// as they arrive (waiting for one with the interpreter let go, and letting it go after
/// every [`CHUNK_ITEMS`] items as [`list_in_chunks`] does).
///
/// `produce` runs detached from the interpreter and must number its chunks from 0 without
/// gaps. Its error, or its panic (as `RuntimeError`), is the call's; a conversion error
/// stops it (the sink answers `false`) and is the call's error in turn.
pub(crate) fn list_streamed<'py, T: Send>(
    py: Python<'py>,
    produce: impl FnOnce(&Sink<'_, T>) -> Result<(), Failure> + Send,
    size: impl Fn(&T) -> usize,
    mut convert: impl FnMut(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let (tx, rx) = mpsc::channel::<(usize, Vec<T>)>();
    let mut produced: Option<PyResult<()>> = None;
    let out = PyList::empty(py);
    let converted = rayon::in_place_scope(|scope| {
        let produced = &mut produced;
        scope.spawn(move |_| {
            // `tx` is dropped when this job ends, however it ends: the receiving loop below
            // then sees the channel closed once it has taken every chunk sent.
            let sink = move |i: usize, results: Vec<T>| tx.send((i, results)).is_ok();
            *produced = Some(match catch_unwind(AssertUnwindSafe(|| produce(&sink))) {
                Ok(result) => result.map_err(Failure::into_py),
                Err(payload) => Err(panic_error(payload)),
            });
        });
        // Owned by this closure: on a conversion error it is dropped as the closure returns,
        // so the producer's next chunk is refused and it stops; the scope waits for it.
        let mut rx = rx;
        let mut pending: BTreeMap<usize, Vec<T>> = BTreeMap::new();
        let (mut want, mut since) = (0, 0);
        loop {
            let arrived = match rx.try_recv() {
                Ok(chunk) => Some(chunk),
                Err(mpsc::TryRecvError::Disconnected) => None,
                Err(mpsc::TryRecvError::Empty) => {
                    // The receiver is `Send` but not `Sync`: it goes into the detached
                    // closure and comes back out.
                    let (back, chunk) = py.detach(move || {
                        let chunk = rx.recv().ok();
                        (rx, chunk)
                    });
                    rx = back;
                    chunk
                }
            };
            let Some((i, results)) = arrived else { break };
            pending.insert(i, results);
            while let Some(results) = pending.remove(&want) {
                want += 1;
                for result in results {
                    since += size(&result).max(1);
                    out.append(convert(result)?)?;
                    if since >= CHUNK_ITEMS {
                        since = 0;
                        py.detach(|| ());
                    }
                }
            }
        }
        PyResult::Ok(())
    });
    produced.unwrap_or_else(|| Err(panic_error(Box::new("batch producer did not run"))))?;
    converted?;
    Ok(out)
}
