//! A Rust panic or a core error as the Python exception the caller sees: every entry point
//! runs its Rust work through [`guard`] or [`no_panic`], so no panic crosses into Python.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// A Rust panic as the `RuntimeError` Python sees (never `PanicException`).
fn panic_error(payload: Box<dyn Any + Send>) -> PyErr {
    PyRuntimeError::new_err(format!(
        "toolsurface native core failed: {}",
        panic_message(payload.as_ref())
    ))
}

/// Run `f` (which may call into Python), turning a panic into `RuntimeError`.
pub(crate) fn no_panic<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

/// Run `f`, turning the core's error into `ValueError` and a panic into `RuntimeError`.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err(PyValueError::new_err(msg)),
        Err(payload) => Err(panic_error(payload)),
    }
}
