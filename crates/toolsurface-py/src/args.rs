//! Python arguments as the core's values: scoring settings, ints, document ids, `k`, and
//! the optional lexicon and filter arguments.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use toolsurface_core as core;

use crate::errors::Failure;
use crate::filter::PyFilter;
use crate::lexicon::PyLexicon;

/// The scoring settings of a call, checked: the per-field values' count
/// (`Settings::from_fields`), then their ranges.
pub(crate) fn settings(
    weights: &[f64],
    b: &[f64],
    k1: f64,
    expansion_weight: f64,
) -> Result<core::Settings, Failure> {
    let s = core::Settings::from_fields(weights, b, k1, expansion_weight)?;
    s.validate()?;
    Ok(s)
}

/// A Python int as i64, saturating (an id or `k` beyond i64 is out of range either way).
pub(crate) fn int_arg(value: &Bound<'_, PyInt>) -> PyResult<i64> {
    match value.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => Ok(if value.lt(0)? { i64::MIN } else { i64::MAX }),
    }
}

/// A document id argument: out of range (with the caller's text) when it does not fit.
pub(crate) fn doc_arg(value: &Bound<'_, PyInt>, n: usize) -> PyResult<i64> {
    match value.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => Err(PyValueError::new_err(format!(
            "document id {value} out of range 0..{n}"
        ))),
    }
}

pub(crate) fn check_k(k: i64) -> Result<usize, String> {
    if k < 0 {
        return Err(format!("k must be >= 0, got {k}"));
    }
    Ok(usize::try_from(k).unwrap_or(usize::MAX))
}

pub(crate) fn lex(lexicon: &Option<PyRef<'_, PyLexicon>>) -> Option<Arc<core::Lexicon>> {
    lexicon.as_ref().map(|l| Arc::clone(&l.inner))
}

pub(crate) fn filt(allowed: &Option<PyRef<'_, PyFilter>>) -> Option<Arc<core::Filter>> {
    allowed.as_ref().map(|f| Arc::clone(&f.inner))
}
