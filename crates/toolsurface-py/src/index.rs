//! The `Index` class: building an index from borrowed Python strings, its searches and
//! explanations, and the [`PySearcher`] it binds.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyTuple, PyType};

use toolsurface_core as core;
use toolsurface_core::N_FIELDS;

use crate::aliases::PyAliases;
use crate::analysed::PyAnalysedDocs;
use crate::analyzer::PyAnalyzer;
use crate::args::{check_k, doc_arg, filt, int_arg, lex, settings};
use crate::batch::list_in_chunks;
use crate::errors::guard;
use crate::filter::PyFilter;
use crate::lexicon::PyLexicon;
use crate::packed::unpack;
use crate::rules::PyBoostRules;
use crate::searcher::PySearcher;

type Hits = (Vec<u32>, Vec<f64>, bool);

/// The names and the documents' field texts of an index build, borrowed from the Python
/// objects themselves: no copy of the catalogue's text (61 MB at 100,000 tools) and nothing
/// to free. The texts stay valid while the index is built without the interpreter: `str`
/// and `bytes` are immutable, `names` holds a reference to each name and `fields` to each
/// document, which holds its items.
///
/// A document is five strings (the learned field then empty) or six; or the registry's
/// packed texts (`packed.rs`: every field but the name, which is `names[i]`), alone or in a
/// pair with the learned text. Anything else is a `TypeError` naming the document.
type BorrowedTexts<'a> = (Vec<&'a str>, Vec<[&'a str; N_FIELDS]>);

fn borrow_texts<'a>(
    names: &'a [Bound<'_, PyString>],
    fields: &'a [Bound<'_, PyAny>],
) -> PyResult<BorrowedTexts<'a>> {
    borrow_texts_from(names, fields, 0)
}

/// [`borrow_texts`] of the catalogue's documents from `first` on (numbered so in errors).
fn borrow_texts_from<'a>(
    names: &'a [Bound<'_, PyString>],
    fields: &'a [Bound<'_, PyAny>],
    first: usize,
) -> PyResult<BorrowedTexts<'a>> {
    if names.len() != fields.len() {
        let mismatch = core::Error::LengthMismatch {
            names: names.len(),
            fields: fields.len(),
        };
        return Err(PyValueError::new_err(mismatch.to_string()));
    }
    let names = names
        .iter()
        .map(|name| name.to_str())
        .collect::<PyResult<Vec<&str>>>()?;
    let mut docs = Vec::with_capacity(fields.len());
    for ((i, doc), &name) in fields.iter().enumerate().zip(&names) {
        docs.push(borrow_doc(first + i, name, doc)?);
    }
    Ok((names, docs))
}

/// The six texts of document `i`, named `name` (see [`BorrowedTexts`]).
fn borrow_doc<'a>(
    i: usize,
    name: &'a str,
    doc: &'a Bound<'_, PyAny>,
) -> PyResult<[&'a str; N_FIELDS]> {
    let wrong = |what: String| {
        PyTypeError::new_err(format!(
            "fields[{i}] must be five or six strings, or packed field texts with or without \
             a learned text; got {what}"
        ))
    };
    let type_name = |item: &Bound<'_, PyAny>| {
        item.get_type()
            .name()
            .map_or_else(|_| "?".into(), |n| n.to_string())
    };
    if let Ok(packed) = doc.cast::<PyBytes>() {
        return unpacked(i, name, packed.as_bytes(), "");
    }
    let Ok(doc) = doc.cast::<PyTuple>() else {
        return Err(wrong(format!("an object of type {}", type_name(doc))));
    };
    if doc.len() == 2 {
        let first = doc.get_borrowed_item(0)?;
        if !first.is_instance_of::<PyString>() && !first.is_instance_of::<PyBytes>() {
            return Err(wrong(format!(
                "a pair whose first item is of type {} (packed texts are bytes)",
                type_name(&first.to_owned())
            )));
        }
        if let Ok(packed) = first.extract::<&[u8]>() {
            let learned = doc.get_borrowed_item(1)?;
            let Ok(learned) = learned.extract::<&str>() else {
                return Err(wrong(format!(
                    "a learned text of type {}",
                    type_name(&learned.to_owned())
                )));
            };
            return unpacked(i, name, packed, learned);
        }
    }
    if doc.len() != 5 && doc.len() != N_FIELDS {
        return Err(wrong(format!("a tuple of {} items", doc.len())));
    }
    let mut texts = [""; N_FIELDS];
    for (slot, item) in texts.iter_mut().zip(doc.iter_borrowed()) {
        if !item.is_instance_of::<PyString>() {
            return Err(wrong(format!(
                "an item of type {}",
                type_name(&item.to_owned())
            )));
        }
        *slot = item.extract::<&str>()?;
    }
    Ok(texts)
}

/// The six texts of a packed document: `name`, the packed four, `learned`.
fn unpacked<'a>(
    i: usize,
    name: &'a str,
    packed: &'a [u8],
    learned: &'a str,
) -> PyResult<[&'a str; N_FIELDS]> {
    let [hint, summary, body, params] = unpack(packed).ok_or_else(|| {
        PyValueError::new_err(format!(
            "fields[{i}]: packed field texts of {name:?} are malformed"
        ))
    })?;
    Ok([name, hint, summary, body, params, learned])
}

/// The BM25F index over six fields.
#[pyclass(frozen, module = "toolsurface._native", name = "Index")]
pub(crate) struct PyIndex {
    inner: Arc<core::Index>,
}

impl PyIndex {
    /// The core's searches of this index.
    fn core_searcher(&self) -> core::Searcher<'_> {
        core::Searcher::new(&self.inner)
    }
}

fn hits(r: core::SearchResult) -> Hits {
    (r.docs, r.scores, r.fallback)
}

/// The index `make` builds, detached from the interpreter (a build takes from milliseconds
/// to seconds), its error a `ValueError` and a panic a `RuntimeError`.
fn built(
    py: Python<'_>,
    make: impl FnOnce() -> Result<core::Index, core::Error> + Send,
) -> PyResult<PyIndex> {
    py.detach(move || {
        guard(move || {
            Ok(PyIndex {
                inner: Arc::new(make()?),
            })
        })
    })
}

#[pymethods]
impl PyIndex {
    #[new]
    fn new(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        names: Vec<Bound<'_, PyString>>,
        fields: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let an = Arc::clone(&analyzer.inner);
        let (names, fields) = borrow_texts(&names, &fields)?;
        built(py, move || core::Index::build_from(an, &names, &fields))
    }

    /// The documents `fields` (of `names`, the catalogue's documents from `first` on)
    /// analysed for `Index.assembled`, detached from the interpreter: a host's thread may
    /// make the next part's texts meanwhile. `first` only numbers the documents in errors.
    #[staticmethod]
    #[pyo3(signature = (analyzer, names, fields, first = 0))]
    fn analyse(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        names: Vec<Bound<'_, PyString>>,
        fields: Vec<Bound<'_, PyAny>>,
        first: usize,
    ) -> PyResult<PyAnalysedDocs> {
        let an = Arc::clone(&analyzer.inner);
        let (_, fields) = borrow_texts_from(&names, &fields, first)?;
        py.detach(move || {
            guard(move || Ok(PyAnalysedDocs::new(core::Index::analyse(&an, &fields)?)))
        })
    }

    /// The index of `names` whose documents `parts` holds in order (each from
    /// `Index.analyse` with `analyzer`, and used up here): what `Index(analyzer, names,
    /// fields)` makes of the same texts.
    #[staticmethod]
    fn assembled(
        py: Python<'_>,
        analyzer: PyRef<'_, PyAnalyzer>,
        names: Vec<Bound<'_, PyString>>,
        parts: Vec<PyRef<'_, PyAnalysedDocs>>,
    ) -> PyResult<Self> {
        let an = Arc::clone(&analyzer.inner);
        let names = names
            .iter()
            .map(|name| name.to_str())
            .collect::<PyResult<Vec<&str>>>()?;
        // Each part checked before any is taken: a part used already leaves the others
        // usable.
        if let Some(used) = parts.iter().position(|part| !part.unused()) {
            return Err(PyValueError::new_err(format!(
                "parts[{used}]: these analysed documents are in an index already"
            )));
        }
        // The same part listed twice would be taken once, then fail with the first used up.
        let mut first = std::collections::HashMap::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            if let Some(j) = first.insert(part.as_ptr() as usize, i) {
                return Err(PyValueError::new_err(format!(
                    "parts[{i}]: the same analysed documents as parts[{j}]"
                )));
            }
        }
        let parts = parts
            .iter()
            .map(|part| part.take())
            .collect::<PyResult<Vec<core::AnalysedDocs>>>()?;
        built(py, move || core::Index::assemble(an, &names, parts))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// This index with document `i`'s learned text made `learned[i]` (ids in order), its
    /// own five fields taken from its postings: what a build of the tools' texts and
    /// `learned` makes, without the tools' texts.
    fn with_learned(&self, py: Python<'_>, learned: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        if learned.len() != self.inner.len() {
            return Err(PyValueError::new_err(format!(
                "with_learned: {} learned texts for {} documents",
                learned.len(),
                self.inner.len()
            )));
        }
        let texts = learned
            .iter()
            .enumerate()
            .map(|(i, text)| {
                text.to_str().map_err(|_| {
                    PyValueError::new_err(format!(
                        "learned[{i}] (document '{}'): not valid Unicode (a lone surrogate)",
                        self.inner.name(i)
                    ))
                })
            })
            .collect::<PyResult<Vec<&str>>>()?;
        let inner = Arc::clone(&self.inner);
        built(py, move || inner.with_learned(&texts))
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

    /// The language ``query`` is read in: ``en``, ``ru``, ``de``, ``es``, ``fr``, ``uk``,
    /// ``zh``, or ``latin`` (Latin letters, no one leader of the votes).
    fn query_language(&self, query: &str) -> PyResult<&'static str> {
        guard(|| Ok(self.core_searcher().query_language(query)))
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
                .core_searcher()
                .query_terms(query, lexicon.as_deref(), expansion_weight))
        })
    }

    /// The numbers of the groups `query` mentions, first mentioned first (§8).
    fn mentions(
        &self,
        query: &str,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        expansion_weight: f64,
        aliases: PyRef<'_, PyAliases>,
    ) -> PyResult<Vec<u32>> {
        let lexicon = lex(&lexicon);
        let aliases = Arc::clone(&aliases.inner);
        guard(|| {
            Ok(self
                .core_searcher()
                .mentions(query, lexicon.as_deref(), expansion_weight, &aliases))
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
            let r = self.core_searcher().search(
                query,
                k,
                &s,
                lexicon.as_deref(),
                allowed.as_deref(),
            )?;
            Ok(hits(r))
        })
    }

    /// `search` with `boosts` (pairs of a filter and its factor) applied: the query analysed
    /// once, the plain ranking and each boost's scanned, merged as `boosts.py` states.
    #[pyo3(signature = (query, k, weights, b, k1, expansion_weight, lexicon=None, allowed=None, boosts=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn search_boosted(
        &self,
        query: &str,
        k: &Bound<'_, PyInt>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        allowed: Option<PyRef<'_, PyFilter>>,
        boosts: Vec<(PyRef<'_, PyFilter>, f64)>,
    ) -> PyResult<Hits> {
        let (lexicon, allowed) = (lex(&lexicon), filt(&allowed));
        let members: Vec<(Arc<core::Filter>, f64)> = boosts
            .iter()
            .map(|(f, factor)| (Arc::clone(&f.inner), *factor))
            .collect();
        let k = int_arg(k)?;
        guard(|| {
            let s = settings(&weights, &b, k1, expansion_weight)?;
            let k = check_k(k)?;
            let boosts: Vec<core::Boost<'_>> = members
                .iter()
                .map(|(m, factor)| core::Boost {
                    members: m,
                    factor: *factor,
                })
                .collect();
            let r = self.core_searcher().search_boosted(
                query,
                k,
                &s,
                lexicon.as_deref(),
                allowed.as_deref(),
                &boosts,
            )?;
            Ok(hits(r))
        })
    }

    /// `search` for each query, in parallel, detached from the interpreter; the results are
    /// made a chunk at a time, the interpreter let go between chunks (`batch.rs`).
    #[pyo3(signature = (queries, k, weights, b, k1, expansion_weight, lexicon=None, allowed=None))]
    #[allow(clippy::too_many_arguments)]
    fn search_many<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<String>,
        k: &Bound<'_, PyInt>,
        weights: Vec<f64>,
        b: Vec<f64>,
        k1: f64,
        expansion_weight: f64,
        lexicon: Option<PyRef<'_, PyLexicon>>,
        allowed: Option<PyRef<'_, PyFilter>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (lexicon, allowed) = (lex(&lexicon), filt(&allowed));
        let index = Arc::clone(&self.inner);
        let k = int_arg(k)?;
        let rs = py.detach(move || {
            guard(move || {
                let s = settings(&weights, &b, k1, expansion_weight)?;
                let k = check_k(k)?;
                Ok(core::Searcher::new(&index).search_many(
                    &queries,
                    k,
                    &s,
                    lexicon.as_deref(),
                    allowed.as_deref(),
                )?)
            })
        })?;
        list_in_chunks(
            py,
            rs,
            |r| r.docs.len(),
            |r| Ok(hits(r).into_pyobject(py)?.into_any()),
        )
    }

    /// A [`PySearcher`] over this index: `names` (one per document, in id order) and
    /// `hit_type` (a tuple subclass taking name, score, rank, fallback, explanation).
    /// `direct_hits`: make each hit directly where the searcher admits `hit_type` (false:
    /// always through `tuple.__new__`, as on Python 3.14 and later); see [`PySearcher::new`].
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (names, hit_type, weights, b, k1, expansion_weight, lexicon, direct_hits = true, rules = None))]
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
        rules: Option<PyRef<'_, PyBoostRules>>,
    ) -> PyResult<PySearcher> {
        PySearcher::new(
            py,
            &self.inner,
            names,
            hit_type,
            (&weights, &b, k1, expansion_weight),
            (lex(&lexicon), rules.map(|r| Arc::clone(&r.inner))),
            direct_hits,
        )
    }

    /// The boost rules of a registry over this index: `aliases` numbers the groups as
    /// `member_ends` does (group `g`'s document ids are `member_ids` from the previous
    /// group's end, 0 for the first, to `member_ends[g]`: flat, not a list per group, for a
    /// registry with a group per server), `read_only` the documents that only read,
    /// `question_words` the words that make a request a question; a factor of 1 turns its
    /// rule off. `ValueError` for an id out of range, an end out of order or past the ids,
    /// or a factor below 1 or not finite.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (aliases, member_ids, member_ends, read_only, question_words, mention_factor, question_factor))]
    fn boost_rules(
        &self,
        py: Python<'_>,
        aliases: Option<PyRef<'_, PyAliases>>,
        member_ids: Vec<i64>,
        member_ends: Vec<i64>,
        read_only: Vec<i64>,
        question_words: Vec<String>,
        mention_factor: f64,
        question_factor: f64,
    ) -> PyResult<PyBoostRules> {
        // Shared, not copied: the rules keep only what they resolve against this index.
        let aliases = aliases.map(|a| Arc::clone(&a.inner));
        let index = Arc::clone(&self.inner);
        let members = group_members(&member_ids, &member_ends)?;
        let rules = py.detach(move || {
            guard(move || {
                Ok(core::BoostRules::new(
                    &index,
                    aliases.as_deref().unwrap_or(&core::Aliases::default()),
                    &members,
                    &read_only,
                    &question_words,
                    mention_factor,
                    question_factor,
                )?)
            })
        })?;
        Ok(PyBoostRules {
            inner: Arc::new(rules),
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
                .core_searcher()
                .explain(query, doc, &s, lexicon.as_deref(), fallback)?;
            Ok(out
                .into_iter()
                .map(|(t, w, parts)| (t, w, parts.to_vec()))
                .collect())
        })
    }
}

/// Each group's member ids, from the groups' ids back to back and each group's end among
/// them (`Index.boost_rules`); an end below the previous one or past the ids is an error
/// that names it.
fn group_members(ids: &[i64], ends: &[i64]) -> PyResult<Vec<Vec<i64>>> {
    let mut start = 0usize;
    ends.iter()
        .enumerate()
        .map(|(g, &end)| {
            let end = usize::try_from(end)
                .ok()
                .filter(|&e| e >= start && e <= ids.len())
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "member_ends[{g}] = {end}: not between the previous end {start} and \
                         the {} member ids",
                        ids.len()
                    ))
                })?;
            let group = ids[start..end].to_vec();
            start = end;
            Ok(group)
        })
        .collect()
}
