//! A batch's results as a Python list, made a chunk at a time with the interpreter let go
//! between chunks.
//!
//! A batch is scored detached (`Python::detach`), but its Python objects can only be made
//! attached: at 8,000 queries of 10 hits that is tens of milliseconds in one go, during which
//! no other Python thread runs (a host's event loop, say). Released every [`CHUNK_ITEMS`]
//! items, another thread waits at most about one chunk (plus the interpreter's switch
//! interval, the wait it would have behind any Python code) instead of the whole conversion.

use pyo3::prelude::*;
use pyo3::types::PyList;

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
