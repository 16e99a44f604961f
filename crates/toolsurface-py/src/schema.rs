//! `tool_fields_packed`: a tool's field texts in one Rust pass over its description and its
//! input schema (the walk of `retrieval/fields.py`), packed as the registry keeps them, or
//! `None` to leave the tool to Python.

use std::borrow::Cow;
use std::collections::HashSet;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use toolsurface_core as core;

use crate::errors::no_panic;
use crate::json::json_scalar;
use crate::packed::pack;

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

/// `str.isascii`, the unbound method: called with the string, it skips the attribute
/// lookup on the instance that `text.isascii()` makes every time.
fn is_ascii(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static IS_ASCII: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    IS_ASCII
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.get_type::<PyString>().getattr("isascii")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// A plain `str`'s text, or `None` (a subclass, a lone surrogate: Python decides).
///
/// An ASCII string lends its own bytes. Any other is encoded into a temporary: borrowing its
/// UTF-8 would make CPython cache that form inside the string for the string's whole life,
/// and the tool keeps its description and schema (twice their memory for Cyrillic text).
fn plain_str<'a>(value: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    let text = value.cast_exact::<PyString>().ok()?;
    let ascii = is_ascii(value.py()).ok()?.call1((text,)).ok()?;
    if ascii.is_truthy().ok()? {
        return text.to_str().ok().map(Cow::Borrowed);
    }
    let utf8 = text.encode_utf8().ok()?;
    std::str::from_utf8(utf8.as_bytes())
        .ok()
        .map(|s| Cow::Owned(s.to_owned()))
}

/// Where a local `$ref` may point: `#/$defs/<name>` or `#/definitions/<name>`.
const DEF_TABLES: [(&str, &str); 2] = [("$defs", "#/$defs/"), ("definitions", "#/definitions/")];
/// Keys whose list members are alternative (or joint) schemas of the same value. Interned,
/// as every key the walk looks up: a key made anew for each lookup is allocated and hashed
/// each time, and a registry walks every tool's schema on each build (docs/performance.md).
fn variant_keys(py: Python<'_>) -> [&Bound<'_, PyString>; 3] {
    [
        intern!(py, "anyOf"),
        intern!(py, "oneOf"),
        intern!(py, "allOf"),
    ]
}

/// Keys that give a parameter's schema more to walk (`fields._links`).
fn link_keys(py: Python<'_>) -> [&Bound<'_, PyString>; 6] {
    [
        intern!(py, "properties"),
        intern!(py, "items"),
        intern!(py, "$ref"),
        intern!(py, "anyOf"),
        intern!(py, "oneOf"),
        intern!(py, "allOf"),
    ]
}

/// One schema walk of `fields._Walk`: the root a `$ref` resolves in, the definitions
/// already followed, the schema objects already walked (by address: a host may share
/// parts, and no object is walked twice), and the two texts it makes. Every method
/// returns `None` where the schema needs Python.
struct Walk<'a, 'py> {
    root: &'a Bound<'py, PyDict>,
    seen: HashSet<String>,
    nodes: HashSet<usize>,
    params: Lines,
    enums: Lines,
}

impl<'py> Walk<'_, 'py> {
    /// The local definition `reference` names the first time it is met: `Some(None)` when
    /// there is none to follow (not a plain `str`, seen, not local, missing, not a mapping).
    fn target(&mut self, reference: &Bound<'py, PyAny>) -> Option<Option<Bound<'py, PyDict>>> {
        if !reference.is_exact_instance_of::<PyString>() {
            return Some(None);
        }
        let reference = plain_str(reference)?;
        if self.seen.contains(&*reference) {
            return Some(None);
        }
        let Some((table_key, prefix)) = DEF_TABLES
            .iter()
            .find(|(_, prefix)| reference.starts_with(prefix))
        else {
            return Some(None);
        };
        let Some(table) = self.root.get_item(*table_key).ok()? else {
            return Some(None);
        };
        let table = match node(&table) {
            Node::Map(table) => table.clone(),
            Node::Leaf => return Some(None),
            Node::Other => return None,
        };
        let Some(found) = table.get_item(&reference[prefix.len()..]).ok()? else {
            return Some(None);
        };
        match node(&found) {
            Node::Map(found) => {
                self.seen.insert(reference.into_owned());
                Some(Some(found.clone()))
            }
            Node::Leaf => Some(None),
            Node::Other => None,
        }
    }

    /// `fields._Walk.add_enum`: a node's non-empty plain-`str` `enum` values.
    fn add_enum(&mut self, node: &Bound<'py, PyDict>) -> Option<()> {
        let py = node.py();
        if let Some(values) = node.get_item(intern!(py, "enum")).ok()? {
            if let Ok(values) = values.cast_exact::<PyList>() {
                for value in values.iter() {
                    if value.is_exact_instance_of::<PyString>() {
                        let value = plain_str(&value)?;
                        if !value.is_empty() {
                            self.enums.push(&value);
                        }
                    }
                }
            }
        }
        Some(())
    }

    /// `fields._walk_schema` over plain dicts: properties, `items`, `$ref`, variants.
    fn schema(&mut self, schema: &Bound<'py, PyDict>, depth: usize) -> Option<()> {
        // The objects stay alive for the whole walk (the tool holds them), so an address
        // names one object throughout.
        if depth > 8 || !self.nodes.insert(schema.as_ptr() as usize) {
            return Some(());
        }
        let py = schema.py();
        if let Some(props) = schema.get_item(intern!(py, "properties")).ok()? {
            match node(&props) {
                Node::Map(props) => {
                    for (name, prop) in props.iter() {
                        self.params.push(&plain_str(&name)?);
                        match node(&prop) {
                            Node::Map(prop) => self.property(prop, depth)?,
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
                Node::Map(items) => {
                    self.add_enum(items)?;
                    self.schema(items, depth + 1)?;
                }
                Node::Leaf => {}
                Node::Other => return None,
            }
        }
        // A definition too deep to walk is not used up.
        if depth < 8 {
            if let Some(reference) = schema.get_item(intern!(py, "$ref")).ok()? {
                if let Some(found) = self.target(&reference)? {
                    self.add_enum(&found)?;
                    self.schema(&found, depth + 1)?;
                }
            }
        }
        for key in variant_keys(py) {
            let Some(members) = schema.get_item(key).ok()? else {
                continue;
            };
            let Ok(members) = members.cast_exact::<PyList>() else {
                continue;
            };
            for member in members.iter() {
                match node(&member) {
                    Node::Map(member) => {
                        self.add_enum(member)?;
                        self.schema(member, depth + 1)?;
                    }
                    Node::Leaf => {}
                    Node::Other => return None,
                }
            }
        }
        Some(())
    }

    /// One parameter of a `properties` map: its description, its `enum`, what it nests.
    fn property(&mut self, prop: &Bound<'py, PyDict>, depth: usize) -> Option<()> {
        let py = prop.py();
        if let Some(desc) = prop.get_item(intern!(py, "description")).ok()? {
            if desc.is_exact_instance_of::<PyString>() {
                let desc = plain_str(&desc)?;
                if !desc.is_empty() {
                    self.params.push(&desc);
                }
            } else if desc.is_instance_of::<PyString>() {
                return None;
            }
        }
        self.add_enum(prop)?;
        for key in link_keys(py) {
            if prop.contains(key).ok()? {
                return self.schema(prop, depth + 1);
            }
        }
        Some(())
    }
}

/// Whether `text` has more than `max_chars` characters (code points, as Python counts).
fn over(text: &str, max_chars: usize) -> bool {
    text.len() > max_chars && text.chars().count() > max_chars
}

/// The search hint, summary, body and parameter texts of a tool, or `None` (see
/// `tool_fields_packed`).
fn texts_of<'a>(
    name: &Bound<'_, PyAny>,
    search_hint: &'a Bound<'_, PyAny>,
    description: &Bound<'_, PyAny>,
    input_schema: &Bound<'_, PyAny>,
    max_chars: usize,
) -> Option<(Cow<'a, str>, [String; 3])> {
    let (name, hint) = (plain_str(name)?, plain_str(search_hint)?);
    let schema = input_schema.cast_exact::<PyDict>().ok()?;
    let mut walk = Walk {
        root: schema,
        seen: HashSet::new(),
        nodes: HashSet::new(),
        params: Lines::default(),
        enums: Lines::default(),
    };
    walk.schema(schema, 0)?;
    let (params, enums) = (walk.params, walk.enums);
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
    Some((hint, [summary, body, params.text]))
}

/// The field texts of `registry.tool_fields` but the name (the tool's own), packed as the
/// registry keeps them (`packed.rs`), or `None` to leave the tool to Python.
///
/// One pass in Rust over the plain-`str`, plain-`dict` tools that make nearly every
/// catalogue; it declines (`None`) whatever would need Python to decide: a subclass, a
/// non-dict mapping or other non-JSON value where the walk looks for a mapping, a property
/// name that is no `str`, a lone surrogate, a field over `max_chars`, a description whose
/// first sentence turns on a character outside what `toolsurface_core::fields` knows.
#[pyfunction]
pub(crate) fn tool_fields_packed<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
    search_hint: &Bound<'py, PyAny>,
    description: &Bound<'py, PyAny>,
    input_schema: &Bound<'py, PyAny>,
    max_chars: usize,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
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
        Some((hint, [summary, body, params])) => pack(py, [&hint, &summary, &body, &params]),
        None => Ok(None),
    }
}
