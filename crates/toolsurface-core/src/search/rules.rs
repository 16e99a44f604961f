//! A registry's boost rules, held by the core so that one call answers a search whatever
//! the request: a request that mentions a group (§8) raises the group's documents, and one
//! that asks (§10) raises the documents that only read. [`BoostRules`] holds what the
//! rules need (the groups' aliases and members, the read-only documents, the question
//! words, the factors); [`BoostRules::boosts`] finds a query's boosts, which
//! `search_boosted_in` applies. The pure engine's twin is
//! `python/toolsurface/retrieval/engine/pure_rules.py`.

use crate::error::{check_doc, to_u32, Error};
use crate::index::core::Index;
use crate::index::filter::Filter;
use crate::lexicon::Lexicon;
use crate::query::aliases::Aliases;
use crate::query::index_aliases::IndexAliases;
use crate::query::question::{is_question_spanned, QuestionWords};
use crate::query::terms::{main_terms, table_terms};
use crate::search::boosted::Boost;
use crate::search::scratch::Scratch;

/// What the boosts of a registry's searches are made of, for one index: checked once,
/// never changed (a registry makes new rules when its groups or tools change).
#[derive(Clone, Debug)]
pub struct BoostRules {
    /// Documents of the index the rules were made for.
    docs: usize,
    /// The groups' names and aliases, numbered as `members`, resolved against the index.
    aliases: IndexAliases,
    /// Every group's documents back to back, each group's ascending (one buffer, not a
    /// list per group: a registry may have a group per server, as many as tools).
    members: Vec<u32>,
    /// Per group number: the end of its documents in `members` (its start is the previous
    /// group's end).
    member_ends: Vec<u32>,
    /// What a mentioned group's documents are multiplied by (1: no mention boost).
    mention_factor: f64,
    /// The documents that only read.
    read_only: Filter,
    /// The words that make a request a question when it starts with one.
    question_words: QuestionWords,
    /// What a question's read-only documents are multiplied by (1: no question boost).
    question_factor: f64,
}

/// A factor is finite and at least 1 (1: the rule is off).
fn check_factor(factor: f64) -> Result<f64, Error> {
    if factor.is_finite() && factor >= 1.0 {
        Ok(factor)
    } else {
        Err(Error::BoostFactor(factor))
    }
}

/// The ids of `ids` checked against `n` documents, ascending and distinct.
fn doc_ids(ids: &[i64], n: usize) -> Result<Vec<u32>, Error> {
    let mut out = ids
        .iter()
        .map(|&i| check_doc(i, n).map(|d| d as u32))
        .collect::<Result<Vec<u32>, Error>>()?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The boosts of one search: the mention's documents (made for it) and whether the
/// question's apply; [`Found::boosts`] lends them as the scan takes them.
#[derive(Debug, Default)]
pub(crate) struct Found {
    mention: Option<(Filter, f64)>,
    question: Option<f64>,
}

impl Found {
    /// The boosts in their order (the mention's, then the question's), over `rules`.
    pub(crate) fn boosts<'a>(&'a self, rules: &'a BoostRules) -> Vec<Boost<'a>> {
        let mention = self.mention.as_ref().map(|(members, factor)| Boost {
            members,
            factor: *factor,
        });
        let question = self.question.map(|factor| Boost {
            members: &rules.read_only,
            factor,
        });
        mention.into_iter().chain(question).collect()
    }
}

impl BoostRules {
    /// The rules over `index`: `aliases` numbers the groups as `members` does (each group's
    /// document ids), `read_only` the documents that only read, `question_words` the
    /// words of §10 (folded here by the index's analyser). A factor of 1 turns its rule
    /// off; a factor below 1 or not finite, or an id out of range, is an error.
    pub fn new(
        index: &Index,
        aliases: &Aliases,
        members: &[Vec<i64>],
        read_only: &[i64],
        question_words: &[String],
        mention_factor: f64,
        question_factor: f64,
    ) -> Result<BoostRules, Error> {
        let docs = index.len();
        let mut flat: Vec<u32> = Vec::with_capacity(members.iter().map(Vec::len).sum());
        let mut member_ends: Vec<u32> = Vec::with_capacity(members.len());
        for ids in members {
            flat.extend(doc_ids(ids, docs)?);
            member_ends.push(to_u32(flat.len(), "group members")?);
        }
        Ok(BoostRules {
            docs,
            aliases: IndexAliases::new(aliases, index),
            members: flat,
            member_ends,
            mention_factor: check_factor(mention_factor)?,
            read_only: index.make_filter(read_only)?,
            question_words: QuestionWords::new(
                index.analyzer(),
                question_words.iter().map(String::as_str),
            ),
            question_factor: check_factor(question_factor)?,
        })
    }

    /// Group `g`'s documents, ascending (`None` past the last group).
    fn members_of(&self, g: usize) -> Option<&[u32]> {
        let end = *self.member_ends.get(g)? as usize;
        let start = if g == 0 {
            0
        } else {
            self.member_ends[g - 1] as usize
        };
        Some(&self.members[start..end])
    }

    /// Whether these rules were made for `index` (the same number of documents: a registry
    /// pairs rules with the index they were made from).
    pub(crate) fn check(&self, index: &Index) -> Result<(), Error> {
        if self.docs == index.len() {
            Ok(())
        } else {
            Err(Error::RulesIndex {
                rules: self.docs,
                index: index.len(),
            })
        }
    }

    /// The boosts of `query`, already analysed into `sc` (`analyse_query`), among the
    /// `allowed` documents: a mention's when it names a group with allowed documents, a
    /// question's when it asks and an allowed document only reads. Leaves the query's
    /// search terms (`main_terms`) in `sc` for the scan.
    pub(crate) fn found(
        &self,
        index: &Index,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
        allowed: Option<&Filter>,
        sc: &mut Scratch,
    ) -> Found {
        let reaches = |f: &Filter| !f.is_empty() && allowed.is_none_or(|a| f.intersects(a));
        let mut found = Found::default();
        let mentions = self.mention_factor > 1.0 && !self.aliases.is_empty();
        // The alias terms outside the vocabulary that the query has (a probe of their
        // table), before the search terms take the buffer.
        let mut oov: Vec<u32> = Vec::new();
        if mentions && self.aliases.oov.len() > 0 {
            table_terms(&mut sc.query, lexicon, expansion_weight, &self.aliases.oov);
            oov.extend(sc.query.terms.items.iter().map(|&(id, _)| id));
        }
        main_terms(index, &mut sc.query, lexicon, expansion_weight);
        if mentions {
            let groups = self.aliases.mentioned(&sc.query.terms, &oov);
            if !groups.is_empty() {
                let lists = groups.iter().filter_map(|&g| self.members_of(g as usize));
                let members = Filter::union_of(self.docs, lists);
                if reaches(&members) {
                    found.mention = Some((members, self.mention_factor));
                }
            }
        }
        if self.question_factor > 1.0
            && reaches(&self.read_only)
            // The analysis's payload ranges of this very query, read, not found again.
            && is_question_spanned(
                &index.analyzer,
                query,
                &self.question_words,
                &sc.query.spans,
            )
        {
            found.question = Some(self.question_factor);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::boosted::factor;
    use crate::search::searcher::Searcher;
    use crate::test_support::*;

    /// Groups `github` (docs 0 to 2) and `slack` (3); docs 0 and 2 only read.
    fn rules(idx: &Index, mention: f64, question: f64) -> BoostRules {
        let a = idx.analyzer();
        let aliases = Aliases::new(vec![(0, a.tokens("github")), (1, a.tokens("slack"))]);
        let words = ["list".to_string(), "what".to_string()];
        BoostRules::new(
            idx,
            &aliases,
            &[vec![0, 1, 2], vec![3]],
            &[0, 2],
            &words,
            mention,
            question,
        )
        .unwrap()
    }

    #[test]
    fn a_ruled_search_is_the_boosted_search_of_the_boosts_it_finds() {
        let idx = catalogue();
        let s = settings();
        let r = rules(&idx, 1.5, 1.3);
        let github = idx.make_filter(&[0, 1, 2]).unwrap();
        let slack = idx.make_filter(&[3]).unwrap();
        let reading = idx.make_filter(&[0, 2]).unwrap();
        let mention = |m| Boost {
            members: m,
            factor: 1.5,
        };
        let question = Boost {
            members: &reading,
            factor: 1.3,
        };
        let cases: Vec<(&str, Vec<Boost<'_>>)> = vec![
            ("open a pull request on github", vec![mention(&github)]),
            ("list the issues", vec![question]),
            ("what's new in github?", vec![mention(&github), question]),
            ("send a message in slack", vec![mention(&slack)]),
            ("create an event", vec![]),
        ];
        let only = idx.make_filter(&[1, 3, 4]).unwrap();
        for (q, boosts) in cases {
            for k in [1, 3, 10] {
                let (got, factors) = Searcher::new(&idx)
                    .search_ruled(q, k, &s, None, None, &r)
                    .unwrap();
                let want = Searcher::new(&idx)
                    .search_boosted(q, k, &s, None, None, &boosts)
                    .unwrap();
                assert_eq!(got, want, "{q:?}");
                let expect: Vec<f64> = got.docs.iter().map(|&d| factor(d, &boosts)).collect();
                assert_eq!(factors, expect, "{q:?}");
            }
            // Among admitted documents a boost whose documents are all out is not made:
            // "list the issues" asks, but no admitted document only reads.
            let (got, _) = Searcher::new(&idx)
                .search_ruled(q, 10, &s, None, Some(&only), &r)
                .unwrap();
            assert!(got.docs.iter().all(|&d| only.contains(d as usize)), "{q:?}");
        }
    }

    #[test]
    fn factors_of_one_turn_the_rules_off() {
        let idx = catalogue();
        let s = settings();
        let r = rules(&idx, 1.0, 1.0);
        for q in ["what's new in github?", "list the issues", "send a message"] {
            let (got, factors) = Searcher::new(&idx)
                .search_ruled(q, 5, &s, None, None, &r)
                .unwrap();
            assert_eq!(
                got,
                Searcher::new(&idx).search(q, 5, &s, None, None).unwrap()
            );
            assert!(factors.iter().all(|&f| f == 1.0));
        }
    }
}
