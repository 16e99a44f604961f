//! Tool names copied from a Python list into one UTF-8 buffer, for work done on them
//! without the interpreter's lock (another thread may change the list once it is released).

use std::ops::Range;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// The names, one after another, and each one's span in `text`.
pub(crate) struct Names {
    pub(crate) text: String,
    pub(crate) spans: Vec<Range<usize>>,
}

impl Names {
    /// The name at `i`.
    pub(crate) fn get(&self, i: usize) -> &str {
        &self.text[self.spans[i].clone()]
    }
}

/// The names of `list`, or `None` where one is no plain `str` or has a lone surrogate (the
/// caller leaves those lists to Python).
///
/// Borrowed UTF-8, without `plain_str`'s ASCII test (a tenth of a sort's call): tool names
/// are ASCII, and a non-ASCII name only keeps a UTF-8 copy of itself inside (CPython's
/// cache of that form, as any UTF-8 read makes).
pub(crate) fn copied(list: &Bound<'_, PyList>) -> Option<Names> {
    let mut text = String::new();
    let mut spans = Vec::with_capacity(list.len());
    for item in list.iter() {
        let name = item.cast_exact::<PyString>().ok()?.to_str().ok()?;
        spans.push(text.len()..text.len() + name.len());
        text.push_str(name);
    }
    Some(Names { text, spans })
}
