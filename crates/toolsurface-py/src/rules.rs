//! The `BoostRules` class: a registry's boost rules for one index (`Index.boost_rules`).

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

/// What a search's boosts are made of (groups' aliases and members, read-only documents,
/// question words, factors), held by the core: a `Searcher` bound to them finds and applies
/// a query's boosts in the same call.
#[pyclass(frozen, module = "toolsurface._native", name = "BoostRules")]
pub(crate) struct PyBoostRules {
    pub(crate) inner: Arc<core::BoostRules>,
}
