//! `read_snapshot`: a current-version surface snapshot's JSON read and checked in one pass.
//!
//! A stateless host restores its session's snapshot on every request, and reading it
//! through the pydantic model (`surface/snapshot.py`'s `SurfaceSnapshot`: a model per
//! loaded row, then the rows' checks in Python) cost half of a restore and plan. This reads
//! the same JSON into plain values.
//!
//! Invariant: what this accepts, the model accepts with the same values. It accepts a
//! subset: anything else (another version, a field out of bounds, rows that disagree, a
//! lone surrogate, JSON nested past serde_json's limit) is `None`, and the model reads the
//! text and names the field at fault. A key given twice counts as its last value, as in
//! the model.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};

use crate::errors::no_panic;

/// A clock, an order or a last use above this is refused (`MAX_COUNTER`).
const MAX_COUNTER: u64 = 1 << 53;
/// Rows, held-back groups or rules groups a snapshot lists at most (`MAX_ROWS`).
const MAX_ROWS: usize = 100_000;
/// Called members a group row lists at most (`MAX_CALLED_TOOLS`).
const MAX_CALLED_TOOLS: usize = 4_096;
/// A tool or group name's length in characters.
const MAX_NAME: usize = 128;
/// A session id's length in characters.
const MAX_SESSION: usize = 256;
/// The only version read here (`SNAPSHOT_VERSION`); older ones are lifted by the model.
const VERSION: u64 = 3;
const HOWS: [&str; 5] = ["search", "select", "group", "seed", "blind"];
const KINDS: [&str; 2] = ["tool", "group"];

/// A JSON string, borrowed from the text where it has no escape.
#[derive(Debug, PartialEq)]
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        // A number, a boolean or null is no string here (the model is strict).
        d.deserialize_str(V)
    }
}

impl Text<'_> {
    fn str(&self) -> &str {
        &self.0
    }

    /// Its length in characters, as Python counts a str, within `min..=max`.
    fn within(&self, min: usize, max: usize) -> bool {
        (min..=max).contains(&self.0.chars().count())
    }
}

/// A loaded row, fields in the model's order.
#[derive(Debug, PartialEq)]
struct Row<'a> {
    called: bool,
    called_tools: Vec<Text<'a>>,
    how: Text<'a>,
    kind: Text<'a>,
    last_use: u64,
    name: Text<'a>,
    order: u64,
}

/// A snapshot, fields in the model's (key) order; the version is always `VERSION`.
#[derive(Debug, PartialEq)]
pub(crate) struct Snapshot<'a> {
    catalogue_rules: Option<Vec<Text<'a>>>,
    clock: u64,
    held_back: Vec<Text<'a>>,
    loaded: Vec<Row<'a>>,
    mark: Text<'a>,
    order: u64,
    rules_given: Vec<Text<'a>>,
    seal: Option<Text<'a>>,
    session_id: Text<'a>,
}

/// What the reader refuses: the model then reads the text and names the fault.
fn refused<E: Error>() -> E {
    E::custom("left to the model")
}

/// `value` when it holds, else the refusal.
fn held<T, E: Error>(value: T, ok: bool) -> Result<T, E> {
    if ok {
        Ok(value)
    } else {
        Err(refused())
    }
}

fn counter<E: Error>(n: u64) -> Result<u64, E> {
    held(n, n <= MAX_COUNTER)
}

fn names<E: Error>(items: Vec<Text<'_>>, most: usize) -> Result<Vec<Text<'_>>, E> {
    let ok = items.len() <= most && items.iter().all(|t| t.within(1, MAX_NAME));
    held(items, ok)
}

fn hex<E: Error>(text: Text<'_>, len: usize) -> Result<Text<'_>, E> {
    let s = text.str();
    let ok = s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    held(text, ok)
}

fn one_of<'a, E: Error>(text: Text<'a>, allowed: &[&str]) -> Result<Text<'a>, E> {
    let ok = allowed.contains(&text.str());
    held(text, ok)
}

/// The field a key names, once read; a key given twice counts as its last value, as in
/// the model.
fn set<T>(slot: &mut Option<T>, value: T) {
    *slot = Some(value);
}

fn required<T, E: Error>(slot: Option<T>) -> Result<T, E> {
    slot.ok_or_else(refused)
}

impl<'de> Deserialize<'de> for Row<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Row<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a loaded row")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Row<'de>, A::Error> {
                let (mut called, mut called_tools, mut how, mut kind) = (None, None, None, None);
                let (mut last_use, mut name, mut order) = (None, None, None);
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    match key.str() {
                        "called" => set(&mut called, map.next_value::<bool>()?),
                        "called_tools" => set(&mut called_tools, map.next_value()?),
                        "how" => set(&mut how, map.next_value()?),
                        "kind" => set(&mut kind, map.next_value()?),
                        "last_use" => set(&mut last_use, map.next_value::<u64>()?),
                        "name" => set(&mut name, map.next_value()?),
                        "order" => set(&mut order, map.next_value::<u64>()?),
                        _ => return Err(refused()),
                    }
                }
                let name: Text<'de> = required(name)?;
                let ok = name.within(1, MAX_NAME);
                Ok(Row {
                    called: required(called)?,
                    called_tools: names(called_tools.unwrap_or_default(), MAX_CALLED_TOOLS)?,
                    how: one_of(required(how)?, &HOWS)?,
                    kind: one_of(required(kind)?, &KINDS)?,
                    last_use: counter(required(last_use)?)?,
                    name: held(name, ok)?,
                    order: counter(required(order)?)?,
                })
            }
        }
        // An object only: a derived reader would take a row written as an array too.
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Snapshot<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Snapshot<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a snapshot")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Snapshot<'de>, A::Error> {
                let (mut catalogue_rules, mut clock, mut held_back) = (None, None, None);
                let (mut loaded, mut mark, mut order, mut rules_given) = (None, None, None, None);
                let (mut seal, mut session_id, mut version) = (None, None, None);
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    match key.str() {
                        "catalogue_rules" => set(&mut catalogue_rules, map.next_value()?),
                        "clock" => set(&mut clock, map.next_value::<u64>()?),
                        "held_back" => set(&mut held_back, map.next_value()?),
                        "loaded" => set(&mut loaded, map.next_value::<Vec<Row<'de>>>()?),
                        "mark" => set(&mut mark, map.next_value()?),
                        "order" => set(&mut order, map.next_value::<u64>()?),
                        "rules_given" => set(&mut rules_given, map.next_value()?),
                        "seal" => set(&mut seal, map.next_value::<Option<Text<'de>>>()?),
                        "session_id" => set(&mut session_id, map.next_value()?),
                        "version" => set(&mut version, map.next_value::<u64>()?),
                        _ => return Err(refused()),
                    }
                }
                // Required here although the model defaults it: a text without it is an
                // older layout.
                held((), version == Some(VERSION))?;
                let catalogue_rules: Option<Vec<Text<'de>>> = required(catalogue_rules)?;
                let loaded: Vec<Row<'de>> = required(loaded)?;
                let session_id: Text<'de> = required(session_id)?;
                let ok = session_id.within(0, MAX_SESSION);
                let rows_ok = loaded.len() <= MAX_ROWS;
                Ok(Snapshot {
                    catalogue_rules: match catalogue_rules {
                        None => None,
                        Some(c) => Some(names(c, MAX_ROWS)?),
                    },
                    clock: counter(required(clock)?)?,
                    held_back: names(required(held_back)?, MAX_ROWS)?,
                    loaded: held(loaded, rows_ok)?,
                    mark: hex(required(mark)?, 12)?,
                    order: counter(required(order)?)?,
                    rules_given: names(required(rules_given)?, MAX_ROWS)?,
                    seal: match seal.flatten() {
                        None => None,
                        Some(s) => Some(hex(s, 64)?),
                    },
                    session_id: held(session_id, ok)?,
                })
            }
        }
        // An object only (see `Row`).
        d.deserialize_map(V)
    }
}

fn unique<'a>(items: impl ExactSizeIterator<Item = &'a str>) -> bool {
    let n = items.len();
    items.collect::<HashSet<_>>().len() == n
}

fn strs<'a>(items: &'a [Text<'_>]) -> impl ExactSizeIterator<Item = &'a str> {
    items.iter().map(Text::str)
}

/// The model's row checks (`_rows_problem`): rows unique by kind and name and by order,
/// under the counters; called members only on group rows, none twice; no group twice in
/// the held-back or rules lists; the catalogue's rules among the rules given.
fn rows_agree(s: &Snapshot<'_>) -> bool {
    let keys: HashSet<(&str, &str)> = s
        .loaded
        .iter()
        .map(|r| (r.kind.str(), r.name.str()))
        .collect();
    let orders: HashSet<u64> = s.loaded.iter().map(|r| r.order).collect();
    let rows_ok = keys.len() == s.loaded.len()
        && orders.len() == s.loaded.len()
        && s.loaded
            .iter()
            .all(|r| r.order <= s.order && r.last_use <= s.clock)
        && s.loaded.iter().all(|r| {
            r.called_tools.is_empty() || (r.kind.str() == "group" && unique(strs(&r.called_tools)))
        });
    let given: HashSet<&str> = strs(&s.rules_given).collect();
    rows_ok
        && unique(strs(&s.held_back))
        && given.len() == s.rules_given.len()
        && s.catalogue_rules
            .iter()
            .flatten()
            .all(|g| given.contains(g.str()))
}

/// The snapshot `text` holds when it is one the model reads as it stands, else `None`.
pub(crate) fn read(text: &str) -> Option<Snapshot<'_>> {
    let snap: Snapshot<'_> = serde_json::from_str(text).ok()?;
    rows_agree(&snap).then_some(snap)
}

fn py_names<'py>(py: Python<'py>, names: &[Text<'_>]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, names.iter().map(|n| PyString::new(py, n.str())))
}

/// A current-version snapshot's fields, in the model's key order, loaded rows as tuples
/// in theirs; or `None`, which leaves the text to the model (its errors name the field).
///
/// `text` that is no `str` of valid Unicode (a lone surrogate) is `None` too.
#[pyfunction]
pub(crate) fn read_snapshot<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    no_panic(|| {
        let Ok(text) = text.to_str() else {
            return Ok(None);
        };
        let Some(s) = read(text) else {
            return Ok(None);
        };
        let rows = s
            .loaded
            .iter()
            .map(|r| {
                (
                    r.called,
                    py_names(py, &r.called_tools)?,
                    r.how.str(),
                    r.kind.str(),
                    r.last_use,
                    r.name.str(),
                    r.order,
                )
                    .into_pyobject(py)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let catalogue = match &s.catalogue_rules {
            None => None,
            Some(c) => Some(py_names(py, c)?),
        };
        let fields = (
            catalogue,
            s.clock,
            py_names(py, &s.held_back)?,
            PyList::new(py, rows)?,
            s.mark.str(),
            s.order,
            py_names(py, &s.rules_given)?,
            s.seal.as_ref().map(Text::str),
            s.session_id.str(),
        );
        Ok(Some(fields.into_pyobject(py)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"catalogue_rules":["gh"],"clock":4,"held_back":["a","b"],
        "loaded":[{"called":true,"called_tools":["gh__x"],"how":"group","kind":"group",
        "last_use":4,"name":"gh","order":1},{"called":false,"how":"select","kind":"tool",
        "last_use":2,"name":"fs__read","order":2}],"mark":"0123456789ab","order":2,
        "rules_given":["gh"],"seal":null,"session_id":"s","version":3}"#;

    /// `GOOD` on one line (its breaks are only for reading).
    fn good() -> String {
        GOOD.replace("\n        ", "")
    }

    fn edited(from: &str, to: &str) -> String {
        let good = good();
        assert!(good.contains(from), "{from}");
        good.replacen(from, to, 1)
    }

    #[test]
    fn reads_a_good_snapshot() {
        let text = good();
        let s = read(&text).expect("reads");
        assert_eq!(s.loaded.len(), 2);
        assert_eq!(
            strs(&s.loaded[0].called_tools).collect::<Vec<_>>(),
            ["gh__x"]
        );
        assert!(s.loaded[1].called_tools.is_empty());
        assert_eq!(
            s.catalogue_rules
                .as_deref()
                .map(|c| strs(c).collect::<Vec<_>>()),
            Some(vec!["gh"])
        );
    }

    #[test]
    fn the_last_of_a_repeated_key_counts() {
        let text = edited(r#""clock":4"#, r#""clock":1,"clock":4"#);
        let s = read(&text).expect("reads");
        assert_eq!(s.clock, 4);
    }

    #[test]
    fn leaves_to_the_model_what_it_may_refuse() {
        for (from, to) in [
            (r#""version":3"#, r#""version":2"#),
            (r#","version":3"#, ""),
            (r#""clock":4"#, r#""clock":4.0"#),
            (r#""clock":4"#, r#""clock":"4""#),
            (r#""clock":4"#, r#""clock":true"#),
            (r#""clock":4"#, r#""clock":9007199254740993"#),
            (r#""clock":4"#, r#""clock":-1"#),
            (r#""clock":4"#, r#""clock":1"#),
            (r#""mark":"0123456789ab""#, r#""mark":"0123456789AB""#),
            (r#""mark":"0123456789ab""#, r#""mark":"0123456789a""#),
            (r#""seal":null"#, r#""seal":"00""#),
            (r#""held_back":["a","b"]"#, r#""held_back":["a","a"]"#),
            (r#""held_back":["a","b"]"#, r#""held_back":["a",""]"#),
            (r#""held_back":["a","b"]"#, r#""held_back":["a",1]"#),
            (r#""rules_given":["gh"]"#, r#""rules_given":["gh","gh"]"#),
            (r#""rules_given":["gh"]"#, r#""rules_given":["hg"]"#),
            (r#""catalogue_rules":["gh"],"#, ""),
            (r#""how":"group""#, r#""how":"grouped""#),
            (r#""kind":"tool""#, r#""kind":"tools""#),
            (
                r#""called_tools":["gh__x"]"#,
                r#""called_tools":["gh__x","gh__x"]"#,
            ),
            (r#""called":true"#, r#""called":1"#),
            (r#""order":2,"#, r#""order":1,"#),
            (r#""session_id":"s""#, r#""session_id":"s","extra":1"#),
            (r#""name":"fs__read""#, r#""name":"fs__read","x":0"#),
        ] {
            assert!(read(&edited(from, to)).is_none(), "{from} -> {to}");
        }
        assert!(read("[]").is_none());
        assert!(read(&format!("{} x", good())).is_none());
    }

    #[test]
    fn names_are_counted_in_characters() {
        let long = "é".repeat(128);
        let ok = edited(r#"["a","b"]"#, &format!(r#"["a","{long}"]"#));
        assert!(read(&ok).is_some());
        let over = edited(r#"["a","b"]"#, &format!(r#"["a","{long}é"]"#));
        assert!(read(&over).is_none());
    }

    #[test]
    fn a_row_given_as_an_array_is_left_to_the_model() {
        let text = edited(
            r#"{"called":false,"how":"select","kind":"tool","last_use":2,"name":"fs__read","order":2}"#,
            r#"[false,[],"select","tool",2,"fs__read",2]"#,
        );
        assert!(read(&text).is_none());
    }
}
