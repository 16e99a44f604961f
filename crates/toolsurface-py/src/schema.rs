//! `tool_fields_packed`: a tool's field texts in one Rust pass over its description and its
//! input schema (the walk of `retrieval/fields.py`), packed as the registry keeps them, or
//! `None` to leave the tool to Python.
//!
//! The walk reads a schema dict's keys in one of two ways, with the same result:
//!
//! - fast: one pass over the dict's items (`PyDict_Next`), each key told by its text, where
//!   looking up each of the (up to eight) keys the walk asks about would probe the dict once
//!   a key. It takes only dicts every key of which is a plain `str`: such a dict's lookups
//!   run no Python code (a plain `str` compares and hashes in C), so one pass finds just
//!   what the lookups would, and the whole fast walk calls nothing but C functions of
//!   `dict` and `str`: no `__eq__`, `__hash__` or other Python code, nothing that could
//!   change a schema under it.
//! - lookup: each key looked up when the walk needs it (Python's `dict.get` and `in`),
//!   with whatever Python code a key's `__eq__` and `__hash__` run, at the same points and
//!   in the same order as `fields._walk_schema` looks.
//!
//! A tool is walked fast first; at the first dict with a key that is no plain `str` (a
//! subclass, an `int`, any object) the fast walk gives up and the tool is walked again from
//! the start by lookup. As the fast walk ran no Python code, nothing it did can show, and the
//! tool gets exactly what the lookup walk alone gives it.

use std::borrow::{Borrow, Cow};
use std::cell::Cell;
use std::collections::HashSet;
use std::hash::Hash;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::critical_section::with_critical_section;
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

    fn clear(&mut self) {
        self.text.clear();
        self.count = 0;
    }
}

/// `str.isascii`, the unbound method: called with the string, it skips the attribute
/// lookup on the instance that `text.isascii()` makes every time.
fn is_ascii_method(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static IS_ASCII: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    IS_ASCII
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.get_type::<PyString>().getattr("isascii")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// Whether a plain `str` is ASCII (`str.isascii`, which reads a flag of the string).
///
/// Before 3.12 the limited API has no vectorcall, and `call1` builds a tuple for each call;
/// the variadic `PyObject_CallFunctionObjArgs` hands its arguments on as a C array, with no
/// tuple, and this runs for every name, description and enum value of every tool. No
/// function of the limited API reads the flag itself, any that hands out a string's UTF-8
/// caches it (see [`plain_str`]), and copying short strings' code points out
/// (`PyUnicode_AsUCS4`) to look at them measured no faster than this call.
#[allow(unsafe_code)]
fn is_ascii(text: &Bound<'_, PyString>) -> Option<bool> {
    let py = text.py();
    let method = is_ascii_method(py).ok()?;
    // SAFETY: `method` and `text` are live objects, each held by its `Bound` for the whole
    // call; the argument list ends with the null pointer the variadic function requires,
    // and every argument is a `*mut PyObject`, the type it reads them as. The result is a
    // new reference or null with an exception set, which `from_owned_ptr_or_err` takes over.
    let result = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyObject_CallFunctionObjArgs(
                method.as_ptr(),
                text.as_ptr(),
                std::ptr::null_mut::<ffi::PyObject>(),
            ),
        )
    }
    .ok()?;
    result.is_truthy().ok()
}

/// A plain `str`'s text, or `None` (a subclass, a lone surrogate: Python decides).
///
/// An ASCII string lends its own bytes. Any other is encoded into a temporary: borrowing its
/// UTF-8 would make CPython cache that form inside the string for the string's whole life,
/// and the tool keeps its description and schema (twice their memory for Cyrillic text).
fn plain_str<'a>(value: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    let text = value.cast_exact::<PyString>().ok()?;
    if is_ascii(text)? {
        return text.to_str().ok().map(Cow::Borrowed);
    }
    let utf8 = text.encode_utf8().ok()?;
    std::str::from_utf8(utf8.as_bytes())
        .ok()
        .map(|s| Cow::Owned(s.to_owned()))
}

/// Where a local `$ref` may point: `#/$defs/<name>` or `#/definitions/<name>`.
const DEF_TABLES: [(&str, &str); 2] = [("$defs", "#/$defs/"), ("definitions", "#/definitions/")];

/// The keys the walk asks a schema dict about; each names its place in [`Names`].
#[derive(Clone, Copy)]
enum Key {
    Properties,
    Items,
    Ref,
    AnyOf,
    OneOf,
    AllOf,
    Description,
    Enum,
}

/// How many keys [`Key`] names.
const KEYS: usize = 8;

/// Keys whose list members are alternative (or joint) schemas of the same value.
const VARIANT_KEYS: [Key; 3] = [Key::AnyOf, Key::OneOf, Key::AllOf];

/// Keys that give a parameter's schema more to walk (`fields._links`), in its order.
const LINK_KEYS: [Key; 6] = [
    Key::Properties,
    Key::Items,
    Key::Ref,
    Key::AnyOf,
    Key::OneOf,
    Key::AllOf,
];

/// The keys of [`Key`] as Python strings, in the order of its variants, and their hashes.
///
/// Interned, as every key the walk looks up: a key made anew for each lookup is allocated
/// and hashed each time, and a registry walks every tool's schema on each build
/// (docs/performance.md). The hashes let the fast walk pass over a key that is none of
/// these with one call that reads the hash a `str` caches in itself.
struct Names<'py> {
    keys: [&'py Bound<'py, PyString>; KEYS],
    hashes: [isize; KEYS],
}

impl<'py> Names<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let keys = [
            intern!(py, "properties"),
            intern!(py, "items"),
            intern!(py, "$ref"),
            intern!(py, "anyOf"),
            intern!(py, "oneOf"),
            intern!(py, "allOf"),
            intern!(py, "description"),
            intern!(py, "enum"),
        ];
        // A `str`'s hash is fixed for the life of the process (the hash seed is), so one
        // reckoning serves every call.
        static HASHES: PyOnceLock<[isize; KEYS]> = PyOnceLock::new();
        let hashes = *HASHES.get_or_try_init(py, || {
            let mut hashes = [0; KEYS];
            for (hash, key) in hashes.iter_mut().zip(keys) {
                *hash = key.hash()?;
            }
            Ok::<_, PyErr>(hashes)
        })?;
        Ok(Names { keys, hashes })
    }

    fn key(&self, key: Key) -> &'py Bound<'py, PyString> {
        self.keys[key as usize]
    }

    /// The [`Key`] a plain `str` is, by its index. Equal texts hash alike, so a key that
    /// hashes like none of them is none of them; one that does is compared in full.
    ///
    /// Neither step runs Python code or allocates: `str.__hash__` (cached in the string
    /// after its first use as a key) and [`same_text`].
    fn find(&self, key: &Bound<'py, PyString>) -> Step<Option<usize>> {
        // It cannot fail for a plain `str`; were it to, the lookup walk decides.
        let hash = key.hash().map_err(|_| Stop::Lookup)?;
        for (i, &known) in self.hashes.iter().enumerate() {
            if known == hash && same_text(key, self.keys[i])? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}

/// Whether two plain `str`s have the same text: `str.__eq__`, without the recursion check
/// of `PyObject_RichCompare` (which raises, and so allocates, near the recursion limit).
#[allow(unsafe_code)]
fn same_text(a: &Bound<'_, PyString>, b: &Bound<'_, PyString>) -> Step<bool> {
    // SAFETY: both are live `str` objects, held by their `Bound`s (and the GIL or an
    // attached thread, which a `Bound` proves) for the call. For two `str`s
    // `PyUnicode_Compare` compares their code points in C; it calls no Python code.
    match unsafe { ffi::PyUnicode_Compare(a.as_ptr(), b.as_ptr()) } {
        0 => Ok(true),
        // -1 is also how it reports an error (none can arise for two ready `str`s, as
        // every dict key and interned string is); were one set, the lookup walk decides.
        -1 if PyErr::take(a.py()).is_some() => Err(Stop::Lookup),
        _ => Ok(false),
    }
}

/// Why a walk stopped short.
enum Stop {
    /// The schema needs Python: the tool is declined (`None`).
    Decline,
    /// The fast walk met a dict with a key that is no plain `str`: walk by lookup instead.
    Lookup,
}

/// A step of the walk: `Err` ends the walk.
type Step<T = ()> = Result<T, Stop>;

/// How the walk asks a schema dict about its keys (see the module's docs).
enum View<'a, 'py> {
    /// Fast: the values under the keys of [`Key`], read in one pass over the dict.
    Read([Option<Bound<'py, PyAny>>; KEYS]),
    /// By lookup: each key looked up in the dict when asked.
    Lookup(&'a Bound<'py, PyDict>),
}

impl<'py> View<'_, 'py> {
    /// The value under `key`, if the dict has the key (`dict.get`). The walk asks for each
    /// key of a dict once (and may ask [`View::has`] before): a `Read` view hands over
    /// the value it holds, which is gone after.
    fn take(&mut self, names: &Names<'py>, key: Key) -> Step<Option<Bound<'py, PyAny>>> {
        match self {
            View::Read(values) => Ok(values[key as usize].take()),
            View::Lookup(dict) => dict.get_item(names.key(key)).map_err(|_| Stop::Decline),
        }
    }

    /// Whether the dict has `key` (`key in dict`).
    fn has(&self, names: &Names<'py>, key: Key) -> Step<bool> {
        match self {
            View::Read(values) => Ok(values[key as usize].is_some()),
            View::Lookup(dict) => dict.contains(names.key(key)).map_err(|_| Stop::Decline),
        }
    }
}

/// The values under the keys of [`Key`] in `dict`, read in one pass over its items, or
/// `Stop::Lookup` at a key that is no plain `str`.
///
/// It reads the items where the dict keeps them, taking a reference only to a value it
/// keeps: most keys (`type`, `default`, ...) are passed over, and a reference taken and
/// dropped for each key and value cost as much as the pass itself.
#[allow(unsafe_code)]
fn read_keys<'py>(
    dict: &Bound<'py, PyDict>,
    names: &Names<'py>,
) -> Step<[Option<Bound<'py, PyAny>>; KEYS]> {
    let py = dict.py();
    // On a free-threaded build the critical section keeps other threads from changing the
    // dict during the pass (it is no-op where a GIL is).
    with_critical_section(dict.as_any(), || {
        let mut values: [Option<Bound<'py, PyAny>>; KEYS] = Default::default();
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: `dict` is a live dict (its `Bound` holds it, with the GIL or the thread
        // attached), `pos` starts at 0 and is only advanced by `PyDict_Next`, and the out
        // pointers are valid for writes.
        while unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) } != 0 {
            // SAFETY: `PyDict_Next` lends `key` and `value` (non-null): they live while the
            // dict holds them, that is until the dict is changed, and nothing changes it
            // during this pass. The pass runs no Python code and releases neither the GIL
            // nor the critical section: a type check and `Names::find` (the hash of a plain
            // `str` and the comparison of two, in C), which allocate nothing that could
            // start a garbage collection (and with it finalizers). No other thread runs
            // meanwhile where a GIL is, and none changes the dict where none is (the
            // critical section). A kept value is taken as a new reference before the next
            // step; neither pointer is used after the pass.
            let key = unsafe { Borrowed::from_ptr(py, key) };
            let Ok(key) = key.cast_exact::<PyString>() else {
                return Err(Stop::Lookup);
            };
            if let Some(i) = names.find(&key)? {
                // SAFETY: as for `key` above.
                values[i] = Some(unsafe { Borrowed::from_ptr(py, value) }.to_owned());
            }
        }
        Ok(values)
    })
}

/// A set of the few members a walk keeps (a tool's schema nodes, its followed `$ref`s):
/// searched in a short list, as nearly every tool has a handful, and hashed past that, so
/// a schema of thousands of nodes costs no more than a hash set would.
struct FewSet<T> {
    few: Vec<T>,
    many: HashSet<T>,
}

impl<T> Default for FewSet<T> {
    fn default() -> Self {
        FewSet {
            few: Vec::new(),
            many: HashSet::new(),
        }
    }
}

impl<T: Eq + Hash> FewSet<T> {
    /// Members kept in the list before the set moves them into the hash set.
    const FEW: usize = 16;

    fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.few.iter().any(|member| member.borrow() == value) || self.many.contains(value)
    }

    /// Adds `value`; `false` if it was a member already.
    fn insert(&mut self, value: T) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&value) {
                return false;
            }
            if self.few.len() < Self::FEW {
                self.few.push(value);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(value)
    }

    /// Empties the set, keeping the list's room; a hash set that was needed is dropped,
    /// as clearing one costs its full capacity on every later call.
    fn clear(&mut self) {
        self.few.clear();
        if !self.many.is_empty() {
            self.many = HashSet::new();
        }
    }
}

/// The buffers of a walk, kept from one tool to the next: a registry walks every tool on
/// each build, and growing fresh texts and sets for each was a tenth of its time.
#[derive(Default)]
struct Scratch {
    /// The definitions already followed (their `$ref` text).
    seen: FewSet<String>,
    /// The schema objects already walked, by address.
    nodes: FewSet<usize>,
    /// Dicts the fast walk has found to have only plain-`str` keys, by address.
    plain: FewSet<usize>,
    params: Lines,
    enums: Lines,
    /// The body with the enum values after it.
    body: String,
}

impl Scratch {
    /// A text buffer that grew past this (a huge, hostile schema or description) is
    /// dropped after its tool, not kept for the life of the thread.
    const KEEP: usize = 1 << 18;

    fn clear(&mut self) {
        self.seen.clear();
        self.nodes.clear();
        self.plain.clear();
        self.params.clear();
        self.enums.clear();
        self.body.clear();
    }

    fn trim(&mut self) {
        for text in [&mut self.params.text, &mut self.enums.text, &mut self.body] {
            if text.capacity() > Self::KEEP {
                *text = String::new();
            }
        }
    }
}

thread_local! {
    /// This thread's [`Scratch`], out of the cell while a call uses it: a call that starts
    /// inside another (Python code a key's `__eq__` runs may call `tool_fields_packed`)
    /// finds the cell empty and makes its own.
    static SCRATCH: Cell<Option<Box<Scratch>>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's [`Scratch`], emptied.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut scratch = SCRATCH
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default();
    scratch.clear();
    let made = f(&mut scratch);
    scratch.trim();
    // A thread being torn down keeps no scratch: it is dropped here.
    let _ = SCRATCH.try_with(|cell| cell.set(Some(scratch)));
    made
}

/// One schema walk of `fields._Walk`: the root a `$ref` resolves in, how it reads a dict
/// (`fast`, see the module's docs), the keys it asks about, and its buffers: the
/// definitions already followed, the schema objects already walked (by address: a host may
/// share parts, and no object is walked twice), and the two texts it makes.
struct Walk<'a, 'py> {
    root: &'a Bound<'py, PyDict>,
    fast: bool,
    names: Names<'py>,
    scratch: &'a mut Scratch,
}

impl<'py> Walk<'_, 'py> {
    /// How this walk asks `dict` about its keys. The fast walk reads it now, and gives up
    /// (`Stop::Lookup`) if a key is no plain `str`.
    fn view<'d>(&self, dict: &'d Bound<'py, PyDict>) -> Step<View<'d, 'py>> {
        if !self.fast {
            return Ok(View::Lookup(dict));
        }
        read_keys(dict, &self.names).map(View::Read)
    }

    /// `dict.get(key)` for a key the walk makes (a definition's table or name). The fast
    /// walk looks it up only in a dict whose keys are all plain `str`s, where the lookup
    /// runs no Python code.
    fn lookup(&mut self, dict: &Bound<'py, PyDict>, key: &str) -> Step<Option<Bound<'py, PyAny>>> {
        // The objects stay alive for the whole walk (the tool holds them), and the fast
        // walk runs no Python code that could change one, so an address names one dict
        // with the same keys throughout.
        if self.fast && !self.scratch.plain.contains(&(dict.as_ptr() as usize)) {
            if !dict
                .iter()
                .all(|(k, _)| k.is_exact_instance_of::<PyString>())
            {
                return Err(Stop::Lookup);
            }
            self.scratch.plain.insert(dict.as_ptr() as usize);
        }
        dict.get_item(key).map_err(|_| Stop::Decline)
    }

    /// The local definition `reference` names the first time it is met: `None` when there
    /// is none to follow (not a plain `str`, seen, not local, missing, not a mapping).
    fn target(&mut self, reference: &Bound<'py, PyAny>) -> Step<Option<Bound<'py, PyDict>>> {
        if !reference.is_exact_instance_of::<PyString>() {
            return Ok(None);
        }
        let reference = plain_str(reference).ok_or(Stop::Decline)?;
        if self.scratch.seen.contains(&*reference) {
            return Ok(None);
        }
        let Some((table_key, prefix)) = DEF_TABLES
            .iter()
            .find(|(_, prefix)| reference.starts_with(prefix))
        else {
            return Ok(None);
        };
        let Some(table) = self.lookup(self.root, table_key)? else {
            return Ok(None);
        };
        let table = match node(&table) {
            Node::Map(table) => table.clone(),
            Node::Leaf => return Ok(None),
            Node::Other => return Err(Stop::Decline),
        };
        let Some(found) = self.lookup(&table, &reference[prefix.len()..])? else {
            return Ok(None);
        };
        match node(&found) {
            Node::Map(found) => {
                self.scratch.seen.insert(reference.into_owned());
                Ok(Some(found.clone()))
            }
            Node::Leaf => Ok(None),
            Node::Other => Err(Stop::Decline),
        }
    }

    /// `fields._Walk.add_enum`: a node's non-empty plain-`str` `enum` values.
    fn add_enum(&mut self, node: &mut View<'_, 'py>) -> Step {
        if let Some(values) = node.take(&self.names, Key::Enum)? {
            if let Ok(values) = values.cast_exact::<PyList>() {
                for value in values.iter() {
                    if value.is_exact_instance_of::<PyString>() {
                        let value = plain_str(&value).ok_or(Stop::Decline)?;
                        if !value.is_empty() {
                            self.scratch.enums.push(&value);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A schema a link leads to (`items`, a `$ref`'s definition, a variant): its `enum`,
    /// then its walk.
    fn linked(&mut self, schema: &Bound<'py, PyDict>, depth: usize) -> Step {
        let mut view = self.view(schema)?;
        self.add_enum(&mut view)?;
        self.schema(schema, &mut view, depth)
    }

    /// `fields._walk_schema` over plain dicts: properties, `items`, `$ref`, variants.
    fn schema(
        &mut self,
        schema: &Bound<'py, PyDict>,
        view: &mut View<'_, 'py>,
        depth: usize,
    ) -> Step {
        // The objects stay alive for the whole walk (the tool holds them), so an address
        // names one object throughout.
        if depth > 8 || !self.scratch.nodes.insert(schema.as_ptr() as usize) {
            return Ok(());
        }
        if let Some(props) = view.take(&self.names, Key::Properties)? {
            match node(&props) {
                Node::Map(props) => {
                    for (name, prop) in props.iter() {
                        let name = plain_str(&name).ok_or(Stop::Decline)?;
                        self.scratch.params.push(&name);
                        match node(&prop) {
                            Node::Map(prop) => self.property(prop, depth)?,
                            Node::Leaf => {}
                            Node::Other => return Err(Stop::Decline),
                        }
                    }
                }
                Node::Leaf => {}
                Node::Other => return Err(Stop::Decline),
            }
        }
        if let Some(items) = view.take(&self.names, Key::Items)? {
            match node(&items) {
                Node::Map(items) => self.linked(items, depth + 1)?,
                Node::Leaf => {}
                Node::Other => return Err(Stop::Decline),
            }
        }
        // A definition too deep to walk is not used up.
        if depth < 8 {
            if let Some(reference) = view.take(&self.names, Key::Ref)? {
                if let Some(found) = self.target(&reference)? {
                    self.linked(&found, depth + 1)?;
                }
            }
        }
        for key in VARIANT_KEYS {
            let Some(members) = view.take(&self.names, key)? else {
                continue;
            };
            let Ok(members) = members.cast_exact::<PyList>() else {
                continue;
            };
            for member in members.iter() {
                match node(&member) {
                    Node::Map(member) => self.linked(member, depth + 1)?,
                    Node::Leaf => {}
                    Node::Other => return Err(Stop::Decline),
                }
            }
        }
        Ok(())
    }

    /// One parameter of a `properties` map: its description, its `enum`, what it nests.
    fn property(&mut self, prop: &Bound<'py, PyDict>, depth: usize) -> Step {
        let mut view = self.view(prop)?;
        if let Some(desc) = view.take(&self.names, Key::Description)? {
            if desc.is_exact_instance_of::<PyString>() {
                let desc = plain_str(&desc).ok_or(Stop::Decline)?;
                if !desc.is_empty() {
                    self.scratch.params.push(&desc);
                }
            } else if desc.is_instance_of::<PyString>() {
                return Err(Stop::Decline);
            }
        }
        self.add_enum(&mut view)?;
        for key in LINK_KEYS {
            if view.has(&self.names, key)? {
                return self.schema(prop, &mut view, depth + 1);
            }
        }
        Ok(())
    }
}

/// Walks `schema` into `scratch` (its parameter and enum texts); `None` where it needs
/// Python. Fast first, by lookup if the fast walk gives up (see the module's docs).
fn walk_schema(schema: &Bound<'_, PyDict>, scratch: &mut Scratch) -> Option<()> {
    for fast in [true, false] {
        scratch.clear();
        let mut walk = Walk {
            root: schema,
            fast,
            names: Names::new(schema.py()).ok()?,
            scratch: &mut *scratch,
        };
        let walked = walk
            .view(schema)
            .and_then(|mut view| walk.schema(schema, &mut view, 0));
        match walked {
            Ok(()) => return Some(()),
            Err(Stop::Decline) => return None,
            // Only the fast walk gives up so.
            Err(Stop::Lookup) => {}
        }
    }
    None
}

/// Whether `text` has more than `max_chars` characters (code points, as Python counts).
fn over(text: &str, max_chars: usize) -> bool {
    text.len() > max_chars && text.chars().count() > max_chars
}

/// The four packed texts of a tool: search hint, summary, body, parameters.
struct Texts<'a> {
    hint: Cow<'a, str>,
    summary: String,
    body: Cow<'a, str>,
    params: &'a str,
}

/// The search hint, summary, body and parameter texts of a tool, or `None` (see
/// `tool_fields_packed`).
fn texts_of<'a>(
    name: &Bound<'_, PyAny>,
    search_hint: &'a Bound<'_, PyAny>,
    description: &Bound<'_, PyAny>,
    input_schema: &Bound<'_, PyAny>,
    max_chars: usize,
    scratch: &'a mut Scratch,
) -> Option<Texts<'a>> {
    let (name, hint) = (plain_str(name)?, plain_str(search_hint)?);
    let schema = input_schema.cast_exact::<PyDict>().ok()?;
    walk_schema(schema, scratch)?;
    let Scratch {
        params,
        enums,
        body: joined,
        ..
    } = scratch;
    let (summary, body) = core::fields::split_description(&plain_str(description)?)?;
    let body = if enums.count > 0 {
        joined.push_str(&body);
        if !body.is_empty() {
            joined.push('\n');
        }
        joined.push_str(&enums.text);
        Cow::Borrowed(joined.as_str())
    } else {
        Cow::Owned(body)
    };
    let texts = [&*name, &*hint, &summary, &body, &params.text];
    if texts.iter().any(|t| over(t, max_chars)) {
        return None;
    }
    Some(Texts {
        hint,
        summary,
        body,
        params: &params.text,
    })
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
    no_panic(|| {
        with_scratch(|scratch| {
            match texts_of(
                name,
                search_hint,
                description,
                input_schema,
                max_chars,
                scratch,
            ) {
                Some(t) => pack(py, [&t.hint, &t.summary, &t.body, t.params]),
                None => Ok(None),
            }
        })
    })
}
