//! `tool_fields`: a tool's five field texts in one Rust pass over its description and its
//! input schema (the walk of `retrieval/fields.py`), or `None` to leave the tool to Python.

use std::borrow::Cow;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use toolsurface_core as core;

use crate::errors::no_panic;
use crate::json::json_scalar;

/// What a schema value is to the parameter walk of `retrieval/fields.py`.
enum Node<'a, 'py> {
    /// A plain `dict`: walked.
    Map(&'a Bound<'py, PyDict>),
    /// A JSON value that is no mapping (`str`, `int`, `float`, `bool`, `None`, `list`).
    Leaf,
    /// Anything else (a `Mapping` that is no plain dict, a subclass): Python decides.
    Other,
}

fn node<'a, 'py>(value: &'a Bound<'py, PyAny>) -> Node<'a, 'py> {
    if let Ok(map) = value.cast_exact::<PyDict>() {
        Node::Map(map)
    } else if json_scalar(value) || value.is_exact_instance_of::<PyList>() {
        Node::Leaf
    } else {
        Node::Other
    }
}

/// Lines joined by `\n` as Python's `"\n".join` joins them (an empty line counts).
#[derive(Default)]
struct Lines {
    text: String,
    count: usize,
}

impl Lines {
    fn push(&mut self, line: &str) {
        if self.count > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.count += 1;
    }
}

/// A plain `str`'s text, or `None` (a subclass, a lone surrogate: Python decides).
///
/// An ASCII string lends its own bytes. Any other is encoded into a temporary: borrowing its
/// UTF-8 would make CPython cache that form inside the string for the string's whole life,
/// and the tool keeps its description and schema (twice their memory for Cyrillic text).
fn plain_str<'a>(value: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    let text = value.cast_exact::<PyString>().ok()?;
    let ascii = text.call_method0(intern!(value.py(), "isascii")).ok()?;
    if ascii.is_truthy().ok()? {
        return text.to_str().ok().map(Cow::Borrowed);
    }
    let utf8 = text.encode_utf8().ok()?;
    std::str::from_utf8(utf8.as_bytes())
        .ok()
        .map(|s| Cow::Owned(s.to_owned()))
}

/// `fields._walk_properties` over plain dicts; `None` where the schema needs Python.
fn walk_properties(
    schema: &Bound<'_, PyDict>,
    depth: usize,
    params: &mut Lines,
    enums: &mut Lines,
) -> Option<()> {
    if depth > 8 {
        return Some(());
    }
    let py = schema.py();
    if let Some(props) = schema.get_item(intern!(py, "properties")).ok()? {
        match node(&props) {
            Node::Map(props) => {
                for (name, prop) in props.iter() {
                    params.push(&plain_str(&name)?);
                    match node(&prop) {
                        Node::Map(prop) => {
                            if let Some(desc) = prop.get_item(intern!(py, "description")).ok()? {
                                if desc.is_exact_instance_of::<PyString>() {
                                    let desc = plain_str(&desc)?;
                                    if !desc.is_empty() {
                                        params.push(&desc);
                                    }
                                } else if desc.is_instance_of::<PyString>() {
                                    return None;
                                }
                            }
                            if let Some(values) = prop.get_item(intern!(py, "enum")).ok()? {
                                if let Ok(values) = values.cast_exact::<PyList>() {
                                    for value in values.iter() {
                                        if value.is_exact_instance_of::<PyString>() {
                                            let value = plain_str(&value)?;
                                            if !value.is_empty() {
                                                enums.push(&value);
                                            }
                                        }
                                    }
                                }
                            }
                            if prop.contains(intern!(py, "properties")).ok()?
                                || prop.contains(intern!(py, "items")).ok()?
                            {
                                walk_properties(prop, depth + 1, params, enums)?;
                            }
                        }
                        Node::Leaf => {}
                        Node::Other => return None,
                    }
                }
            }
            Node::Leaf => {}
            Node::Other => return None,
        }
    }
    if let Some(items) = schema.get_item(intern!(py, "items")).ok()? {
        match node(&items) {
            Node::Map(items) => walk_properties(items, depth + 1, params, enums)?,
            Node::Leaf => {}
            Node::Other => return None,
        }
    }
    Some(())
}

/// Whether `text` has more than `max_chars` characters (code points, as Python counts).
fn over(text: &str, max_chars: usize) -> bool {
    text.len() > max_chars && text.chars().count() > max_chars
}

/// The summary, body and parameter texts of a tool, or `None` (see `tool_fields`).
fn texts_of(
    name: &Bound<'_, PyAny>,
    search_hint: &Bound<'_, PyAny>,
    description: &Bound<'_, PyAny>,
    input_schema: &Bound<'_, PyAny>,
    max_chars: usize,
) -> Option<[String; 3]> {
    let (name, hint) = (plain_str(name)?, plain_str(search_hint)?);
    let schema = input_schema.cast_exact::<PyDict>().ok()?;
    let (mut params, mut enums) = (Lines::default(), Lines::default());
    walk_properties(schema, 0, &mut params, &mut enums)?;
    let (summary, mut body) = core::fields::split_description(&plain_str(description)?)?;
    if enums.count > 0 {
        if !body.is_empty() {
            body.push('\n');
        }
        body.push_str(&enums.text);
    }
    let texts = [&*name, &*hint, &summary, &body, &params.text];
    if texts.iter().any(|t| over(t, max_chars)) {
        return None;
    }
    Some([summary, body, params.text])
}

/// The five field texts of `registry.tool_fields`, or `None` to leave the tool to it.
///
/// One pass in Rust over the plain-`str`, plain-`dict` tools that make nearly every
/// catalogue; it declines (`None`) whatever would need Python to decide: a subclass, a
/// non-dict mapping or other non-JSON value where the walk looks for a mapping, a property
/// name that is no `str`, a lone surrogate, a field over `max_chars`, a description whose
/// first sentence turns on a character outside what `toolsurface_core::fields` knows.
#[pyfunction]
pub(crate) fn tool_fields<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
    search_hint: &Bound<'py, PyAny>,
    description: &Bound<'py, PyAny>,
    input_schema: &Bound<'py, PyAny>,
    max_chars: usize,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let made = no_panic(|| {
        Ok(texts_of(
            name,
            search_hint,
            description,
            input_schema,
            max_chars,
        ))
    })?;
    match made {
        Some([summary, body, params]) => {
            let items: [Bound<'py, PyAny>; 5] = [
                name.clone(),
                search_hint.clone(),
                PyString::new(py, &summary).into_any(),
                PyString::new(py, &body).into_any(),
                PyString::new(py, &params).into_any(),
            ];
            Ok(Some(PyTuple::new(py, items)?))
        }
        None => Ok(None),
    }
}
