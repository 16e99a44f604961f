//! Search: a query analysed, its terms scanned, the fallback when nothing scores; boosts.

pub(crate) mod boosted;
pub(crate) mod filter;
pub(crate) mod scan;
pub(crate) mod scratch;
pub(crate) mod topk;

use rayon::prelude::*;

pub use boosted::Boost;
pub use filter::Filter;

use crate::index::Index;
use crate::lexicon::Lexicon;
use crate::scoring::bm25f::SatTable;
use crate::scoring::Settings;
use crate::search::scratch::{with_scratch, Scratch};

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

/// The per-call parameters of a search.
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

impl Index {
    fn search_in(&self, query: &str, req: &Request<'_>, sc: &mut Scratch) -> SearchResult {
        self.analyse_query(query, sc);
        self.main_terms(sc, req.lexicon, req.expansion_weight);
        let found = self.scan(&sc.terms, req.sat, req.k, req.allowed, &mut sc.accum);
        let fallback = !found;
        if fallback {
            self.fallback_terms(sc);
            self.scan(&sc.terms, req.sat, req.k, req.allowed, &mut sc.accum);
        }
        let top = &sc.accum.top;
        let k = req.k.min(top.len());
        SearchResult {
            docs: top[..k].iter().map(|h| h.doc).collect(),
            scores: top[..k].iter().map(|h| h.score).collect(),
            fallback,
        }
    }

    /// The `k` best documents for `query`, best first (score descending, then name).
    /// When nothing scores, the trigram fallback runs and `fallback` is set. `allowed`, if
    /// given, is the only documents that may be returned ([`Index::make_filter`]); invalid
    /// `settings` are an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Analyzer, CharTable, Index, Settings};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
    /// let analyzer = Arc::new(Analyzer::new(table, ["the"]));
    /// let doc = |name: &str, summary: &str| {
    ///     [name, "", summary, "", "", ""].map(String::from)
    /// };
    /// let fields = vec![
    ///     doc("github__list_issues", "Lists the issues of a repository."),
    ///     doc("github__list_pull_requests", "Lists the pull requests of a repository."),
    ///     doc("slack__send_message", "Sends a message."),
    /// ];
    /// let names = fields.iter().map(|f| f[0].clone()).collect();
    /// let index = Index::build(analyzer, names, fields)?;
    /// let settings = Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.5; 6], 1.2, 0.6);
    ///
    /// let hits = index.search("list pull requests", 10, &settings, None, None)?;
    /// assert_eq!(index.name(hits.docs[0] as usize), "github__list_pull_requests");
    /// assert_eq!(hits.docs.len(), 2); // "list" is in both GitHub tools, nothing in Slack's
    /// assert!(hits.scores[0] > hits.scores[1]);
    ///
    /// // Only the documents a filter admits.
    /// let only_issues = index.make_filter(&[0])?;
    /// let hits = index.search("list pull requests", 10, &settings, None, Some(&only_issues))?;
    /// assert_eq!(hits.docs, [0]);
    /// # Ok::<(), String>(())
    /// ```
    pub fn search(
        &self,
        query: &str,
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
    ) -> Result<SearchResult, String> {
        settings.validate()?;
        let sat = self.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(with_scratch(|sc| self.search_in(query, &req, sc)))
    }

    /// [`Index::search`] for each query, in parallel across the rayon pool; results in order.
    pub fn search_many(
        &self,
        queries: &[String],
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
    ) -> Result<Vec<SearchResult>, String> {
        settings.validate()?;
        let sat = self.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(queries
            .par_iter()
            .map(|q| with_scratch(|sc| self.search_in(q, &req, sc)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    #[test]
    fn search_many_matches_search() {
        let idx = catalogue();
        let s = settings();
        let qs: Vec<String> = [
            "list pull requests",
            "send message",
            "calendr",
            "",
            "open issues",
        ]
        .iter()
        .map(|q| q.to_string())
        .collect();
        let many = idx.search_many(&qs, 3, &s, None, None).unwrap();
        for (q, r) in qs.iter().zip(many) {
            assert_eq!(r, idx.search(q, 3, &s, None, None).unwrap());
        }
    }
}
