//! The `Lexicon` class.

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

use crate::analyzer::PyAnalyzer;
use crate::errors::guard;

/// Query expansion lexicon, compiled with an analyzer.
#[pyclass(frozen, module = "toolsurface._native", name = "Lexicon")]
pub(crate) struct PyLexicon {
    pub(crate) inner: Arc<core::Lexicon>,
}

#[pymethods]
impl PyLexicon {
    #[new]
    fn new(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        entries: Vec<(String, String)>,
    ) -> PyResult<Self> {
        let an = Arc::clone(&analyzer.inner);
        guard(|| {
            // A host's lexicon may be large: other threads run while it is built.
            let inner = py.detach(|| core::Lexicon::new(&an, &entries))?;
            Ok(PyLexicon {
                inner: Arc::new(inner),
            })
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}
