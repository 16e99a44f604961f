//! The `Analyzer` class.

use std::sync::Arc;

use pyo3::prelude::*;

use toolsurface_core as core;

use crate::errors::guard;

/// Text analysis: character table and stopwords in, index terms out.
#[pyclass(frozen, module = "toolsurface._native", name = "Analyzer")]
pub(crate) struct PyAnalyzer {
    pub(crate) inner: Arc<core::Analyzer>,
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

    /// Whether `text` asks (docs/analysis.md §10): a question mark outside its payload, or a
    /// first word among `words` (folded here). What the boost rules ask of a request, for
    /// a host or a parity test to check alone.
    fn asks(&self, text: &str, words: Vec<String>) -> PyResult<bool> {
        guard(|| {
            let words = core::QuestionWords::new(&self.inner, words.iter().map(String::as_str));
            Ok(core::is_question(
                &self.inner,
                text,
                &words,
                &mut Vec::new(),
            ))
        })
    }

    /// `text` folded to lower case through the character table.
    fn fold(&self, text: &str) -> PyResult<String> {
        guard(|| Ok(self.inner.fold(text)))
    }
}
