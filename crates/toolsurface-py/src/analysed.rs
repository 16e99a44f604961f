//! The `AnalysedDocs` class: a part of a catalogue's documents analysed by `Index.analyse`,
//! held until `Index.assembled` makes the index of all the parts.

use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use toolsurface_core as core;

/// Documents analysed for an index build, used once (by `Index.assembled`).
#[pyclass(frozen, module = "toolsurface._native", name = "AnalysedDocs")]
pub(crate) struct PyAnalysedDocs {
    /// `None` once assembled: the analysis is moved into the index, not copied.
    inner: Mutex<Option<core::AnalysedDocs>>,
    /// How many documents it held (kept for `len` after it is used).
    docs: usize,
}

impl PyAnalysedDocs {
    /// The part of `docs` analysed.
    pub(crate) fn new(docs: core::AnalysedDocs) -> Self {
        let n = docs.len();
        PyAnalysedDocs {
            inner: Mutex::new(Some(docs)),
            docs: n,
        }
    }

    /// Whether no index was made of it yet.
    pub(crate) fn unused(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The analysis, taken out: a `ValueError` when an index was made of it already.
    pub(crate) fn take(&self) -> PyResult<core::AnalysedDocs> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| {
                PyValueError::new_err("these analysed documents are in an index already")
            })
    }
}

#[pymethods]
impl PyAnalysedDocs {
    fn __len__(&self) -> usize {
        self.docs
    }
}
