//! A search's per-call parameters, checked and resolved once, and what it returns.

use crate::index::filter::Filter;
use crate::lexicon::Lexicon;
use crate::scoring::bm25f::SatTable;
use crate::scoring::settings::Settings;

/// What a search returns: document ids and scores, best first, and whether the fallback ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    /// Document ids, best first.
    pub docs: Vec<u32>,
    /// Their scores.
    pub scores: Vec<f64>,
    /// Whether the main stage found nothing and the trigram fallback ran.
    pub fallback: bool,
}

/// The per-call parameters of a search: its settings already validated and their table of
/// saturated weights taken from the index.
pub(crate) struct Request<'a> {
    pub(crate) k: usize,
    pub(crate) expansion_weight: f64,
    pub(crate) sat: &'a SatTable,
    pub(crate) lexicon: Option<&'a Lexicon>,
    pub(crate) allowed: Option<&'a Filter>,
}

impl<'a> Request<'a> {
    pub(crate) fn new(
        k: usize,
        settings: &Settings,
        sat: &'a SatTable,
        lexicon: Option<&'a Lexicon>,
        allowed: Option<&'a Filter>,
    ) -> Self {
        Request {
            k,
            expansion_weight: settings.expansion_weight,
            sat,
            lexicon,
            allowed,
        }
    }
}
