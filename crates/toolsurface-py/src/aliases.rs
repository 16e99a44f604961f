//! The `Aliases` class.

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

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

    /// The number of aliases kept (empty ones and repeats left out).
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}
