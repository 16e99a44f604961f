//! `read_verb_names`: which tool names open with a reading verb
//! (`toolsurface_core::analysis::reading`).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use toolsurface_core::analysis::reading::{name_verb, READ_VERBS};

use crate::errors::no_panic;

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
        let mut text = String::new();
        let mut ends = Vec::with_capacity(names.len());
        for item in names.iter() {
            let Some(name) = item
                .cast_exact::<PyString>()
                .ok()
                .and_then(|s| s.to_str().ok())
            else {
                return Ok(None);
            };
            text.push_str(name);
            ends.push(text.len());
        }
        Ok(Some(py.detach(|| {
            let mut start = 0;
            let mut found = Vec::new();
            for (i, &end) in ends.iter().enumerate() {
                if name_verb(&text[start..end]).is_some_and(|v| READ_VERBS.contains(&v)) {
                    found.push(i);
                }
                start = end;
            }
            found
        })))
    })
}
