//! The `PlainSearch` class: a registry's `search` as a native method, so that a plain
//! search (a query and a `k`, nothing else) enters no Python frame.
//!
//! The registry's hot path was a Python method that checked its state, then made one call
//! into a [`PySearcher`]; the frame and the checks were about a tenth of a search. This is
//! the same method's fast path transcribed: it reads the registry's state where the
//! Python method reads it (its instance dict, the learned hints' and the groups' versions)
//! and makes the same checks, so that nothing needs telling when that state changes. Any
//! other call, or a state the checks refuse, goes to the Python method unchanged.

use pyo3::exceptions::PyTypeError;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::PyTraverseError;

use crate::args::int_arg;
use crate::searcher::PySearcher;

/// `ToolRegistry.search` of one registry, answered here when the call and the registry's
/// state are those of the Python method's hot path.
///
/// The registry holds it (its bound `search` is the instance's `search`), and it holds the
/// registry: a reference cycle, which the collector sees through `__traverse__` and breaks
/// by clearing the registry's dict.
#[pyclass(frozen, module = "toolsurface._native", name = "PlainSearch")]
pub(crate) struct PyPlainSearch {
    /// `ToolRegistry.search`, the Python method: every call this one does not answer.
    full: Py<PyAny>,
    /// The registry, the Python method's `self`.
    owner: Py<PyAny>,
    /// The registry's class when this was made: while it is still the registry's, and its
    /// `search` still `full`, this stands in for `full`.
    class: Py<PyType>,
    /// The registry's instance dict, where its state is read.
    state: Py<PyDict>,
    /// `k` when the call gives none (the Python method's default).
    default_k: i64,
    /// The longest query (in code points) the hot path takes (`QUERY_MAX_CHARS`).
    max_chars: usize,
}

/// A plain call's query and `k`, or `None` for a call of any other shape: exactly a
/// `str` query and an `int` `k` (no subclass, no bool) of at least 0, given by position
/// or as `k=`.
fn plain_args<'a, 'py>(
    args: &'a Bound<'py, PyTuple>,
    kwargs: Option<&'a Bound<'py, PyDict>>,
    default_k: i64,
) -> PyResult<Option<(Bound<'py, PyString>, i64)>> {
    let keyword_k = match kwargs {
        None => None,
        Some(kw) if kw.is_empty() => None,
        Some(kw) if kw.len() == 1 && args.len() == 1 => match kw.get_item(intern!(kw.py(), "k"))? {
            Some(k) => Some(k),
            None => return Ok(None),
        },
        Some(_) => return Ok(None),
    };
    let k = match (args.len(), keyword_k) {
        (1, None) => None,
        (1, Some(k)) => Some(k),
        (2, None) => Some(args.get_item(1)?),
        _ => return Ok(None),
    };
    let query = args.get_item(0)?;
    let Ok(query) = query.cast_into_exact::<PyString>() else {
        return Ok(None);
    };
    let k = match k {
        None => default_k,
        Some(k) => match k.cast_exact::<PyInt>() {
            Ok(k) => int_arg(k)?,
            Err(_) => return Ok(None),
        },
    };
    Ok((k >= 0).then_some((query, k)))
}

/// Whether `a` and `b` are ints of the same value (`==` as the Python method compares its
/// versions, which are ints that fit in 64 bits; anything else is not the same here, and
/// the Python method decides).
fn same_int(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> bool {
    let value = |v: &Bound<'_, PyAny>| v.cast_exact::<PyInt>().ok()?.extract::<i64>().ok();
    matches!((value(a), value(b)), (Some(x), Some(y)) if x == y)
}

impl PyPlainSearch {
    /// Whether this still stands in for the registry's `search`: the registry's class is
    /// the one it had, whose `search` is still `full` (a class-level patch, or a class
    /// assigned to the registry, is then what Python would call).
    fn stands_in(&self, py: Python<'_>) -> PyResult<bool> {
        let class = self.class.bind(py);
        Ok(self.owner.bind(py).get_type().is(class)
            && class.getattr(intern!(py, "search"))?.is(self.full.bind(py)))
    }

    /// Leave the registry's dict (when this is its `search` there) and make the call as
    /// Python now resolves `registry.search`.
    fn step_aside<'py>(
        &self,
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let state = self.state.bind(py);
        let name = intern!(py, "search");
        if let Some(held) = state.get_item(name)? {
            if held
                .getattr(intern!(py, "__self__"))
                .is_ok_and(|of| of.is(slf))
            {
                state.del_item(name)?;
            }
        }
        self.owner.bind(py).getattr(name)?.call(args, kwargs)
    }

    /// The registry's bound searcher, when its state is that of the hot path: the bound
    /// search (`_fast`) is of the current catalogue generation, learned hints version,
    /// groups version and settings, and no retriever or semantic ranker is set. The same
    /// checks, in the same terms, as `ToolRegistry.search`'s: a change there is made here.
    fn current<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PySearcher>>> {
        let state = self.state.bind(py);
        let item = |name: &Bound<'py, PyString>| state.get_item(name);
        let Some(fast) = item(intern!(py, "_fast"))? else {
            return Ok(None);
        };
        let Ok(fast) = fast.cast_into_exact::<PyTuple>() else {
            return Ok(None);
        };
        if fast.len() != 5 {
            return Ok(None);
        }
        let (Some(retrievers), Some(semantic), Some(settings), Some(generation)) = (
            item(intern!(py, "retrievers"))?,
            item(intern!(py, "semantic"))?,
            item(intern!(py, "settings"))?,
            item(intern!(py, "_generation"))?,
        ) else {
            return Ok(None);
        };
        let no_retrievers = match retrievers.cast_exact::<PyList>() {
            Ok(list) => list.is_empty(),
            Err(_) => !retrievers.is_truthy()?,
        };
        if !no_retrievers || !semantic.is_none() || !fast.get_item(3)?.is(&settings) {
            return Ok(None);
        }
        if !same_int(&fast.get_item(0)?, &generation) {
            return Ok(None);
        }
        let (Some(learned), Some(groups)) = (
            item(intern!(py, "_learned"))?,
            item(intern!(py, "_membership"))?,
        ) else {
            return Ok(None);
        };
        let hints_version = learned
            .getattr(intern!(py, "hints"))?
            .getattr(intern!(py, "version"))?;
        let groups_version = groups.getattr(intern!(py, "version"))?;
        if !same_int(&fast.get_item(1)?, &hints_version)
            || !same_int(&fast.get_item(2)?, &groups_version)
        {
            return Ok(None);
        }
        Ok(fast.get_item(4)?.cast_into_exact::<PySearcher>().ok())
    }

    /// The hot path's answer, or `None` to leave the call to the Python method: a call of
    /// another shape, a state the hot path does not serve, a query too long or with lone
    /// surrogates (the full path cleans it), or no hits for a query without terms (the
    /// full path fills in the first tools).
    fn plain<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some((query, k)) = plain_args(args, kwargs, self.default_k)? else {
            return Ok(None);
        };
        if query.len()? > self.max_chars {
            return Ok(None);
        }
        let Some(searcher) = self.current(py)? else {
            return Ok(None);
        };
        let Ok(text) = query.to_str() else {
            return Ok(None);
        };
        let searcher = searcher.get();
        let k = usize::try_from(k).unwrap_or(usize::MAX);
        let hits = searcher.hits_of(py, text, k)?;
        if !hits.is_empty() || k == 0 || searcher.has_terms_of(text)? {
            Ok(Some(hits))
        } else {
            Ok(None)
        }
    }
}

#[pymethods]
impl PyPlainSearch {
    /// The search of `owner` (a `ToolRegistry`) that `full` (`ToolRegistry.search`) does,
    /// reading the registry's state in `owner.__dict__`.
    #[new]
    #[pyo3(signature = (full, owner, default_k, max_chars))]
    fn new(
        full: Py<PyAny>,
        owner: Bound<'_, PyAny>,
        default_k: i64,
        max_chars: usize,
    ) -> PyResult<Self> {
        let state = owner
            .getattr(intern!(owner.py(), "__dict__"))?
            .cast_into_exact::<PyDict>()
            .map_err(|_| PyTypeError::new_err("PlainSearch needs an owner with a dict"))?
            .unbind();
        Ok(PyPlainSearch {
            full,
            class: owner.get_type().unbind(),
            owner: owner.unbind(),
            state,
            default_k,
            max_chars,
        })
    }

    /// The k best tools for query, best first: ToolRegistry.search, whose docstring says
    /// the rest. A plain call is answered in the engine, any other by that method.
    #[pyo3(
        signature = (*args, **kwargs),
        text_signature = "($self, query, k=10, *, settings=None, admitted=None, explain=False, retrievers=None, fusion=None)"
    )]
    fn search<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (py, this) = (slf.py(), slf.get());
        if !this.stands_in(py)? {
            return this.step_aside(slf, args, kwargs);
        }
        if let Some(hits) = this.plain(py, args, kwargs)? {
            return Ok(hits.into_any());
        }
        let mut items = Vec::with_capacity(args.len() + 1);
        items.push(this.owner.bind(py).clone());
        items.extend(args.iter());
        let full_args = PyTuple::new(py, items)?;
        this.full.bind(py).call(full_args, kwargs)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.full)?;
        visit.call(&self.owner)?;
        visit.call(&self.class)?;
        visit.call(&self.state)?;
        Ok(())
    }
}
