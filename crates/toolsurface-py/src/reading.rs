//! `read_verb_names`: which tool names open with a reading verb
//! (`toolsurface_core::analysis::reading`).

use pyo3::prelude::*;
use pyo3::types::PyList;

use toolsurface_core::analysis::reading::{name_verb, READ_VERBS};

use crate::errors::no_panic;
use crate::names::copied;

/// The positions in `names` of the names whose verb (`retrieval/analysis/reading.py`'s
/// `name_verb`) is a reading one, in order; or `None` where a name is no plain `str` or
/// has a lone surrogate (Python reads those).
///
/// The names are copied into one buffer under the interpreter's lock (another thread may
/// change the list once it is released) and read without it.
#[pyfunction]
pub(crate) fn read_verb_names(
    py: Python<'_>,
    names: &Bound<'_, PyList>,
) -> PyResult<Option<Vec<usize>>> {
    no_panic(|| {
        let Some(copy) = copied(names) else {
            return Ok(None);
        };
        Ok(Some(py.detach(|| {
            (0..copy.spans.len())
                .filter(|&i| name_verb(copy.get(i)).is_some_and(|v| READ_VERBS.contains(&v)))
                .collect()
        })))
    })
}
