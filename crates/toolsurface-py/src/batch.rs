//! A batch's results as a Python list, made a chunk at a time with the interpreter let go
//! between chunks.
//!
//! A batch is scored detached (`Python::detach`), but its Python objects can only be made
//! attached: at 8,000 queries of 10 hits that is tens of milliseconds in one go, during which
//! no other Python thread runs (a host's event loop, say). Released every [`CHUNK_ITEMS`]
//! items, another thread waits at most about one chunk (plus the interpreter's switch
//! interval, the wait it would have behind any Python code) instead of the whole conversion.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyList;

use toolsurface_core as core;

use crate::errors::panic_error;

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

/// A chunk of a batch: its number and its queries' results.
type Chunk<T> = (usize, Vec<T>);
/// Where the pool's workers send the chunks they made (behind a mutex: see `list_helped`).
type Inbox<T> = Mutex<mpsc::Receiver<Chunk<T>>>;

/// A batch that hands out its results a numbered chunk at a time, to any thread that asks
/// (`core::Chunks`): the chunks are numbered from 0 without gaps.
pub(crate) trait ChunkSource: Sync {
    /// A query's result.
    type Item: Send;
    /// How many chunks the batch has.
    fn count(&self) -> usize;
    /// Claim the next chunk and make it on the calling thread (`None`: none is left).
    fn take(&self) -> Option<(usize, Vec<Self::Item>)>;
    /// Claim no more chunks.
    fn stop(&self);
}

impl<Q: AsRef<str> + Sync> ChunkSource for core::Chunks<'_, Q> {
    type Item = core::SearchResult;

    fn count(&self) -> usize {
        core::Chunks::count(self)
    }

    fn take(&self) -> Option<(usize, Vec<core::SearchResult>)> {
        core::Chunks::take(self)
    }

    fn stop(&self) {
        core::Chunks::stop(self)
    }
}

/// `[convert(r) for r in results]` over every chunk of `source`, converted in order on this
/// thread while `workers` threads of the rayon pool make the next chunks; with nothing to
/// convert, this thread makes a chunk itself (detached), and only once every chunk is
/// claimed does it wait for one. So a batch keeps one thread a core busy without a thread
/// more than the cores (the pool's threads less one, and this one): a thread that only
/// waited and converted competed with the pool's for the cores. The interpreter is let go
/// after every [`CHUNK_ITEMS`] items, as [`list_in_chunks`] does, and for every wait: this
/// thread may finish the batch before a busy pool has started its workers, and waits for
/// them to find nothing left with the interpreter let go, so other Python threads run.
///
/// A panic while making a chunk is the call's `RuntimeError`; a conversion error stops the
/// batch (no chunk is claimed after it) and is the call's error.
pub(crate) fn list_helped<'py, S: ChunkSource>(
    py: Python<'py>,
    source: &S,
    workers: usize,
    size: impl Fn(&S::Item) -> usize,
    mut convert: impl FnMut(S::Item) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let (tx, rx) = mpsc::channel::<Chunk<S::Item>>();
    // In a mutex only to be shared with the detached waits (a receiver is not `Sync`); only
    // this thread locks it.
    let rx = Mutex::new(rx);
    let failed: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
    let out = PyList::empty(py);
    let count = source.count();
    let made = rayon::in_place_scope(|scope| {
        for _ in 0..workers.min(count) {
            let (tx, failed) = (tx.clone(), &failed);
            scope.spawn(move |_| loop {
                match catch_unwind(AssertUnwindSafe(|| source.take())) {
                    Ok(Some(chunk)) => {
                        if tx.send(chunk).is_err() {
                            source.stop(); // the consumer has returned (a conversion error)
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(payload) => {
                        source.stop();
                        failed
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get_or_insert(payload);
                        break;
                    }
                }
            });
        }
        // Only the workers' senders are left: the channel closes when the last job ends.
        drop(tx);
        let made = convert_in_order(py, source, &rx, count, &size, &mut convert, &out);
        // However the loop ended, no chunk is claimed after it, and the workers' jobs (which
        // a busy pool may not have started yet) are waited for detached: the scope's own
        // join, attached, then has none left to wait for.
        source.stop();
        py.detach(|| {
            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
            while rx.recv().is_ok() {}
        });
        made
    });
    if let Some(payload) = failed.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(panic_error(payload));
    }
    if made? < count {
        return Err(panic_error(Box::new("a batch ended before its last chunk")));
    }
    Ok(out)
}

/// [`list_helped`]'s loop: appends the chunks' converted results to `out` in order, making
/// chunks here when none is waiting; the number of chunks converted (short of `count` only
/// when the workers stopped on a panic).
fn convert_in_order<'py, S: ChunkSource>(
    py: Python<'py>,
    source: &S,
    rx: &Inbox<S::Item>,
    count: usize,
    size: &impl Fn(&S::Item) -> usize,
    convert: &mut impl FnMut(S::Item) -> PyResult<Bound<'py, PyAny>>,
    out: &Bound<'py, PyList>,
) -> PyResult<usize> {
    let mut pending: BTreeMap<usize, Vec<S::Item>> = BTreeMap::new();
    let (mut want, mut since) = (0, 0);
    while want < count {
        if let Some(results) = pending.remove(&want) {
            want += 1;
            for result in results {
                since += size(&result).max(1);
                out.append(convert(result)?)?;
                if since >= CHUNK_ITEMS {
                    since = 0;
                    py.detach(|| ());
                }
            }
            continue;
        }
        let arrived = rx.lock().unwrap_or_else(PoisonError::into_inner).try_recv();
        if let Ok((i, results)) = arrived {
            pending.insert(i, results);
            continue;
        }
        match py.detach(|| catch_unwind(AssertUnwindSafe(|| source.take()))) {
            Ok(Some((i, results))) => {
                pending.insert(i, results);
                continue;
            }
            Ok(None) => {}
            Err(payload) => return Err(panic_error(payload)),
        }
        // Every chunk is claimed: wait for one a worker is making.
        let chunk = py.detach(|| {
            rx.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv()
                .ok()
        });
        match chunk {
            Some((i, results)) => {
                pending.insert(i, results);
            }
            None => break, // the workers are done and stopped short: a panic
        }
    }
    Ok(want)
}
