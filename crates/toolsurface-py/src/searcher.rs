//! The `Searcher` class, the registry's hot path, which builds each hit itself.
//!
//! All of the crate's `unsafe` code is here: [`alloc_hit`] makes a hit as `tuple.__new__`
//! would but without its generic call, for a hit type [`can_alloc_hits`] has admitted, and
//! [`PySearcher::to_hits`] leaves such a hit untracked by the collector when it cannot be in
//! a reference cycle; each `unsafe` block says why it is sound.

use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyInt, PyList, PyString, PyTuple, PyType};

use toolsurface_core as core;

use crate::args::{check_k, filt, int_arg, settings};
use crate::batch::list_helped;
use crate::errors::{guard, Failure};
use crate::filter::PyFilter;

/// Queries a thread of the pool scores at a time in a batch: a few hundred microseconds of
/// work, so the first hits can be made soon after the batch starts and handing a chunk over
/// costs nothing measurable.
const BATCH_CHUNK: usize = 32;

/// A ranking as plain values: document ids, scores, whether the fallback ran, and each
/// hit's boost factor.
type Ranked = (Vec<u32>, Vec<f64>, bool, Vec<f64>);

/// A search bound to one index, one settings value and one lexicon, whose hits come back
/// as the caller's named-tuple type.
///
/// The registry's hot path: the settings are checked once, the names are Python strings
/// made once, and each hit is built here, so a search costs one call from Python.
#[pyclass(frozen, module = "toolsurface._native", name = "Searcher")]
pub(crate) struct PySearcher {
    index: Arc<core::Index>,
    settings: core::Settings,
    lexicon: Option<Arc<core::Lexicon>>,
    /// The registry's boost rules, applied to every search when given.
    rules: Option<Arc<core::BoostRules>>,
    names: Vec<Py<PyString>>,
    hit_type: Py<PyType>,
    /// `tuple.__new__`: builds an instance of a tuple subclass from a tuple, in C.
    tuple_new: Py<PyAny>,
    /// `hit_type.__mro__` when [`can_alloc_hits`] admitted it, so that hits are made by
    /// [`alloc_hit`]; a new one (its bases reassigned) takes the hits back through
    /// `tuple.__new__`, which checks them again.
    admitted: Option<Py<PyAny>>,
    /// `hit_type`'s instances have no `__dict__` (`__dictoffset__` 0, as a named tuple's):
    /// a hit of atomic items is then made untracked by the collector ([`PySearcher::to_hits`]).
    no_dict: bool,
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
    /// The searcher of `Index.searcher` (see there) over `index`: `ValueError` when `names`
    /// is not one per document, `hit_type` no tuple subclass or the settings (weights, b,
    /// k1, expansion weight) invalid, checked in that order.
    ///
    /// The only place a `PySearcher` is made: its fields are private to this module, so
    /// `admitted` is set exactly when [`can_alloc_hits`] admitted `hit_type`, which the
    /// `unsafe` call in [`PySearcher::to_hits`] relies on.
    pub(crate) fn new(
        py: Python<'_>,
        index: &Arc<core::Index>,
        names: Vec<Bound<'_, PyString>>,
        hit_type: Bound<'_, PyType>,
        (weights, b, k1, expansion_weight): (&[f64], &[f64], f64, f64),
        (lexicon, rules): (Option<Arc<core::Lexicon>>, Option<Arc<core::BoostRules>>),
        direct_hits: bool,
    ) -> PyResult<Self> {
        if names.len() != index.len() {
            return Err(PyValueError::new_err(format!(
                "searcher takes one name per document: {} names for {} documents",
                names.len(),
                index.len()
            )));
        }
        let tuple_type = py.get_type::<PyTuple>();
        if !hit_type.is_subclass(&tuple_type)? {
            return Err(PyValueError::new_err(format!(
                "hit_type must be a tuple subclass, got {}",
                hit_type.name()?
            )));
        }
        let settings = guard(|| settings(weights, b, k1, expansion_weight))?;
        // The searches' table made now, detached: made by the first search, on a busy pool,
        // it would keep the interpreter's lock for as long as the pool is busy.
        py.detach(|| guard(|| Ok(index.prepare(&settings)?)))?;
        let tuple_new = tuple_type.getattr("__new__")?;
        let admitted = if direct_hits && can_alloc_hits(py, &hit_type, &tuple_new)? {
            Some(hit_type.getattr(intern!(py, "__mro__"))?.unbind())
        } else {
            None
        };
        let no_dict = hit_type
            .getattr(intern!(py, "__dictoffset__"))?
            .extract::<isize>()?
            == 0;
        Ok(PySearcher {
            no_dict,
            index: Arc::clone(index),
            settings,
            lexicon,
            rules,
            names: names.into_iter().map(Bound::unbind).collect(),
            hit_type: hit_type.unbind(),
            tuple_new: tuple_new.unbind(),
            admitted,
        })
    }

    /// The `k` best hits for `query` (`search`, with `k` checked).
    pub(crate) fn hits_of<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        k: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let (r, _) = guard(|| self.ranked_core(query, k, None))?;
        self.to_hits(py, r)
    }

    /// `has_terms`.
    pub(crate) fn has_terms_of(&self, query: &str) -> PyResult<bool> {
        guard(|| {
            Ok(core::Searcher::new(&self.index).has_content(
                query,
                self.lexicon.as_deref(),
                self.settings.expansion_weight,
            ))
        })
    }

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

    /// The core's answer for `query`: under the rules when bound (with each hit's factor),
    /// else the plain search (every factor 1).
    fn ranked_core(
        &self,
        query: &str,
        k: usize,
        allowed: Option<&core::Filter>,
    ) -> Result<(core::SearchResult, Vec<f64>), Failure> {
        let searcher = core::Searcher::new(&self.index);
        let lexicon = self.lexicon.as_deref();
        Ok(match &self.rules {
            Some(rules) => {
                searcher.search_ruled(query, k, &self.settings, lexicon, allowed, rules)?
            }
            None => {
                let r = searcher.search(query, k, &self.settings, lexicon, allowed)?;
                let ones = vec![1.0; r.docs.len()];
                (r, ones)
            }
        })
    }

    /// `(name, score, rank, fallback, None)` as `hit_type`, for each hit in order.
    fn to_hits<'py>(&self, py: Python<'py>, r: core::SearchResult) -> PyResult<Bound<'py, PyList>> {
        // Made whole, then listed: a list grown by appends is reallocated as it grows (a
        // tenth of the conversion's time in a batch's profile).
        let mut out = Vec::with_capacity(r.docs.len());
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
                // `self.hit_type` (in `PySearcher::new`, the only constructor: the fields are
                // private to this module and immutable), and its `__mro__` is still the one
                // it had then.
                #[allow(unsafe_code)]
                let hit = unsafe { alloc_hit(py, hit_type, items) }?;
                // SAFETY: both calls take a live object we hold a reference to, with the
                // interpreter attached. `hit` was made tracked by `PyType_GenericAlloc`
                // (`alloc_hit`), so untracking it is allowed. It cannot hide a reference
                // cycle: it has no `__dict__` (`no_dict`, and its `__mro__` is unchanged
                // since it was read), and its items are a float, an int, a bool and None,
                // which the collector never tracks, and the name, when not tracked either:
                // CPython's own tuples of such items are untracked the same way
                // (`_PyTuple_MaybeUntrack`). Untracked, a search's hits neither count
                // towards nor are walked by the young generation's collections.
                #[allow(unsafe_code)]
                if self.no_dict && unsafe { pyo3::ffi::PyObject_GC_IsTracked(name.as_ptr()) } == 0 {
                    #[allow(unsafe_code)]
                    unsafe {
                        pyo3::ffi::PyObject_GC_UnTrack(hit.as_ptr().cast())
                    };
                }
                out.push(hit);
            } else {
                out.push(tuple_new.call1((hit_type, PyTuple::new(py, items)?))?);
            }
        }
        PyList::new(py, out)
    }
}

#[pymethods]
impl PySearcher {
    /// Whether hits are made directly rather than through `tuple.__new__` (same hits).
    #[getter]
    fn direct_hits(&self, py: Python<'_>) -> PyResult<bool> {
        self.direct_now(py)
    }

    /// The `k` best hits for `query`, best first, as `hit_type` instances (the boost
    /// rules applied when bound).
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        k: &Bound<'_, PyInt>,
    ) -> PyResult<Bound<'py, PyList>> {
        let k = int_arg(k)?;
        let k = guard(|| Ok(check_k(k)?))?;
        self.hits_of(py, query, k)
    }

    /// Whether `query` has a term to search for that is not only a function word's or its
    /// expansion's: its own or the lexicon's, in the vocabulary or not. A search that found
    /// nothing for a query with such terms answers nothing; one without, the registry fills
    /// in order.
    fn has_terms(&self, query: &str) -> PyResult<bool> {
        self.has_terms_of(query)
    }

    /// `search` among the documents `allowed` admits (all when `None`).
    #[pyo3(signature = (query, k, allowed = None))]
    fn search_in<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        k: &Bound<'_, PyInt>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let k = int_arg(k)?;
        let allowed = filt(&allowed);
        let (r, _) = guard(|| self.ranked_core(query, check_k(k)?, allowed.as_deref()))?;
        self.to_hits(py, r)
    }

    /// The ranking of `search_in` as plain values: document ids, scores, whether the
    /// fallback ran, and each hit's boost factor (for explanations and fusion).
    #[pyo3(signature = (query, k, allowed = None))]
    fn ranked(
        &self,
        query: &str,
        k: &Bound<'_, PyInt>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Ranked> {
        let k = int_arg(k)?;
        let allowed = filt(&allowed);
        let (r, factors) = guard(|| self.ranked_core(query, check_k(k)?, allowed.as_deref()))?;
        Ok((r.docs, r.scores, r.fallback, factors))
    }

    /// `search_in` for each query, in parallel, detached from the interpreter; the hits
    /// are made in order while the pool (and this thread, when it has no hits to make)
    /// scores the next queries (`batch.rs`).
    #[pyo3(signature = (queries, k, allowed = None))]
    fn search_many<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<PyBackedStr>,
        k: &Bound<'_, PyInt>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let k = int_arg(k)?;
        let k = guard(|| Ok(check_k(k)?))?;
        let held = filt(&allowed);
        let settings = self.settings;
        let (index, lexicon, rules) = (&self.index, &self.lexicon, &self.rules);
        // Detached: the first batch of a catalogue or settings builds the score table on
        // the pool, which may be busy with another caller's batch.
        let chunks = py.detach(|| {
            guard(|| {
                Ok(core::Chunks::new(
                    Arc::clone(index),
                    queries,
                    BATCH_CHUNK,
                    k,
                    &settings,
                    lexicon.clone(),
                    held,
                    rules.clone(),
                )?)
            })
        })?;
        // This thread makes chunks too when it has none to convert (`batch.rs`).
        let workers = rayon::current_num_threads().saturating_sub(1);
        list_helped(
            py,
            Arc::new(chunks),
            workers,
            |r| r.docs.len(),
            |r| Ok(self.to_hits(py, r)?.into_any()),
        )
    }
}
