//! `copy_json`: a private deep copy of plain JSON data.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString};

use crate::errors::no_panic;
use crate::json::json_scalar;

/// How deep `copy_json` copies before it leaves the value to Python (which refuses what is
/// too deep to copy or send, or copies it).
const COPY_MAX_DEPTH: usize = 192;

/// The copies made so far, by the address of their original: a dict or list met again (a
/// shared part) is the same copy again, as pickle's memo makes it. The flag says whether the
/// original is still being copied: met again then, it is a cycle, which JSON cannot send.
type CopyMemo<'py> = HashMap<usize, (Bound<'py, PyAny>, bool)>;

/// The largest integer magnitude sent as it is (JSON parsers past 64 bits disagree).
const INT_MAX_BITS: u32 = 64;

/// Whether a JSON scalar can be sent as standard JSON: a finite float, a string that encodes
/// as UTF-8 (no lone surrogate), an integer within `INT_MAX_BITS`.
fn sendable(value: &Bound<'_, PyAny>) -> bool {
    if let Ok(x) = value.cast_exact::<PyFloat>() {
        return x.value().is_finite();
    }
    if let Ok(text) = value.cast_exact::<PyString>() {
        return text.to_str().is_ok();
    }
    if value.is_exact_instance_of::<PyInt>() {
        return value
            .extract::<i128>()
            .is_ok_and(|n| n.unsigned_abs() >> INT_MAX_BITS == 0);
    }
    true
}

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
        if let Some((done, open)) = memo.get(&address) {
            return Ok((!open).then(|| done.clone()));
        }
        let out = PyDict::new(py);
        memo.insert(address, (out.clone().into_any(), true));
        for (key, item) in map.iter() {
            if !key.is_exact_instance_of::<PyString>() || !sendable(&key) {
                return Ok(None);
            }
            let Some(item) = copy_node(&item, depth + 1, memo)? else {
                return Ok(None);
            };
            out.set_item(key, item)?;
        }
        memo.insert(address, (out.clone().into_any(), false));
        return Ok(Some(out.into_any()));
    }
    if let Ok(list) = value.cast_exact::<PyList>() {
        if let Some((done, open)) = memo.get(&address) {
            return Ok((!open).then(|| done.clone()));
        }
        let out = PyList::empty(py);
        memo.insert(address, (out.clone().into_any(), true));
        for item in list.iter() {
            let Some(item) = copy_node(&item, depth + 1, memo)? else {
                return Ok(None);
            };
            out.append(item)?;
        }
        memo.insert(address, (out.clone().into_any(), false));
        return Ok(Some(out.into_any()));
    }
    Ok((json_scalar(value) && sendable(value)).then(|| value.clone()))
}

/// A private deep copy of a dict or list of JSON data, or `None` to leave it to Python.
///
/// New dicts and lists, the same immutable leaves (`str` keys, `str`, `int`, `float`,
/// `bool`, `None`); a part shared stays shared in the copy, as in pickle's: equal to what
/// `models.copy_data` makes, in half the time. Declines anything else (a tuple, a subclass,
/// a key that is no `str`), nesting past `COPY_MAX_DEPTH`, and what standard JSON cannot
/// carry (a cycle, NaN or an infinity, a lone surrogate, an integer past 64 bits): a value
/// it copies is sendable as it is, and Python names the fault in one it declines.
#[pyfunction]
pub(crate) fn copy_json<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut memo = CopyMemo::new();
    no_panic(|| copy_node(value, 0, &mut memo))
}
