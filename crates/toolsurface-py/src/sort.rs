//! `sort_by_name`: two lists reordered as `sorted` orders the first, in Rust.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::no_panic;
use crate::names::copied;

/// `names` and `values` (two lists of one length) reordered as `sorted(names)` orders the
/// names, or `None` where a name is no plain `str` or has a lone surrogate (Python sorts
/// those). Equal names keep their order.
///
/// The names are copied into one buffer and ordered there (UTF-8 bytes compare as code
/// points do): `sorted` over 100,000 names spread across the heap waits on memory at each
/// comparison, and reordering the values by name lookups waits again.
#[pyfunction]
pub(crate) fn sort_by_name<'py>(
    py: Python<'py>,
    names: &Bound<'py, PyList>,
    values: &Bound<'py, PyList>,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>)>> {
    if names.len() != values.len() {
        return Err(PyValueError::new_err(format!(
            "sort_by_name: {} names but {} values",
            names.len(),
            values.len()
        )));
    }
    no_panic(|| {
        let Some(copy) = copied(names) else {
            return Ok(None);
        };
        let (text, spans) = (copy.text, copy.spans);
        // Each name's first 16 bytes as a number that orders as they do (zero-padded: a tie
        // of prefixes compares the whole names), so most comparisons read no text.
        let bytes = text.as_bytes();
        let prefix = |span: &std::ops::Range<usize>| {
            let mut head = [0u8; 16];
            let n = span.len().min(16);
            head[..n].copy_from_slice(&bytes[span.start..span.start + n]);
            u128::from_be_bytes(head)
        };
        let mut order: Vec<(u128, usize)> = spans
            .iter()
            .enumerate()
            .map(|(i, span)| (prefix(span), i))
            .collect();
        // Ties by position: equal names keep their order, as in a stable sort. The sort reads
        // only the copies: other Python threads may run meanwhile.
        py.detach(|| {
            order.sort_unstable_by(|&(pa, a), &(pb, b)| {
                pa.cmp(&pb)
                    .then_with(|| bytes[spans[a].clone()].cmp(&bytes[spans[b].clone()]))
                    .then(a.cmp(&b))
            })
        });
        // Each item once more from its list, moved into the new one (one reference each).
        let reorder = |list: &Bound<'py, PyList>| {
            let items: PyResult<Vec<_>> = order.iter().map(|&(_, i)| list.get_item(i)).collect();
            PyList::new(py, items?)
        };
        Ok(Some((reorder(names)?, reorder(values)?)))
    })
}
