//! The `Aliases` class.

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

use crate::analyzer::PyAnalyzer;
use crate::errors::guard;

/// Group names and aliases as analysed terms (`Index.mentions` matches queries to them).
#[pyclass(frozen, module = "toolsurface._native", name = "Aliases")]
pub(crate) struct PyAliases {
    pub(crate) inner: Arc<core::Aliases>,
}

#[pymethods]
impl PyAliases {
    /// `entries`: `(group number, analysed terms)` per name or alias.
    #[new]
    fn new(entries: Vec<(u32, Vec<String>)>) -> PyResult<Self> {
        guard(|| {
            Ok(PyAliases {
                inner: Arc::new(core::Aliases::new(entries)),
            })
        })
    }

    /// Aliases from raw texts: `texts[i]` (a group name or alias) analysed by `analyzer` and
    /// kept for group `groups[i]`; one with no index terms is left out, as in `new`.
    ///
    /// One call for the whole table: at 100,000 groups a list of terms per alias made in
    /// Python (and its collections by the cyclic collector) cost seconds. The analysis runs
    /// without the interpreter's lock.
    #[staticmethod]
    fn analysed(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        groups: Vec<u32>,
        texts: Vec<String>,
    ) -> PyResult<Self> {
        if groups.len() != texts.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "Aliases.analysed: {} group numbers for {} texts",
                groups.len(),
                texts.len()
            )));
        }
        let analyzer = Arc::clone(&analyzer.inner);
        guard(|| {
            let inner = py.detach(|| {
                let entries = groups
                    .into_iter()
                    .zip(&texts)
                    .map(|(g, text)| (g, analyzer.tokens(text)))
                    .collect();
                core::Aliases::new(entries)
            });
            Ok(PyAliases {
                inner: Arc::new(inner),
            })
        })
    }

    /// The number of aliases kept (empty ones and repeats left out).
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}
