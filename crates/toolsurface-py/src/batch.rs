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
use std::sync::{mpsc, Arc, Mutex, PoisonError};

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
    append_released(py, &out, results, &mut 0, &size, &mut convert)?;
    Ok(out)
}

/// Append `convert(r)` for each of `results` to `out`, letting go of the interpreter after
/// every [`CHUNK_ITEMS`] items counted by `size` (at least one a result); `since` carries
/// the count from one call to the next.
fn append_released<'py, T>(
    py: Python<'py>,
    out: &Bound<'py, PyList>,
    results: Vec<T>,
    since: &mut usize,
    size: &impl Fn(&T) -> usize,
    convert: &mut impl FnMut(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<()> {
    for result in results {
        *since += size(&result).max(1);
        out.append(convert(result)?)?;
        if *since >= CHUNK_ITEMS {
            *since = 0;
            py.detach(|| ());
        }
    }
    Ok(())
}

/// A chunk of a batch: its number and its queries' results.
type Chunk<T> = (usize, Vec<T>);
/// What a pool worker sends: a chunk it made, or the panic that stopped it.
type Made<T> = Result<Chunk<T>, Box<dyn Any + Send>>;

/// A batch that hands out its results a numbered chunk at a time, to any thread that asks
/// (`core::Chunks`): the chunks are numbered from 0 without gaps.
pub(crate) trait ChunkSource: Send + Sync + 'static {
    /// A query's result.
    type Item: Send + 'static;
    /// How many chunks the batch has.
    fn count(&self) -> usize;
    /// Claim the next chunk and make it on the calling thread (`None`: none is left).
    fn take(&self) -> Option<Chunk<Self::Item>>;
    /// Claim no more chunks.
    fn stop(&self);
}

impl<Q: AsRef<str> + Send + Sync + 'static> ChunkSource for core::Chunks<Q> {
    type Item = core::SearchResult;

    fn count(&self) -> usize {
        core::Chunks::count(self)
    }

    fn take(&self) -> Option<Chunk<core::SearchResult>> {
        core::Chunks::take(self)
    }

    fn stop(&self) {
        core::Chunks::stop(self)
    }
}

/// `[convert(r) for r in results]` over every chunk of `source`, converted in order on this
/// thread while `workers` jobs on the rayon pool make the next chunks; with nothing to
/// convert, this thread makes a chunk itself (detached), and only once every chunk is
/// claimed does it wait for one (detached). So a batch keeps one thread a core busy without
/// a thread more than the cores (the pool's threads less one, and this one): a thread that
/// only waited and converted competed with the pool's for the cores. The interpreter is
/// let go after every [`CHUNK_ITEMS`] items, as [`list_in_chunks`] does.
///
/// The jobs own a share of `source`, so this thread never waits for a job that has not
/// started: on a pool busy with other batches it makes every chunk itself and returns,
/// and a job that starts later finds nothing left (or the batch stopped) and ends.
///
/// A panic while making a chunk is the call's `RuntimeError`; a conversion error stops the
/// batch (no chunk is claimed after it) and is the call's error.
pub(crate) fn list_helped<'py, S: ChunkSource>(
    py: Python<'py>,
    source: Arc<S>,
    workers: usize,
    size: impl Fn(&S::Item) -> usize,
    mut convert: impl FnMut(S::Item) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let (tx, rx) = mpsc::channel::<Made<S::Item>>();
    let count = source.count();
    for _ in 0..workers.min(count) {
        let (tx, source) = (tx.clone(), Arc::clone(&source));
        rayon::spawn(move || loop {
            match catch_unwind(AssertUnwindSafe(|| source.take())) {
                Ok(Some(chunk)) => {
                    if tx.send(Ok(chunk)).is_err() {
                        source.stop(); // the consumer has returned (an error)
                        break;
                    }
                }
                Ok(None) => break,
                Err(payload) => {
                    source.stop();
                    let _ = tx.send(Err(payload)); // the consumer may have returned
                    break;
                }
            }
        });
    }
    // Only the jobs' senders are left: the channel closes when the last job ends.
    drop(tx);
    // In a mutex only to be shared with the detached waits (a receiver is not `Sync`); only
    // this thread locks it.
    let rx = Mutex::new(rx);
    let out = PyList::empty(py);
    let made = convert_in_order(py, &*source, &rx, count, &size, &mut convert, &out);
    // However the loop ended, no chunk is claimed after it.
    source.stop();
    if made? < count {
        return Err(panic_error(Box::new("a batch ended before its last chunk")));
    }
    Ok(out)
}

/// [`list_helped`]'s loop: appends the chunks' converted results to `out` in order, making
/// chunks here when none is waiting; the number of chunks converted (short of `count` only
/// if every job ended without making the chunks it claimed, which a panic reports first).
fn convert_in_order<'py, S: ChunkSource>(
    py: Python<'py>,
    source: &S,
    rx: &Mutex<mpsc::Receiver<Made<S::Item>>>,
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
            append_released(py, out, results, &mut since, size, convert)?;
            continue;
        }
        let arrived = rx.lock().unwrap_or_else(PoisonError::into_inner).try_recv();
        if let Ok(made) = arrived {
            let (i, results) = made.map_err(panic_error)?;
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
        // Every chunk is claimed: wait for one a job is making.
        let made = py.detach(|| {
            rx.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv()
                .ok()
        });
        match made {
            Some(made) => {
                let (i, results) = made.map_err(panic_error)?;
                pending.insert(i, results);
            }
            None => break, // every job has ended
        }
    }
    Ok(want)
}
