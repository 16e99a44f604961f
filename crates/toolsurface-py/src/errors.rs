//! A Rust panic or a core error as the Python exception the caller sees: every entry point
//! runs its Rust work through [`guard`] or [`no_panic`], so no panic crosses into Python.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use toolsurface_core as core;

/// What an entry point reports as `ValueError`: the core's typed error, or a check of the
/// binding's own on a Python argument (`args.rs`). Either way the message is the text
/// Python callers get, the pure engine's.
#[derive(Debug)]
pub(crate) enum Failure {
    Core(core::Error),
    Arg(String),
}

impl From<core::Error> for Failure {
    fn from(e: core::Error) -> Self {
        Failure::Core(e)
    }
}

impl From<String> for Failure {
    fn from(msg: String) -> Self {
        Failure::Arg(msg)
    }
}

impl Failure {
    pub(crate) fn into_py(self) -> PyErr {
        match self {
            Failure::Core(e) => PyValueError::new_err(e.to_string()),
            Failure::Arg(msg) => PyValueError::new_err(msg),
        }
    }
}

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
pub(crate) fn panic_error(payload: Box<dyn Any + Send>) -> PyErr {
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
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T, Failure>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(failure)) => Err(failure.into_py()),
        Err(payload) => Err(panic_error(payload)),
    }
}
