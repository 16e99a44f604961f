//! Python arguments as the core's values: scoring settings, ints, document ids, `k`, and
//! the optional lexicon and filter arguments.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use toolsurface_core as core;
use toolsurface_core::N_FIELDS;

use crate::filter::PyFilter;
use crate::lexicon::PyLexicon;

/// Per-field values: five (a caller that predates the learned field: its weight and `b`
/// are then 0, so it scores nothing) or six.
fn per_field(values: &[f64], what: &str) -> Result<[f64; N_FIELDS], String> {
    match values.len() {
        5 | N_FIELDS => Ok(std::array::from_fn(|f| {
            values.get(f).copied().unwrap_or(0.0)
        })),
        _ => Err(format!(
            "{what} take five or six values: name, search_hint, summary, body, params[, learned]"
        )),
    }
}

pub(crate) fn settings(
    weights: &[f64],
    b: &[f64],
    k1: f64,
    expansion_weight: f64,
) -> Result<core::Settings, String> {
    let weights = per_field(weights, "weights and b")?;
    let b = per_field(b, "weights and b")?;
    let s = core::Settings::new(weights, b, k1, expansion_weight);
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
