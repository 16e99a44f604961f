//! Group names and aliases as analysed terms, and which of them a query mentions.
//!
//! The rule is docs/analysis.md §8: a group is mentioned when every term of one of its
//! names or aliases is among the query's terms (its own tokens and the lexicon's
//! expansions, any weight, in or out of the index's vocabulary). Groups come back in the
//! order the query's terms first reach one of their aliases. The pure engine's twin is
//! `python/toolsurface/retrieval/alias_match.py`.

use rustc_hash::FxHashMap;

use crate::index::Index;
use crate::lexicon::Lexicon;
use crate::query::terms::{build_terms, TextTerms};
use crate::search::scratch::with_scratch;
use crate::strtab::str_hash;

/// The analysed names and aliases of a registry's groups, numbered by the caller.
#[derive(Clone, Debug, Default)]
pub struct Aliases {
    /// Per alias: its group's number and its terms with their hashes.
    aliases: Vec<(u32, Vec<(String, u64)>)>,
    /// Per first term: the aliases that start with it, in the order given.
    first: FxHashMap<String, Vec<usize>>,
}

impl Aliases {
    /// Aliases from `(group, terms)` pairs (terms already analysed); one with no terms is
    /// left out, and one equal to an earlier one (same group, same set of terms) too.
    pub fn new(entries: Vec<(u32, Vec<String>)>) -> Self {
        let mut made = Aliases::default();
        for (group, terms) in entries {
            let Some(head) = terms.first().cloned() else {
                continue;
            };
            let mut set: Vec<&String> = terms.iter().collect();
            set.sort();
            set.dedup();
            let bucket = made.first.entry(head).or_default();
            let duplicate = bucket.iter().any(|&i| {
                let (g, ref had) = made.aliases[i];
                let mut old: Vec<&String> = had.iter().map(|(t, _)| t).collect();
                old.sort();
                old.dedup();
                g == group && old == set
            });
            if !duplicate {
                bucket.push(made.aliases.len());
                let hashed = terms.iter().map(|t| (t.clone(), str_hash(t))).collect();
                made.aliases.push((group, hashed));
            }
        }
        made
    }

    /// Whether there is no alias at all.
    pub fn is_empty(&self) -> bool {
        self.aliases.is_empty()
    }
}

impl Index {
    /// The groups `query` mentions (§8), each once, in the order its terms first reach
    /// one of their aliases: the terms of [`Index::query_terms`], matched as text.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsurface_core::{Aliases, Analyzer, CharTable, Index};
    ///
    /// let table =
    ///     CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))?;
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
    /// assert_eq!(index.mentions("post the jira link on slack", None, 0.6, &aliases), [1, 0]);
    /// assert!(index.mentions("post a link", None, 0.6, &aliases).is_empty());
    /// # Ok::<(), String>(())
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
            self.analyse_query(query, sc);
            let mut text = TextTerms::default();
            build_terms(&mut text, sc, lexicon, expansion_weight);
            let terms = &text.0;
            let mut found: Vec<u32> = Vec::new();
            for &(id, _) in &sc.terms.items {
                let Some(bucket) = aliases.first.get(terms.get(id as usize)) else {
                    continue;
                };
                for &i in bucket {
                    let (group, ref needed) = aliases.aliases[i];
                    if !found.contains(&group)
                        && needed.iter().all(|(t, h)| terms.find(t, *h).is_some())
                    {
                        found.push(group);
                    }
                }
            }
            found
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn every_term_of_an_alias_is_needed_and_duplicates_are_one() {
        let idx = catalogue();
        let an = analyzer();
        let aliases = Aliases::new(vec![
            (0, an.tokens("github pull")),
            (0, an.tokens("github pull github")),
            (0, an.tokens("pull github")),
            (1, an.tokens("slack")),
            (2, Vec::new()),
        ]);
        // The second is the first's set under the same first term: one alias.
        assert_eq!(aliases.aliases.len(), 3);
        assert_eq!(
            idx.mentions("list pull requests on github", None, 0.6, &aliases),
            [0]
        );
        assert!(idx
            .mentions("list pull requests", None, 0.6, &aliases)
            .is_empty());
        assert_eq!(
            idx.mentions("slack and github pulls", None, 0.6, &aliases),
            [1, 0]
        );
        assert!(idx
            .mentions("slack", None, 0.6, &Aliases::default())
            .is_empty());
    }
}
