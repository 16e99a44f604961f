//! The `Filter` class.

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

/// The set of document ids a search may return (made by `Index.make_filter`).
#[pyclass(frozen, module = "toolsurface._native", name = "Filter")]
pub(crate) struct PyFilter {
    pub(crate) inner: Arc<core::Filter>,
}
