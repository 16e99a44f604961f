//! [`Searcher`]: the search of one index, the top of the crate and the only place that
//! borrows a thread's scratch (`scratch.rs`): it lends the query layer its buffers, runs
//! the scan, and answers searches, batches, boosted searches, explanations, a query's
//! terms and the groups it mentions.

use rayon::prelude::*;

use crate::error::Error;
use crate::index::core::Index;
use crate::index::filter::Filter;
use crate::lexicon::Lexicon;
use crate::query::aliases::Aliases;
use crate::query::fuzzy::fallback_terms;
use crate::query::terms::{main_terms, text_terms};
use crate::query::tokens::analyse_query;
use crate::scoring::settings::Settings;
use crate::search::boosted::{factor, Boost};
use crate::search::explain::{explain_terms, Explanation};
use crate::search::request::{Request, SearchResult};
use crate::search::rules::BoostRules;
use crate::search::scan::scan;
use crate::search::scratch::{with_scratch, Scratch};

/// The searches of one index. It borrows the index and holds nothing else: make one where
/// it is needed (`Searcher::new(&index)` costs a pointer copy); the per-call settings,
/// lexicon and filter are arguments, checked on each call.
#[derive(Clone, Copy, Debug)]
pub struct Searcher<'a> {
    index: &'a Index,
}

/// The search of `query` in `sc`: the main stage, and the fallback when it found nothing;
/// each hit's score times its factor under `boosts` (none: the plain search).
pub(crate) fn search_in(
    index: &Index,
    query: &str,
    req: &Request<'_>,
    boosts: &[Boost<'_>],
    sc: &mut Scratch,
) -> SearchResult {
    analyse_query(&index.analyzer, query, &mut sc.query);
    search_analysed(index, req, boosts, sc)
}

/// [`search_in`] of the query analysed into `sc` (`analyse_query`).
fn search_analysed(
    index: &Index,
    req: &Request<'_>,
    boosts: &[Boost<'_>],
    sc: &mut Scratch,
) -> SearchResult {
    main_terms(index, &mut sc.query, req.lexicon, req.expansion_weight);
    search_terms(index, req, boosts, sc)
}

/// [`search_in`] of the query whose search terms are built in `sc` (`main_terms`).
fn search_terms(
    index: &Index,
    req: &Request<'_>,
    boosts: &[Boost<'_>],
    sc: &mut Scratch,
) -> SearchResult {
    let (terms, accum) = (&sc.query.terms, &mut sc.accum);
    // A request whose terms are only function words' matches nothing (§4).
    let found = sc.query.content && scan(index, terms, req.sat, req.k, req.allowed, boosts, accum);
    let fallback = !found;
    if fallback {
        fallback_terms(index, &mut sc.query);
        let (terms, accum) = (&sc.query.terms, &mut sc.accum);
        scan(index, terms, req.sat, req.k, req.allowed, boosts, accum);
    }
    let top = &sc.accum.top;
    let k = req.k.min(top.len());
    SearchResult {
        docs: top[..k].iter().map(|h| h.doc).collect(),
        scores: top[..k].iter().map(|h| h.score).collect(),
        fallback,
    }
}

/// The search of `query` in `sc` under `rules`: its boosts found, then the search with
/// them; with each hit's factor (1 outside every boost).
pub(crate) fn search_ruled_in(
    index: &Index,
    query: &str,
    req: &Request<'_>,
    rules: &BoostRules,
    sc: &mut Scratch,
) -> (SearchResult, Vec<f64>) {
    // One analysis: the rules read the query's search terms (and probe its tokens for the
    // alias terms outside the vocabulary), and leave those terms for the scan.
    analyse_query(&index.analyzer, query, &mut sc.query);
    let found = rules.found(
        index,
        query,
        req.lexicon,
        req.expansion_weight,
        req.allowed,
        sc,
    );
    let boosts = found.boosts(rules);
    let result = search_terms(index, req, &boosts, sc);
    let factors = result.docs.iter().map(|&d| factor(d, &boosts)).collect();
    (result, factors)
}

impl<'a> Searcher<'a> {
    /// The searcher of `index`.
    pub fn new(index: &'a Index) -> Self {
        Searcher { index }
    }

    /// The index searched.
    pub fn index(&self) -> &'a Index {
        self.index
    }

    /// The `k` best documents for `query`, best first (score descending, then name).
    /// When nothing scores, the trigram fallback runs and `fallback` is set. `allowed`, if
    /// given, is the only documents that may be returned ([`Index::make_filter`]); invalid
    /// `settings` are an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Analyzer, CharTable, Index, Searcher, Settings};
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
    /// let searcher = Searcher::new(&index);
    ///
    /// let hits = searcher.search("list pull requests", 10, &settings, None, None)?;
    /// assert_eq!(index.name(hits.docs[0] as usize), "github__list_pull_requests");
    /// assert_eq!(hits.docs.len(), 2); // "list" is in both GitHub tools, nothing in Slack's
    /// assert!(hits.scores[0] > hits.scores[1]);
    ///
    /// // Only the documents a filter admits.
    /// let only_issues = index.make_filter(&[0])?;
    /// let hits = searcher.search("list pull requests", 10, &settings, None, Some(&only_issues))?;
    /// assert_eq!(hits.docs, [0]);
    /// # Ok::<(), toolsurface_core::Error>(())
    /// ```
    pub fn search(
        &self,
        query: &str,
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
    ) -> Result<SearchResult, Error> {
        settings.validate()?;
        let sat = self.index.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(with_scratch(|sc| {
            search_in(self.index, query, &req, &[], sc)
        }))
    }

    /// [`Searcher::search`] for each query, in parallel across the rayon pool; results in
    /// order.
    pub fn search_many(
        &self,
        queries: &[String],
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
    ) -> Result<Vec<SearchResult>, Error> {
        settings.validate()?;
        let sat = self.index.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(queries
            .par_iter()
            .map(|q| with_scratch(|sc| search_in(self.index, q, &req, &[], sc)))
            .collect())
    }

    /// The `k` best documents for `query` with `boosts` applied, best first (score
    /// descending, then name): every hit of [`Searcher::search`]'s ranking scores its score
    /// times the factors of the boosts that hold it, in their order, and the best `k` of
    /// those are the answer, found in one scan (the fallback's, when nothing scores, as a
    /// plain search). A factor that is not finite or is below 1 is an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Analyzer, Boost, CharTable, Index, Searcher, Settings};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
    /// let analyzer = Arc::new(Analyzer::new(table, ["the"]));
    /// let doc = |name: &str, summary: &str| [name, "", summary, "", "", ""].map(String::from);
    /// let fields = vec![
    ///     doc("docker__list_containers", "List the containers."),
    ///     doc("docker__run_container", "Run a container."),
    /// ];
    /// let names = fields.iter().map(|f| f[0].clone()).collect();
    /// let index = Index::build(analyzer, names, fields)?;
    /// let settings = Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.5; 6], 1.2, 0.6);
    /// let searcher = Searcher::new(&index);
    ///
    /// let plain = searcher.search("what's running in docker", 2, &settings, None, None)?;
    /// assert_eq!(plain.docs, [1, 0]);
    /// let reading = index.make_filter(&[0])?;
    /// let boost = Boost { members: &reading, factor: 10.0 };
    /// let hits =
    ///     searcher.search_boosted("what's running in docker", 2, &settings, None, None, &[boost])?;
    /// assert_eq!(hits.docs, [0, 1]);
    /// assert_eq!(hits.scores[0], plain.scores[1] * 10.0);
    /// # Ok::<(), toolsurface_core::Error>(())
    /// ```
    pub fn search_boosted(
        &self,
        query: &str,
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
        boosts: &[Boost<'_>],
    ) -> Result<SearchResult, Error> {
        settings.validate()?;
        if let Some(b) = boosts
            .iter()
            .find(|b| !(b.factor.is_finite() && b.factor >= 1.0))
        {
            return Err(Error::BoostFactor(b.factor));
        }
        let sat = self.index.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(with_scratch(|sc| {
            search_in(self.index, query, &req, boosts, sc)
        }))
    }

    /// The `k` best documents for `query` under a registry's boost `rules`, in one call:
    /// the groups it mentions (§8) and whether it asks (§10) are found here, and the
    /// search ranks with the boosts they make, as [`Searcher::search_boosted`] does (a
    /// mention's when a mentioned group has an `allowed` document, a question's when an
    /// `allowed` document only reads). With each hit, the product of the factors
    /// of the boosts that hold it (1 outside every boost), for an explanation. Rules made
    /// for another index are an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Aliases, Analyzer, BoostRules, CharTable, Index, Searcher, Settings};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
    /// let analyzer = Arc::new(Analyzer::new(table, ["the", "in"]));
    /// let doc = |name: &str, summary: &str| [name, "", summary, "", "", ""].map(String::from);
    /// let fields = vec![
    ///     doc("docker__list_containers", "List the containers."),
    ///     doc("docker__run_container", "Run a container."),
    ///     doc("podman__run_container", "Run a container."),
    /// ];
    /// let names = fields.iter().map(|f| f[0].clone()).collect();
    /// let index = Index::build(Arc::clone(&analyzer), names, fields)?;
    /// let settings = Settings::new([3.0, 2.5, 2.0, 1.0, 0.4, 1.0], [0.5; 6], 1.2, 0.6);
    /// let rules = BoostRules::new(
    ///     &index,
    ///     &Aliases::new(vec![(0, analyzer.tokens("docker")), (1, analyzer.tokens("podman"))]),
    ///     &[vec![0, 1], vec![2]],  // each group's documents
    ///     &[0],                    // the documents that only read
    ///     &["what's".to_string()], // question words
    ///     1.5,                     // a mention's factor
    ///     10.0,                    // a question's factor
    /// )?;
    /// let searcher = Searcher::new(&index);
    ///
    /// // "podman" names a group: its tool is raised.
    /// let (hits, factors) = searcher.search_ruled("run a podman container", 3, &settings, None, None, &rules)?;
    /// assert_eq!((hits.docs[0], factors[0]), (2, 1.5));
    /// // A question raises the tool that only reads; "docker" raises both of its group.
    /// let (hits, factors) = searcher.search_ruled("what's running in docker", 3, &settings, None, None, &rules)?;
    /// assert_eq!((hits.docs[0], factors[0]), (0, 15.0));
    /// assert_eq!(factors[1], 1.5);
    /// # Ok::<(), toolsurface_core::Error>(())
    /// ```
    pub fn search_ruled(
        &self,
        query: &str,
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
        rules: &BoostRules,
    ) -> Result<(SearchResult, Vec<f64>), Error> {
        settings.validate()?;
        rules.check(self.index)?;
        let sat = self.index.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(with_scratch(|sc| {
            search_ruled_in(self.index, query, &req, rules, sc)
        }))
    }

    /// [`Searcher::search_ruled`] for each query, in parallel across the rayon pool;
    /// results in order.
    pub fn search_many_ruled(
        &self,
        queries: &[String],
        k: usize,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        allowed: Option<&Filter>,
        rules: &BoostRules,
    ) -> Result<Vec<(SearchResult, Vec<f64>)>, Error> {
        settings.validate()?;
        rules.check(self.index)?;
        let sat = self.index.sat_table(settings);
        let req = Request::new(k, settings, &sat, lexicon, allowed);
        Ok(queries
            .par_iter()
            .map(|q| with_scratch(|sc| search_ruled_in(self.index, q, &req, rules, sc)))
            .collect())
    }

    /// Per matched term of `doc`: the term, its query weight and each field's contribution
    /// to the score (the fallback's terms when `fallback`).
    pub fn explain(
        &self,
        query: &str,
        doc: i64,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
        fallback: bool,
    ) -> Result<Vec<Explanation>, Error> {
        settings.validate()?;
        let doc = self.index.check_doc(doc)?;
        let terms = with_scratch(|sc| {
            analyse_query(&self.index.analyzer, query, &mut sc.query);
            if fallback {
                fallback_terms(self.index, &mut sc.query);
            } else {
                main_terms(
                    self.index,
                    &mut sc.query,
                    lexicon,
                    settings.expansion_weight,
                );
            }
            sc.query.terms.items.clone()
        });
        Ok(explain_terms(self.index, &terms, doc, settings))
    }

    /// The language `query` is read in (docs/analysis.md §4a): its code (`en`, `ru`, `de`,
    /// `es`, `fr`, `uk`, `zh`), or `latin` for Latin letters whose votes have no one leader.
    /// A caller that adds a ranking for one language (the semantic extra's English one)
    /// asks this rather than guessing from the letters.
    pub fn query_language(&self, query: &str) -> &'static str {
        with_scratch(|sc| {
            analyse_query(&self.index.analyzer, query, &mut sc.query);
            sc.query.lang.code()
        })
    }

    /// Weighted query terms in order: the query's own (weight 1, or the payload weight for a
    /// payload word or a number), then lexicon expansions (`expansion_weight` times the
    /// largest weight of the key's words); a repeated term keeps its first position and
    /// largest weight; the weak terms (docs/analysis.md §4, decided against this index's
    /// vocabulary) come after the strong ones. Terms outside the vocabulary are included.
    pub fn query_terms(
        &self,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
    ) -> Vec<(String, f64)> {
        with_scratch(|sc| {
            analyse_query(&self.index.analyzer, query, &mut sc.query);
            let text = text_terms(&mut sc.query, lexicon, expansion_weight, Some(self.index));
            sc.query
                .terms
                .items
                .iter()
                .map(|&(id, w)| (text.get(id as usize).to_string(), w))
                .collect()
        })
    }

    /// Whether `query` has content to search for: a term (its own or the lexicon's, in the
    /// vocabulary or not, as [`Searcher::query_terms`] lists) that is not only a function
    /// word's or its expansion's. A search of a query without content finds nothing: the
    /// registry answers it as an empty one.
    pub fn has_content(
        &self,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
    ) -> bool {
        with_scratch(|sc| {
            analyse_query(&self.index.analyzer, query, &mut sc.query);
            text_terms(&mut sc.query, lexicon, expansion_weight, Some(self.index));
            sc.query.content
        })
    }

    /// The groups `query` mentions (§8), each once, in the order its terms first reach
    /// one of their aliases: the terms of [`Searcher::query_terms`], matched as text.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Aliases, Analyzer, CharTable, Index, Searcher};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))?;
    /// let analyzer = Arc::new(Analyzer::new(table, ["the", "on"]));
    /// let doc = |name: &str| [name, "", "", "", "", ""].map(String::from);
    /// let fields = vec![doc("jira__search"), doc("slack__post")];
    /// let names = fields.iter().map(|f| f[0].clone()).collect();
    /// let index = Index::build(Arc::clone(&analyzer), names, fields)?;
    /// let aliases = Aliases::new(vec![
    ///     (0, analyzer.tokens("slack")),
    ///     (1, analyzer.tokens("jira")),
    ///     (1, analyzer.tokens("atlassian jira")),
    /// ]);
    /// let searcher = Searcher::new(&index);
    /// assert_eq!(searcher.mentions("post the jira link on slack", None, 0.6, &aliases), [1, 0]);
    /// assert!(searcher.mentions("post a link", None, 0.6, &aliases).is_empty());
    /// # Ok::<(), toolsurface_core::Error>(())
    /// ```
    pub fn mentions(
        &self,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
        aliases: &Aliases,
    ) -> Vec<u32> {
        if aliases.is_empty() {
            return Vec::new();
        }
        with_scratch(|sc| {
            analyse_query(&self.index.analyzer, query, &mut sc.query);
            let text = text_terms(&mut sc.query, lexicon, expansion_weight, Some(self.index));
            aliases.mentioned(&text, &sc.query.terms)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn query_language_is_the_analysis_reading_of_the_request() {
        let idx = catalogue();
        let searcher = Searcher::new(&idx);
        // Decided by letters only a language writes (no stopword list needed).
        assert_eq!(searcher.query_language("покажи задачи"), "ru");
        assert_eq!(searcher.query_language("створи нову гілку"), "uk");
        assert_eq!(searcher.query_language("删除文件"), "zh");
        assert_eq!(searcher.query_language("Größe ändern"), "de");
        assert_eq!(searcher.query_language(""), "latin");
    }

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
        let many = Searcher::new(&idx)
            .search_many(&qs, 3, &s, None, None)
            .unwrap();
        for (q, r) in qs.iter().zip(many) {
            assert_eq!(r, Searcher::new(&idx).search(q, 3, &s, None, None).unwrap());
        }
    }

    #[test]
    fn filter_expansion_and_query_terms() {
        let idx = catalogue();
        let s = settings();
        let f = idx.make_filter(&[2, 4]).unwrap();
        let r = Searcher::new(&idx)
            .search("list pull requests", 10, &s, None, Some(&f))
            .unwrap();
        assert_eq!(r.docs, vec![2]);
        assert!(idx
            .make_filter(&[5])
            .unwrap_err()
            .to_string()
            .contains("document id 5 out of range 0..5"));
        assert!(idx.make_filter(&[-1]).is_err());
        let lex = Lexicon::new(
            idx.analyzer(),
            &[("созвон".to_string(), "meeting event".to_string())],
        )
        .unwrap();
        let terms = Searcher::new(&idx).query_terms("созвон завтра event", Some(&lex), 0.6);
        assert_eq!(
            terms,
            vec![
                ("созвон".to_string(), 1.0),
                ("завтр".to_string(), 1.0),
                ("event".to_string(), 1.0),
                ("meet".to_string(), 0.6),
            ]
        );
        // An issue key expands to the `<issue-key>` source's targets, after the keys'
        // expansions, at the expansion weight times its own weight (half in the payload).
        let lex = Lexicon::new(
            idx.analyzer(),
            &[
                ("<issue-key>".to_string(), "issue".to_string()),
                ("созвон".to_string(), "meeting".to_string()),
            ],
        )
        .unwrap();
        let terms = Searcher::new(&idx).query_terms("созвон ENG-12 \"see OPS-3\"", Some(&lex), 0.6);
        let weight = |t: &str| terms.iter().find(|(x, _)| x == t).map(|&(_, w)| w);
        assert_eq!(terms.last().unwrap().0, "issu");
        assert_eq!(weight("meet"), Some(0.6));
        assert_eq!(weight("issu"), Some(0.6));
        let terms = Searcher::new(&idx).query_terms("said \"see OPS-3\"", Some(&lex), 0.6);
        assert_eq!(terms.last().unwrap(), &("issu".to_string(), 0.3));
        assert!(Searcher::new(&idx)
            .query_terms("eng-12 Eng-12", Some(&lex), 0.6)
            .iter()
            .all(|(t, _)| t != "issu"));
        assert!(Searcher::new(&idx)
            .query_terms("ENG-12", Some(&lex), 0.0)
            .iter()
            .all(|(t, _)| t != "issu"));
        assert!(Searcher::new(&idx)
            .query_terms("ENG-12", None, 0.6)
            .iter()
            .all(|(t, _)| t != "issu"));
        let lex = Lexicon::new(
            idx.analyzer(),
            &[("созвон".to_string(), "meeting event".to_string())],
        )
        .unwrap();
        let r = Searcher::new(&idx)
            .search("созвон", 10, &s, Some(&lex), None)
            .unwrap();
        assert_eq!(idx.name(r.docs[0] as usize), "calendar__create_event");
        assert!(!r.fallback);
        let mut no_exp = s;
        no_exp.expansion_weight = 0.0;
        let r = Searcher::new(&idx)
            .search("созвон", 10, &no_exp, Some(&lex), None)
            .unwrap();
        assert!(r.fallback && r.docs.is_empty());
    }

    /// The two term spaces give one list: [`Searcher::query_terms`] less its terms outside the
    /// vocabulary is, term for term and weight for weight, what a search scans.
    #[test]
    fn query_terms_in_the_vocabulary_are_the_search_terms() {
        let idx = catalogue();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex = Lexicon::new(
            idx.analyzer(),
            &[e("созвон", "meeting event"), e("pr", "pull request")],
        )
        .unwrap();
        let queries = [
            "созвон завтра event",
            "list pr \"pull\" 42 pr",
            "send: созвон message",
            "",
        ];
        for q in queries {
            for (lexicon, ew) in [(None, 0.6), (Some(&lex), 0.6), (Some(&lex), 0.0)] {
                let texts: Vec<(String, f64)> = Searcher::new(&idx)
                    .query_terms(q, lexicon, ew)
                    .into_iter()
                    .filter(|(t, _)| idx.idf(t).is_some())
                    .collect();
                let ids = with_scratch(|sc| {
                    analyse_query(&idx.analyzer, q, &mut sc.query);
                    crate::query::terms::main_terms(&idx, &mut sc.query, lexicon, ew);
                    sc.query.terms.items.clone()
                });
                let named: Vec<(String, f64)> = ids
                    .iter()
                    .map(|&(id, w)| (idx.vocab.get(id as usize).to_string(), w))
                    .collect();
                assert_eq!(texts, named, "{q}");
            }
        }
    }
}
