//! Group names and aliases as analysed terms, and which of them a query mentions.
//!
//! The rule is docs/analysis.md §8: a group is mentioned when every term of one of its
//! names or aliases is among the query's terms (its own tokens and the lexicon's
//! expansions, any weight, in or out of the index's vocabulary). Groups come back in the
//! order the query's terms first reach one of their aliases. The pure engine's twin is
//! `python/toolsurface/retrieval/alias_match.py`. The search layer builds the query's
//! terms (`Searcher::mentions`); this file holds the aliases and the match.

use rustc_hash::FxHashMap;

use crate::query::term_list::TermList;
use crate::strtab::{str_hash, StrTable};

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

    /// Each alias: its group and its terms with their hashes, in the order given.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, &[(String, u64)])> {
        self.aliases.iter().map(|(g, terms)| (*g, terms.as_slice()))
    }
}

impl Aliases {
    /// The groups whose aliases the query's `terms` (ids of the text table `text`, as
    /// `terms::text_terms` makes them) mention (§8), each once, in the order the terms
    /// first reach one of their aliases.
    pub(crate) fn mentioned(&self, text: &StrTable, terms: &TermList) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        for &(id, _) in &terms.items {
            let Some(bucket) = self.first.get(text.get(id as usize)) else {
                continue;
            };
            for &i in bucket {
                let (group, ref needed) = self.aliases[i];
                if !found.contains(&group) && needed.iter().all(|(t, h)| text.find(t, *h).is_some())
                {
                    found.push(group);
                }
            }
        }
        found
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
            Searcher::new(&idx).mentions("list pull requests on github", None, 0.6, &aliases),
            [0]
        );
        assert!(Searcher::new(&idx)
            .mentions("list pull requests", None, 0.6, &aliases)
            .is_empty());
        assert_eq!(
            Searcher::new(&idx).mentions("slack and github pulls", None, 0.6, &aliases),
            [1, 0]
        );
        assert!(Searcher::new(&idx)
            .mentions("slack", None, 0.6, &Aliases::default())
            .is_empty());
    }
}
