//! `toolsurface._native`: PyO3 bindings of `toolsurface-core`.
//!
//! Binding code only: it converts types, detaches from the interpreter for index builds
//! and batches (single searches stay attached: they take microseconds), maps the core's
//! errors to `ValueError` and a Rust panic to `RuntimeError` (never `PanicException`).
//! The typed stub is `python/toolsurface/_native.pyi`.
//!
//! Two functions hold `unsafe` code: [`alloc_hit`] makes a search hit as `tuple.__new__`
//! would but without its generic call, for a hit type [`can_alloc_hits`] has admitted;
//! each `unsafe` block says why it is sound.

#![deny(unsafe_code)]

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use toolsurface_core as core;

type Hits = (Vec<u32>, Vec<f64>, bool);

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
fn no_panic<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

/// Run `f`, turning the core's error into `ValueError` and a panic into `RuntimeError`.
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err(PyValueError::new_err(msg)),
        Err(payload) => Err(panic_error(payload)),
    }
}

fn five(values: &[f64], what: &str) -> Result<[f64; 5], String> {
    <[f64; 5]>::try_from(values)
        .map_err(|_| format!("{what} take five values: name, search_hint, summary, body, params"))
}

fn settings(
    weights: &[f64],
    b: &[f64],
    k1: f64,
    expansion_weight: f64,
) -> Result<core::Settings, String> {
    let weights = five(weights, "weights and b")?;
    let b = five(b, "weights and b")?;
    let s = core::Settings::new(weights, b, k1, expansion_weight);
    s.validate()?;
    Ok(s)
}

/// A Python int as i64, saturating (an id or `k` beyond i64 is out of range either way).
fn int_arg(value: &Bound<'_, PyInt>) -> PyResult<i64> {
    match value.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => Ok(if value.lt(0)? { i64::MIN } else { i64::MAX }),
    }
}

/// A document id argument: out of range (with the caller's text) when it does not fit.
fn doc_arg(value: &Bound<'_, PyInt>, n: usize) -> PyResult<i64> {
    match value.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(_) => Err(PyValueError::new_err(format!(
            "document id {value} out of range 0..{n}"
        ))),
    }
}

fn check_k(k: i64) -> Result<usize, String> {
    if k < 0 {
        return Err(format!("k must be >= 0, got {k}"));
    }
    Ok(usize::try_from(k).unwrap_or(usize::MAX))
}

/// Text analysis: character table and stopwords in, index terms out.
#[pyclass(frozen, module = "toolsurface._native", name = "Analyzer")]
struct PyAnalyzer {
    inner: Arc<core::Analyzer>,
}

#[pymethods]
impl PyAnalyzer {
    #[new]
    fn new(char_table: &str, stopwords: Vec<String>) -> PyResult<Self> {
        guard(|| {
            let table = core::CharTable::parse(char_table)?;
            let inner = core::Analyzer::new(table, stopwords.iter().map(String::as_str));
            Ok(PyAnalyzer {
                inner: Arc::new(inner),
            })
        })
    }

    /// Index terms of `text` in order.
    fn tokens(&self, text: &str) -> PyResult<Vec<String>> {
        guard(|| Ok(self.inner.tokens(text)))
    }

    /// `text` folded to lower case through the character table.
    fn fold(&self, text: &str) -> PyResult<String> {
        guard(|| Ok(self.inner.fold(text)))
    }
}

/// Query expansion lexicon, compiled with an analyzer.
#[pyclass(frozen, module = "toolsurface._native", name = "Lexicon")]
struct PyLexicon {
    inner: Arc<core::Lexicon>,
}

#[pymethods]
impl PyLexicon {
    #[new]
    fn new(analyzer: PyRef<'_, PyAnalyzer>, entries: Vec<(String, String)>) -> PyResult<Self> {
        let an = Arc::clone(&analyzer.inner);
        guard(|| {
            Ok(PyLexicon {
                inner: Arc::new(core::Lexicon::new(&an, &entries)?),
            })
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// The set of document ids a search may return (made by `Index.make_filter`).
#[pyclass(frozen, module = "toolsurface._native", name = "Filter")]
struct PyFilter {
    inner: Arc<core::Filter>,
}

/// The names and the documents' field texts of an index build, borrowed from the Python
/// strings themselves: no copy of the catalogue's text (61 MB at 100,000 tools) and nothing
/// to free. The strings stay valid while the index is built without the interpreter: they
/// are immutable, `names` holds a reference to each name and `fields` to each tuple, which
/// holds its items. An item of `fields` that is not five strings is a `TypeError`.
type BorrowedTexts<'a> = (Vec<&'a str>, Vec<[&'a str; 5]>);

fn borrow_texts<'a>(
    names: &'a [Bound<'_, PyString>],
    fields: &'a [Bound<'_, PyTuple>],
) -> PyResult<BorrowedTexts<'a>> {
    let names = names
        .iter()
        .map(|name| name.to_str())
        .collect::<PyResult<Vec<&str>>>()?;
    let mut docs = Vec::with_capacity(fields.len());
    for (i, doc) in fields.iter().enumerate() {
        if doc.len() != 5 {
            return Err(PyTypeError::new_err(format!(
                "fields[{i}] must be a tuple of five strings, got {} items",
                doc.len()
            )));
        }
        let mut five = [""; 5];
        for (slot, item) in five.iter_mut().zip(doc.iter_borrowed()) {
            if !item.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "fields[{i}] must be a tuple of five strings, got an item of type {}",
                    item.get_type()
                        .name()
                        .map_or_else(|_| "?".into(), |n| n.to_string())
                )));
            }
            *slot = item.extract::<&str>()?;
        }
        docs.push(five);
    }
    Ok((names, docs))
}

/// The BM25F index over five fields.
#[pyclass(frozen, module = "toolsurface._native", name = "Index")]
struct PyIndex {
    inner: Arc<core::Index>,
}

fn lex(lexicon: &Option<PyRef<'_, PyLexicon>>) -> Option<Arc<core::Lexicon>> {
    lexicon.as_ref().map(|l| Arc::clone(&l.inner))
}

fn filt(allowed: &Option<PyRef<'_, PyFilter>>) -> Option<Arc<core::Filter>> {
    allowed.as_ref().map(|f| Arc::clone(&f.inner))
}

fn hits(r: core::SearchResult) -> Hits {
    (r.docs, r.scores, r.fallback)
}

#[pymethods]
impl PyIndex {
    #[new]
    fn new(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        names: Vec<Bound<'_, PyString>>,
        fields: Vec<Bound<'_, PyTuple>>,
    ) -> PyResult<Self> {
        let an = Arc::clone(&analyzer.inner);
        let (names, fields) = borrow_texts(&names, &fields)?;
        py.detach(move || {
            guard(move || {
                let index = core::Index::build_from(an, &names, &fields)?;
                Ok(PyIndex {
                    inner: Arc::new(index),
                })
            })
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Number of distinct terms.
    fn vocabulary_size(&self) -> usize {
        self.inner.vocabulary_size()
    }

    /// Heap bytes of the index structures (not counting the settings cache).
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    /// A digest of every array of the index: equal for two builds exactly when they made the
    /// same index (the build benchmark checks a change of the build leaves it so).
    fn digest(&self) -> u64 {
        self.inner.digest()
    }

    /// A filter admitting the given document ids.
    fn make_filter(&self, ids: Vec<Bound<'_, PyInt>>) -> PyResult<PyFilter> {
        let n = self.inner.len();
        let ids = ids
            .iter()
            .map(|i| doc_arg(i, n))
            .collect::<PyResult<Vec<i64>>>()?;
        guard(|| {
            Ok(PyFilter {
                inner: Arc::new(self.inner.make_filter(&ids)?),
            })
        })
    }

    /// Weighted query terms in order: the query's own, then lexicon expansions.
    fn query_terms(
        &self,
        query: &str,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        expansion_weight: f64,
    ) -> PyResult<Vec<(String, f64)>> {
        let lexicon = lex(&lexicon);
        guard(|| {
            Ok(self
                .inner
                .query_terms(query, lexicon.as_deref(), expansion_weight))
        })
    }

    /// The `k` best documents: ids and scores, best first, and whether the fallback ran.
    #[pyo3(signature = (query, k, weights, b, k1, expansion_weight, lexicon=None, allowed=None))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        query: &str,
        k: &Bound<'_, PyInt>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Hits> {
        let (lexicon, allowed) = (lex(&lexicon), filt(&allowed));
        let k = int_arg(k)?;
        guard(|| {
            let s = settings(&weights, &b, k1, expansion_weight)?;
            let k = check_k(k)?;
            let r = self
                .inner
                .search(query, k, &s, lexicon.as_deref(), allowed.as_deref())?;
            Ok(hits(r))
        })
    }

    /// `search` for each query, in parallel, detached from the interpreter.
    #[pyo3(signature = (queries, k, weights, b, k1, expansion_weight, lexicon=None, allowed=None))]
    #[allow(clippy::too_many_arguments)]
    fn search_many(
        &self,
        py: Python<'_>,
        queries: Vec<String>,
        k: &Bound<'_, PyInt>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Vec<Hits>> {
        let (lexicon, allowed) = (lex(&lexicon), filt(&allowed));
        let index = Arc::clone(&self.inner);
        let k = int_arg(k)?;
        py.detach(move || {
            guard(move || {
                let s = settings(&weights, &b, k1, expansion_weight)?;
                let k = check_k(k)?;
                let rs =
                    index.search_many(&queries, k, &s, lexicon.as_deref(), allowed.as_deref())?;
                Ok(rs.into_iter().map(hits).collect())
            })
        })
    }

    /// A [`PySearcher`] over this index: `names` (one per document, in id order) and
    /// `hit_type` (a tuple subclass taking name, score, rank, fallback, explanation).
    /// `direct_hits`: make each hit by [`alloc_hit`] where [`can_alloc_hits`] allows it
    /// (false: always through `tuple.__new__`, as on Python 3.14 and later).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (names, hit_type, weights, b, k1, expansion_weight, lexicon, direct_hits = true))]
    fn searcher(
        &self,
        py: Python<'_>,
        names: Vec<Bound<'_, PyString>>,
        hit_type: Bound<'_, PyType>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        direct_hits: bool,
    ) -> PyResult<PySearcher> {
        if names.len() != self.inner.len() {
            return Err(PyValueError::new_err(format!(
                "searcher takes one name per document: {} names for {} documents",
                names.len(),
                self.inner.len()
            )));
        }
        let tuple_type = py.get_type::<PyTuple>();
        if !hit_type.is_subclass(&tuple_type)? {
            return Err(PyValueError::new_err(format!(
                "hit_type must be a tuple subclass, got {}",
                hit_type.name()?
            )));
        }
        let settings = guard(|| settings(&weights, &b, k1, expansion_weight))?;
        let tuple_new = tuple_type.getattr("__new__")?;
        let admitted = if direct_hits && can_alloc_hits(py, &hit_type, &tuple_new)? {
            Some(hit_type.getattr(intern!(py, "__mro__"))?.unbind())
        } else {
            None
        };
        Ok(PySearcher {
            index: Arc::clone(&self.inner),
            settings,
            lexicon: lex(&lexicon),
            names: names.into_iter().map(Bound::unbind).collect(),
            hit_type: hit_type.unbind(),
            tuple_new: tuple_new.unbind(),
            admitted,
        })
    }

    /// Per matched term of `doc`: the term, its query weight, each field's contribution.
    #[allow(clippy::too_many_arguments)]
    fn explain(
        &self,
        query: &str,
        doc: &Bound<'_, PyInt>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        fallback: bool,
    ) -> PyResult<Vec<(String, f64, Vec<f64>)>> {
        let lexicon = lex(&lexicon);
        let doc = int_arg(doc)?;
        guard(|| {
            let s = settings(&weights, &b, k1, expansion_weight)?;
            let out = self
                .inner
                .explain(query, doc, &s, lexicon.as_deref(), fallback)?;
            Ok(out
                .into_iter()
                .map(|(t, w, parts)| (t, w, parts.to_vec()))
                .collect())
        })
    }
}

/// A search bound to one index, one settings value and one lexicon, whose hits come back
/// as the caller's named-tuple type.
///
/// The registry's hot path: the settings are checked once, the names are Python strings
/// made once, and each hit is built here, so a search costs one call from Python.
#[pyclass(frozen, module = "toolsurface._native", name = "Searcher")]
struct PySearcher {
    index: Arc<core::Index>,
    settings: core::Settings,
    lexicon: Option<Arc<core::Lexicon>>,
    names: Vec<Py<PyString>>,
    hit_type: Py<PyType>,
    /// `tuple.__new__`: builds an instance of a tuple subclass from a tuple, in C.
    tuple_new: Py<PyAny>,
    /// `hit_type.__mro__` when [`can_alloc_hits`] admitted it, so that hits are made by
    /// [`alloc_hit`]; a new one (its bases reassigned) takes the hits back through
    /// `tuple.__new__`, which checks them again.
    admitted: Option<Py<PyAny>>,
}

/// Whether [`alloc_hit`] makes a `hit_type` exactly as `tuple.__new__(hit_type, items)`
/// does: on CPython 3.10 to 3.13 (3.14 added a cached hash that `tuple.__new__` resets and a
/// zeroed allocation would not; other interpreters are not covered), for a `hit_type` that
/// `tuple.__new__` accepts (no base between it and `tuple` has a constructor of its own, as
/// struct sequences like `time.struct_time` do, whose instances hold more fields) and whose
/// allocator is the generic one (every tuple subclass defined in Python, named tuples
/// included). `tuple_new` is `tuple.__new__`.
#[allow(unsafe_code)]
fn can_alloc_hits(
    py: Python<'_>,
    hit_type: &Bound<'_, PyType>,
    tuple_new: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let implementation = py
        .import("sys")?
        .getattr("implementation")?
        .getattr("name")?;
    if implementation.extract::<String>()? != "cpython" || py.version_info() >= (3, 14) {
        return Ok(false);
    }
    // tuple's own admission check (`tp_new_wrapper`'s "is not safe"), on a throwaway hit.
    if tuple_new
        .call1((hit_type, PyTuple::new(py, [(); 5].map(|()| py.None()))?))
        .is_err()
    {
        return Ok(false);
    }
    // SAFETY: `PyType_GetSlot` only reads a slot of a live type object (held by
    // `hit_type`, with the interpreter attached); it works on static types since 3.10, our
    // floor, and returns null for a slot the type lacks, which only makes this false.
    let slot = unsafe { pyo3::ffi::PyType_GetSlot(hit_type.as_type_ptr(), pyo3::ffi::Py_tp_alloc) };
    if slot.is_null() {
        let _ = PyErr::take(py);
        return Ok(false);
    }
    Ok(slot == pyo3::ffi::PyType_GenericAlloc as *mut std::ffi::c_void)
}

/// `tuple.__new__(hit_type, items)` without its generic call: allocate the instance and
/// store the items, as CPython's `tuple_subtype_new` does after copying its argument.
///
/// # Safety
///
/// [`can_alloc_hits`] returned true for `hit_type`, whose bases have not changed since
/// (its `__mro__` is the same object).
#[allow(unsafe_code)]
unsafe fn alloc_hit<'py>(
    py: Python<'py>,
    hit_type: &Bound<'py, PyType>,
    items: [Bound<'py, PyAny>; 5],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: by the precondition we run on CPython 3.10 to 3.13 and `tuple.__new__`
    // accepts `hit_type`, so `tuple.__new__(hit_type, items)` runs `tuple_subtype_new`,
    // which calls `hit_type`'s `tp_alloc` for the items and stores them, nothing else. That
    // `tp_alloc` is `PyType_GenericAlloc` (checked). It returns a new reference (refcount 1,
    // or null with an exception set, which `from_owned_ptr_or_err` turns into `Err`) to a
    // zeroed instance with room for 5 items, all null, already tracked by the collector;
    // tuple's traverse and dealloc skip null items, so it is safe to drop or to be seen by
    // the collector before the items are in. Up to 3.13 a tuple has no field but its items.
    let obj = unsafe { pyo3::ffi::PyType_GenericAlloc(hit_type.as_type_ptr(), 5) };
    // SAFETY: `obj` is a new (owned) reference or null, as above.
    let obj = unsafe { Bound::from_owned_ptr_or_err(py, obj) }?;
    for (i, item) in (0..).zip(items) {
        // SAFETY: `obj` is a tuple subclass instance of 5 items that nothing else has seen
        // (refcount 1, as `PyTuple_SetItem` requires) and `i` is below 5. `into_ptr` hands
        // over our reference, which `PyTuple_SetItem` steals, also when it fails.
        if unsafe { pyo3::ffi::PyTuple_SetItem(obj.as_ptr(), i, item.into_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(obj)
}

impl PySearcher {
    /// Whether hits are made by [`alloc_hit`] now: `hit_type` was admitted and its bases
    /// have not been reassigned since.
    fn direct_now(&self, py: Python<'_>) -> PyResult<bool> {
        match &self.admitted {
            Some(mro) => Ok(self
                .hit_type
                .bind(py)
                .getattr(intern!(py, "__mro__"))?
                .is(mro)),
            None => Ok(false),
        }
    }

    /// `(name, score, rank, fallback, None)` as `hit_type`, for each hit in order.
    fn to_hits<'py>(&self, py: Python<'py>, r: core::SearchResult) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let hit_type = self.hit_type.bind(py);
        let tuple_new = self.tuple_new.bind(py);
        let direct = self.direct_now(py)?;
        for (rank, (&doc, &score)) in r.docs.iter().zip(&r.scores).enumerate() {
            let name = self.names.get(doc as usize).ok_or_else(|| {
                PyRuntimeError::new_err(format!("toolsurface native core returned document {doc}"))
            })?;
            let items = [
                name.bind(py).clone().into_any(),
                score.into_pyobject(py)?.into_any(),
                (rank + 1).into_pyobject(py)?.into_any(),
                r.fallback.into_pyobject(py)?.to_owned().into_any(),
                py.None().into_bound(py),
            ];
            if direct {
                // SAFETY: `self.admitted` is set only when `can_alloc_hits` admitted
                // `self.hit_type` (both fields are immutable), and its `__mro__` is still
                // the one it had then.
                #[allow(unsafe_code)]
                out.append(unsafe { alloc_hit(py, hit_type, items) }?)?;
            } else {
                out.append(tuple_new.call1((hit_type, PyTuple::new(py, items)?))?)?;
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl PySearcher {
    /// Whether hits are made directly rather than through `tuple.__new__` (same hits).
    #[getter]
    fn direct_hits(&self, py: Python<'_>) -> PyResult<bool> {
        self.direct_now(py)
    }

    /// The `k` best hits for `query`, best first, as `hit_type` instances.
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        k: &Bound<'_, PyInt>,
    ) -> PyResult<Bound<'py, PyList>> {
        let k = int_arg(k)?;
        let r = guard(|| {
            let k = check_k(k)?;
            self.index
                .search(query, k, &self.settings, self.lexicon.as_deref(), None)
        })?;
        self.to_hits(py, r)
    }

    /// `search` for each query, in parallel, detached from the interpreter.
    fn search_many<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<String>,
        k: &Bound<'_, PyInt>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let k = int_arg(k)?;
        let index = Arc::clone(&self.index);
        let lexicon = self.lexicon.clone();
        let settings = self.settings;
        let rs = py.detach(move || {
            guard(move || {
                let k = check_k(k)?;
                index.search_many(&queries, k, &settings, lexicon.as_deref(), None)
            })
        })?;
        rs.into_iter().map(|r| self.to_hits(py, r)).collect()
    }
}

/// What a schema value is to the parameter walk of `retrieval/fields.py`.
enum Node<'a, 'py> {
    /// A plain `dict`: walked.
    Map(&'a Bound<'py, PyDict>),
    /// A JSON value that is no mapping (`str`, `int`, `float`, `bool`, `None`, `list`).
    Leaf,
    /// Anything else (a `Mapping` that is no plain dict, a subclass): Python decides.
    Other,
}

/// `None` or a plain `str`, `int`, `float` or `bool`: immutable JSON values.
fn json_scalar(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyFloat>()
        || value.is_exact_instance_of::<PyBool>()
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
fn tool_fields<'py>(
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
fn copy_json<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut memo = CopyMemo::new();
    no_panic(|| copy_node(value, 0, &mut memo))
}

/// `names` and `values` (two lists of one length) reordered as `sorted(names)` orders the
/// names, or `None` where a name is no plain `str` or has a lone surrogate (Python sorts
/// those). Equal names keep their order.
///
/// The names are copied into one buffer and ordered there (UTF-8 bytes compare as code
/// points do): `sorted` over 100,000 names spread across the heap waits on memory at each
/// comparison, and reordering the values by name lookups waits again.
#[pyfunction]
fn sort_by_name<'py>(
    py: Python<'py>,
    names: &Bound<'py, PyList>,
    values: &Bound<'py, PyList>,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>)>> {
    if names.len() != values.len() {
        return Err(PyValueError::new_err(format!(
            "sort_by_name: {} names but {} values",
            names.len(),
            values.len()
        )));
    }
    no_panic(|| {
        let mut text = String::new();
        let mut spans = Vec::with_capacity(names.len());
        for key in names.iter() {
            // Borrowed UTF-8, without `plain_str`'s ASCII test (a tenth of the call): tool
            // names are ASCII, and a non-ASCII name only keeps a UTF-8 copy of itself inside
            // (CPython's cache of that form, as any UTF-8 read makes).
            let Some(name) = key
                .cast_exact::<PyString>()
                .ok()
                .and_then(|k| k.to_str().ok())
            else {
                return Ok(None);
            };
            spans.push(text.len()..text.len() + name.len());
            text.push_str(name);
        }
        // Each name's first 16 bytes as a number that orders as they do (zero-padded: a tie
        // of prefixes compares the whole names), so most comparisons read no text.
        let bytes = text.as_bytes();
        let prefix = |span: &std::ops::Range<usize>| {
            let mut head = [0u8; 16];
            let n = span.len().min(16);
            head[..n].copy_from_slice(&bytes[span.start..span.start + n]);
            u128::from_be_bytes(head)
        };
        let mut order: Vec<(u128, usize)> = spans
            .iter()
            .enumerate()
            .map(|(i, span)| (prefix(span), i))
            .collect();
        // Ties by position: equal names keep their order, as in a stable sort. The sort reads
        // only the copies: other Python threads may run meanwhile.
        py.detach(|| {
            order.sort_unstable_by(|&(pa, a), &(pb, b)| {
                pa.cmp(&pb)
                    .then_with(|| bytes[spans[a].clone()].cmp(&bytes[spans[b].clone()]))
                    .then(a.cmp(&b))
            })
        });
        // Each item once more from its list, moved into the new one (one reference each).
        let reorder = |list: &Bound<'py, PyList>| {
            let items: PyResult<Vec<_>> = order.iter().map(|&(_, i)| list.get_item(i)).collect();
            PyList::new(py, items?)
        };
        Ok(Some((reorder(names)?, reorder(values)?)))
    })
}

/// The native engine of toolsurface.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyAnalyzer>()?;
    m.add_class::<PyLexicon>()?;
    m.add_class::<PyFilter>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PySearcher>()?;
    m.add_function(wrap_pyfunction!(tool_fields, m)?)?;
    m.add_function(wrap_pyfunction!(copy_json, m)?)?;
    m.add_function(wrap_pyfunction!(sort_by_name, m)?)?;
    Ok(())
}
