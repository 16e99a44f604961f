//! Query terms: a query's tokens and lexicon expansions, weighted, in first-seen order.

use rustc_hash::FxHashMap;

use crate::index::Index;
use crate::lexicon::Lexicon;
use crate::query::targets::TargetIds;
use crate::search::scratch::Scratch;
use crate::search::Request;
use crate::strtab::str_hash;

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
        let (toks, weights) = self.query_tokens(query);
        let mut out: Vec<(String, f64)> = Vec::new();
        let mut pos: FxHashMap<String, usize> = FxHashMap::default();
        let mut add = |t: &str, w: f64| match pos.get(t) {
            Some(&i) => {
                if w > out[i].1 {
                    out[i].1 = w;
                }
            }
            None => {
                pos.insert(t.to_string(), out.len());
                out.push((t.to_string(), w));
            }
        };
        for (t, &w) in toks.iter().zip(&weights) {
            add(t, w);
        }
        if let Some(lex) = lexicon {
            if expansion_weight > 0.0 {
                lex.expand_keyed(&toks, |t, key| {
                    add(t, expansion_weight * key_weight(&weights[key]));
                });
            }
        }
        out
    }

    /// The main stage's terms of analysed tokens and their weights (the explain path's;
    /// searches use [`Index::query_main_terms`]).
    pub(crate) fn main_terms(
        &self,
        toks: &[String],
        weights: &[f64],
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
        out: &mut TermList,
    ) {
        out.clear();
        for (t, &w) in toks.iter().zip(weights) {
            if let Some(id) = self.vocab.find(t, str_hash(t)) {
                out.add(id, w);
            }
        }
        if let Some(lex) = lexicon {
            if expansion_weight > 0.0 {
                lex.expand_keyed(toks, |t, key| {
                    if let Some(id) = self.vocab.find(t, str_hash(t)) {
                        out.add(id, expansion_weight * key_weight(&weights[key]));
                    }
                });
            }
        }
    }

    /// The main stage's terms of the analysed query in `sc`: its tokens in the vocabulary
    /// (weighted as in [`Index::query_terms`]), then the lexicon's expansions in the
    /// vocabulary.
    pub(crate) fn query_main_terms(&self, req: &Request<'_>, sc: &mut Scratch) {
        let Scratch {
            memo,
            qtoks,
            qweights,
            lex_ids,
            targets,
            terms,
            ..
        } = sc;
        terms.clear();
        for (&i, &w) in qtoks.iter().zip(qweights.iter()) {
            let t = memo.toks[i];
            let id = if t.vocab_of == self.uid {
                t.vocab_id
            } else {
                let id = self.vocab.find(memo.token(&t), t.hash);
                memo.toks[i].vocab_of = self.uid;
                memo.toks[i].vocab_id = id;
                id
            };
            if let Some(id) = id {
                terms.add(id, w);
            }
        }
        let Some(lex) = req.lexicon else {
            return;
        };
        if req.expansion_weight > 0.0 {
            lex_ids.clear();
            for &i in qtoks.iter() {
                let t = memo.toks[i];
                let id = if t.lex_of == lex.uid() {
                    t.lex_id
                } else {
                    let id = lex.word_id(memo.token(&t), t.hash);
                    memo.toks[i].lex_of = lex.uid();
                    memo.toks[i].lex_id = id;
                    id
                };
                lex_ids.push(id);
            }
            let (known, stamp) = targets.table(self.uid, lex);
            lex.expand_ids(lex_ids, |slots, key| {
                let weight = req.expansion_weight * key_weight(&qweights[key]);
                for slot in slots {
                    let entry = &mut known[slot];
                    if entry.0 != stamp {
                        let (t, h) = lex.target(slot);
                        *entry = (stamp, self.vocab.find(t, h).unwrap_or(TargetIds::ABSENT));
                    }
                    if entry.1 != TargetIds::ABSENT {
                        terms.add(entry.1, weight);
                    }
                }
            });
        }
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
}
