//! Query terms: a query's tokens and lexicon expansions, weighted, in first-seen order.
//!
//! One builder ([`build_terms`]) makes them for every caller; what a term is comes from a
//! [`TermSpace`]: an index's vocabulary ids for search and explain ([`VocabTerms`]), or the
//! terms' own text for [`Index::query_terms`] ([`TextTerms`]), which also lists the terms
//! outside the vocabulary.

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::index::Index;
use crate::lexicon::Lexicon;
use crate::query::memo::QueryMemo;
use crate::query::targets::TargetIds;
use crate::search::scratch::{with_scratch, Scratch};
use crate::strtab::StrTable;

/// Ordered query terms (vocabulary ids) with weights; adding a present term keeps the larger
/// weight and the first position.
#[derive(Debug, Default)]
pub(crate) struct TermList {
    pub(crate) items: Vec<(u32, f64)>,
    pub(crate) pos: FxHashMap<u32, usize>,
}

const TERM_LIST_LINEAR: usize = 32;

impl TermList {
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.pos.clear();
    }

    pub(crate) fn add(&mut self, id: u32, weight: f64) {
        let found = if self.items.len() <= TERM_LIST_LINEAR {
            self.items.iter().position(|&(t, _)| t == id)
        } else {
            if self.pos.is_empty() {
                self.pos
                    .extend(self.items.iter().enumerate().map(|(i, &(t, _))| (t, i)));
            }
            self.pos.get(&id).copied()
        };
        match found {
            Some(i) => {
                if weight > self.items[i].1 {
                    self.items[i].1 = weight;
                }
            }
            None => {
                if !self.pos.is_empty() {
                    self.pos.insert(id, self.items.len());
                }
                self.items.push((id, weight));
            }
        }
    }
}

/// The weight of a lexicon key's tokens: the largest (an expansion weighs
/// `expansion_weight` times this).
fn key_weight(weights: &[f64]) -> f64 {
    weights.iter().fold(0.0f64, |m, &w| m.max(w))
}

/// What [`build_terms`] makes of the query's tokens and of the lexicon's targets: ids of
/// terms, in one space.
pub(crate) trait TermSpace {
    /// The term of the memo's token `i`, if the space has one.
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32>;
    /// The terms of the targets `slots` of `lex` ([`Lexicon::target`]), each given to
    /// `add`, in order; `known` is the thread's table of looked-up targets.
    fn targets(
        &mut self,
        lex: &Lexicon,
        known: &mut TargetIds,
        slots: Range<usize>,
        add: impl FnMut(u32),
    );
}

/// The vocabulary of an index: a search's and an explanation's terms. Lookups go through the
/// memo's and the target table's caches.
pub(crate) struct VocabTerms<'a>(pub(crate) &'a Index);

impl TermSpace for VocabTerms<'_> {
    #[inline]
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32> {
        memo.vocab_id(i, self.0.uid, &self.0.vocab)
    }

    #[inline]
    fn targets(
        &mut self,
        lex: &Lexicon,
        known: &mut TargetIds,
        slots: Range<usize>,
        mut add: impl FnMut(u32),
    ) {
        let (known, stamp) = known.table(self.0.uid, lex);
        for slot in slots {
            let entry = &mut known[slot];
            if entry.0 != stamp {
                let (t, h) = lex.target(slot);
                *entry = (stamp, self.0.vocab.find(t, h).unwrap_or(TargetIds::ABSENT));
            }
            if entry.1 != TargetIds::ABSENT {
                add(entry.1);
            }
        }
    }
}

/// The terms' own text, numbered as first met: every token and target is a term, in the
/// vocabulary or not.
#[derive(Default)]
pub(crate) struct TextTerms(pub(crate) StrTable);

impl TermSpace for TextTerms {
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32> {
        let t = memo.toks[i];
        // Fails only past u32::MAX distinct terms, which no query analysed has.
        self.0.insert(memo.token(&t), t.hash).ok().map(|(id, _)| id)
    }

    fn targets(
        &mut self,
        lex: &Lexicon,
        _known: &mut TargetIds,
        slots: Range<usize>,
        mut add: impl FnMut(u32),
    ) {
        for slot in slots {
            let (t, h) = lex.target(slot);
            if let Ok((id, _)) = self.0.insert(t, h) {
                add(id);
            }
        }
    }
}

/// The terms of the query analysed into `sc` ([`Index::analyse_query`]), into `sc.terms`:
/// its tokens' terms, each weighted by its token's weight (1, or the payload weight for a
/// payload word or a number), then, with a lexicon and `expansion_weight > 0`, the terms
/// of the expansions of the longest keys, left to right, each weighing `expansion_weight`
/// times the largest weight of its key's tokens, then, for each issue-key identifier in
/// order, the targets of the lexicon's `<issue-key>` source at `expansion_weight` times the
/// identifier's weight. A repeated term keeps its first position and its largest weight
/// ([`TermList::add`]).
pub(crate) fn build_terms(
    space: &mut impl TermSpace,
    sc: &mut Scratch,
    lexicon: Option<&Lexicon>,
    expansion_weight: f64,
) {
    let Scratch {
        memo,
        qtoks,
        qweights,
        lex_ids,
        targets,
        terms,
        issue_keys,
        ..
    } = sc;
    terms.clear();
    for (&i, &w) in qtoks.iter().zip(qweights.iter()) {
        if let Some(id) = space.token(memo, i) {
            terms.add(id, w);
        }
    }
    let Some(lex) = lexicon else {
        return;
    };
    if expansion_weight > 0.0 {
        lex_ids.clear();
        lex_ids.extend(qtoks.iter().map(|&i| memo.lex_id(i, lex)));
        lex.expand_ids(lex_ids, |slots, key| {
            let weight = expansion_weight * key_weight(&qweights[key]);
            space.targets(lex, targets, slots, |id| terms.add(id, weight));
        });
        if let Some(slots) = lex.issue_key_slots() {
            for &w in issue_keys.iter() {
                let weight = expansion_weight * w;
                space.targets(lex, targets, slots.clone(), |id| terms.add(id, weight));
            }
        }
    }
}

impl Index {
    /// Weighted query terms in order: the query's own (weight 1, or the payload weight for a
    /// payload word or a number), then lexicon expansions (`expansion_weight` times the
    /// largest weight of the key's words); a repeated term keeps its first position and
    /// largest weight. Terms outside the vocabulary are included.
    pub fn query_terms(
        &self,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
    ) -> Vec<(String, f64)> {
        with_scratch(|sc| {
            self.analyse_query(query, sc);
            let mut text = TextTerms::default();
            build_terms(&mut text, sc, lexicon, expansion_weight);
            sc.terms
                .items
                .iter()
                .map(|&(id, w)| (text.0.get(id as usize).to_string(), w))
                .collect()
        })
    }

    /// The main stage's terms of the query analysed into `sc`, in `sc.terms`: its terms in
    /// the index's vocabulary (see [`build_terms`]).
    #[inline]
    pub(crate) fn main_terms(
        &self,
        sc: &mut Scratch,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
    ) {
        build_terms(&mut VocabTerms(self), sc, lexicon, expansion_weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn filter_expansion_and_query_terms() {
        let idx = catalogue();
        let s = settings();
        let f = idx.make_filter(&[2, 4]).unwrap();
        let r = idx
            .search("list pull requests", 10, &s, None, Some(&f))
            .unwrap();
        assert_eq!(r.docs, vec![2]);
        assert!(idx
            .make_filter(&[5])
            .unwrap_err()
            .contains("document id 5 out of range 0..5"));
        assert!(idx.make_filter(&[-1]).is_err());
        let lex = Lexicon::new(
            idx.analyzer(),
            &[("созвон".to_string(), "meeting event".to_string())],
        )
        .unwrap();
        let terms = idx.query_terms("созвон завтра event", Some(&lex), 0.6);
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
        let terms = idx.query_terms("созвон ENG-12 \"see OPS-3\"", Some(&lex), 0.6);
        let weight = |t: &str| terms.iter().find(|(x, _)| x == t).map(|&(_, w)| w);
        assert_eq!(terms.last().unwrap().0, "issu");
        assert_eq!(weight("meet"), Some(0.6));
        assert_eq!(weight("issu"), Some(0.6));
        let terms = idx.query_terms("said \"see OPS-3\"", Some(&lex), 0.6);
        assert_eq!(terms.last().unwrap(), &("issu".to_string(), 0.3));
        assert!(idx
            .query_terms("eng-12 Eng-12", Some(&lex), 0.6)
            .iter()
            .all(|(t, _)| t != "issu"));
        assert!(idx
            .query_terms("ENG-12", Some(&lex), 0.0)
            .iter()
            .all(|(t, _)| t != "issu"));
        assert!(idx
            .query_terms("ENG-12", None, 0.6)
            .iter()
            .all(|(t, _)| t != "issu"));
        let lex = Lexicon::new(
            idx.analyzer(),
            &[("созвон".to_string(), "meeting event".to_string())],
        )
        .unwrap();
        let r = idx.search("созвон", 10, &s, Some(&lex), None).unwrap();
        assert_eq!(idx.name(r.docs[0] as usize), "calendar__create_event");
        assert!(!r.fallback);
        let mut no_exp = s;
        no_exp.expansion_weight = 0.0;
        let r = idx.search("созвон", 10, &no_exp, Some(&lex), None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
    }

    #[test]
    fn keeps_first_position_and_largest_weight_past_the_linear_limit() {
        let mut t = TermList::default();
        for round in 0..3 {
            for id in 0..100u32 {
                t.add(id, f64::from(round) * 0.5 + f64::from(id % 3));
            }
            t.add(7, 0.1);
        }
        assert_eq!(t.items.len(), 100);
        for (i, &(id, w)) in t.items.iter().enumerate() {
            assert_eq!(id as usize, i);
            assert_eq!(w, 1.0 + f64::from(id % 3));
        }
        t.clear();
        t.add(5, 1.0);
        assert_eq!(t.items, vec![(5, 1.0)]);
    }

    /// The two term spaces give one list: [`Index::query_terms`] less its terms outside the
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
                let texts: Vec<(String, f64)> = idx
                    .query_terms(q, lexicon, ew)
                    .into_iter()
                    .filter(|(t, _)| idx.idf(t).is_some())
                    .collect();
                let ids = with_scratch(|sc| {
                    idx.analyse_query(q, sc);
                    idx.main_terms(sc, lexicon, ew);
                    sc.terms.items.clone()
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
