//! `copy_json`: a private deep copy of plain JSON data.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::errors::no_panic;
use crate::json::json_scalar;

/// How deep `copy_json` copies before it leaves the value to Python (which refuses what is
/// too deep to copy or send, or copies it).
const COPY_MAX_DEPTH: usize = 192;

/// The copies made so far, by the address of their original: a dict or list met again (a
/// shared part, a cycle) is the same copy again, as pickle's memo makes it.
type CopyMemo<'py> = HashMap<usize, Bound<'py, PyAny>>;

/// A copy of JSON data with new dicts and lists and the same immutable leaves, or `None`.
fn copy_node<'py>(
    value: &Bound<'py, PyAny>,
    depth: usize,
    memo: &mut CopyMemo<'py>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if depth > COPY_MAX_DEPTH {
        return Ok(None);
    }
    let py = value.py();
    // The address identifies the original while it lives: the caller holds it whole.
    let address = value.as_ptr() as usize;
    if let Ok(map) = value.cast_exact::<PyDict>() {
        if let Some(done) = memo.get(&address) {
            return Ok(Some(done.clone()));
        }
        let out = PyDict::new(py);
        memo.insert(address, out.clone().into_any());
        for (key, item) in map.iter() {
            if !key.is_exact_instance_of::<PyString>() {
                return Ok(None);
            }
            let Some(item) = copy_node(&item, depth + 1, memo)? else {
                return Ok(None);
            };
            out.set_item(key, item)?;
        }
        return Ok(Some(out.into_any()));
    }
    if let Ok(list) = value.cast_exact::<PyList>() {
        if let Some(done) = memo.get(&address) {
            return Ok(Some(done.clone()));
        }
        let out = PyList::empty(py);
        memo.insert(address, out.clone().into_any());
        for item in list.iter() {
            let Some(item) = copy_node(&item, depth + 1, memo)? else {
                return Ok(None);
            };
            out.append(item)?;
        }
        return Ok(Some(out.into_any()));
    }
    Ok(json_scalar(value).then(|| value.clone()))
}

/// A private deep copy of a dict or list of JSON data, or `None` to leave it to Python.
///
/// New dicts and lists, the same immutable leaves (`str` keys, `str`, `int`, `float`,
/// `bool`, `None`); a part shared (or a cycle) stays shared in the copy, as in pickle's:
/// equal to what `models.copy_data` makes, in half the time. Declines anything else (a
/// tuple, a subclass, a key that is no `str`) and nesting past `COPY_MAX_DEPTH`.
#[pyfunction]
pub(crate) fn copy_json<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut memo = CopyMemo::new();
    no_panic(|| copy_node(value, 0, &mut memo))
}
