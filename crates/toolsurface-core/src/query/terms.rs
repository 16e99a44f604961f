//! Query terms: a query's tokens and lexicon expansions, weighted, in first-seen order.
//!
//! One builder ([`build_terms`]) makes them for every caller; what a term is comes from a
//! [`TermSpace`]: an index's vocabulary ids for search and explain ([`main_terms`]), or the
//! terms' own text for `Searcher::query_terms` and mentions ([`text_terms`]), which also
//! lists the terms outside the vocabulary. The terms go into the caller's
//! [`QueryBuffers::terms`], from the tokens `query/tokens.rs` left there.

use std::ops::Range;

use crate::analysis::language::request_form;
use crate::index::core::Index;
use crate::lexicon::{Lexicon, NO_WORD};
use crate::query::buffers::QueryBuffers;
use crate::query::memo::QueryMemo;
use crate::query::targets::TargetIds;
use crate::strtab::StrTable;

/// The weight of a lexicon key's tokens: the largest (an expansion weighs
/// `expansion_weight` times this).
fn key_weight(weights: &[f64]) -> f64 {
    weights.iter().fold(0.0f64, |m, &w| m.max(w))
}

/// What [`build_terms`] makes of the query's tokens and of the lexicon's targets: ids of
/// terms, in one space.
trait TermSpace {
    /// The term of the memo's token `i`, if the space has one.
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32>;
    /// Whether the memo's token `i` is a term of the tools' own texts in the index searched
    /// (its own word reaches tools: what the lexicon adds to it is weak evidence); false with
    /// no index. A word only the learned field holds does not count: the host's users taught
    /// it, and the tools' texts reach only what the lexicon makes of it.
    fn in_index(&mut self, memo: &mut QueryMemo, i: usize) -> bool;
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
struct VocabTerms<'a>(&'a Index);

impl TermSpace for VocabTerms<'_> {
    #[inline]
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32> {
        memo.vocab_id(i, self.0.uid, &self.0.vocab)
    }

    #[inline]
    fn in_index(&mut self, memo: &mut QueryMemo, i: usize) -> bool {
        self.token(memo, i).is_some_and(|t| self.0.in_own_text(t))
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
/// vocabulary or not; the index, when given, says which tokens reach tools.
struct TextTerms<'a>(StrTable, Option<&'a Index>);

impl TermSpace for TextTerms<'_> {
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32> {
        let t = memo.toks[i];
        // Fails only past u32::MAX distinct terms, which no query analysed has.
        self.0.insert(memo.token(&t), t.hash).ok().map(|(id, _)| id)
    }

    fn in_index(&mut self, memo: &mut QueryMemo, i: usize) -> bool {
        self.1.is_some_and(|index| {
            memo.vocab_id(i, index.uid, &index.vocab)
                .is_some_and(|t| index.in_own_text(t))
        })
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

/// Only the terms found in a given table (the alias terms outside an index's vocabulary,
/// `index_aliases.rs`), numbered as the table numbers them: a probe, no insertion.
struct TableTerms<'a>(&'a StrTable);

impl TermSpace for TableTerms<'_> {
    #[inline]
    fn token(&mut self, memo: &mut QueryMemo, i: usize) -> Option<u32> {
        let t = memo.toks[i];
        self.0.find(memo.token(&t), t.hash)
    }

    fn in_index(&mut self, _memo: &mut QueryMemo, _i: usize) -> bool {
        false
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
            if let Some(id) = self.0.find(t, h) {
                add(id);
            }
        }
    }
}

/// The terms of the query analysed into `bufs` (`tokens::analyse_query`), into `bufs.terms`:
/// its tokens' terms, each weighted by its token's weight (1, or the payload weight for a
/// payload word or a number), then, with a lexicon and `expansion_weight > 0`, the terms
/// of the expansions of the longest keys, left to right, each weighing `expansion_weight`
/// times the largest weight of its key's tokens, then, for each issue-key identifier in
/// order, the targets of the lexicon's `<issue-key>` source at `expansion_weight` times the
/// identifier's weight. A repeated term keeps its first position and its largest weight
/// ([`TermList::add`]). `bufs.content` says whether a term came from a token that is no
/// function word, from the expansion of a key that holds one, or from an issue key.
fn build_terms(
    space: &mut impl TermSpace,
    bufs: &mut QueryBuffers,
    lexicon: Option<&Lexicon>,
    expansion_weight: f64,
) {
    let QueryBuffers {
        memo,
        qtoks,
        qweights,
        lex_ids,
        applied,
        targets,
        terms,
        issue_keys,
        lang,
        content,
        joined,
        ..
    } = bufs;
    terms.clear();
    *content = false;
    for (&i, &w) in qtoks.iter().zip(qweights.iter()) {
        if let Some(id) = space.token(memo, i) {
            let function = memo.toks[i].function;
            terms.add_as(id, w, !function);
            *content |= !function;
        }
    }
    let Some(lex) = lexicon else {
        terms.partition();
        return;
    };
    if expansion_weight > 0.0 {
        lex_ids.clear();
        for (j, &i) in qtoks.iter().enumerate() {
            // A separable verb made whole is looked up before the token's own words.
            let whole = match joined.get(j) {
                Some(&Some((a, b, h, form))) => {
                    lex.reading_id(&memo.text[a..b], h, request_form(form, *lang))
                }
                _ => NO_WORD,
            };
            lex_ids.push(if whole != NO_WORD {
                whole
            } else {
                memo.lex_id(i, lex, *lang)
            });
        }
        // Per entry expanded (its first slot): the best weight, strength and content it
        // added. A term keeps its best weight and any strength, so an entry met again that
        // adds no more is not expanded again: a word repeated against a host's entry of
        // many targets cost the whole entry each time.
        applied.clear();
        lex.expand_ids(lex_ids, |slots, key| {
            let weight = expansion_weight * key_weight(&qweights[key.clone()]);
            // An expansion of function words only is no content either ("сколько"); one of
            // words that all reach tools themselves is weak evidence ("looking" -> search).
            let of_content = qtoks[key.clone()].iter().any(|&i| !memo.toks[i].function);
            let reached = qtoks[key].iter().all(|&i| space.in_index(memo, i));
            let strong = of_content && !reached;
            match applied.iter_mut().find(|a| a.0 == slots.start) {
                Some(a) => {
                    if weight <= a.1 && (!strong || a.2) && (!of_content || a.3) {
                        return;
                    }
                    a.1 = a.1.max(weight);
                    a.2 |= strong;
                    a.3 |= of_content;
                }
                None => applied.push((slots.start, weight, strong, of_content)),
            }
            space.targets(lex, targets, slots, |id| {
                terms.add_as(id, weight, strong);
                *content |= of_content;
            });
        });
        if let Some(slots) = lex.issue_key_slots() {
            for &w in issue_keys.iter() {
                let weight = expansion_weight * w;
                space.targets(lex, targets, slots.clone(), |id| {
                    terms.add(id, weight);
                    *content = true;
                });
            }
        }
    }
    terms.partition();
}

/// The main stage's terms of the query analysed into `bufs`, in `bufs.terms`: its terms in
/// `index`'s vocabulary (see [`build_terms`]).
#[inline]
pub(crate) fn main_terms(
    index: &Index,
    bufs: &mut QueryBuffers,
    lexicon: Option<&Lexicon>,
    expansion_weight: f64,
) {
    build_terms(&mut VocabTerms(index), bufs, lexicon, expansion_weight);
}

/// The query's terms (see [`build_terms`]) that are in `table`, as ids of `table`, in
/// `bufs.terms`; empty when `table` is.
pub(crate) fn table_terms(
    bufs: &mut QueryBuffers,
    lexicon: Option<&Lexicon>,
    expansion_weight: f64,
    table: &StrTable,
) {
    if table.len() == 0 {
        bufs.terms.clear();
        return;
    }
    build_terms(&mut TableTerms(table), bufs, lexicon, expansion_weight);
}

/// The terms of the query analysed into `bufs` as text, in or out of any vocabulary: their
/// ids in `bufs.terms` are ids of the returned table (see [`build_terms`]); `index` says
/// which expansions are weak, as a search of it has them (none without).
pub(crate) fn text_terms(
    bufs: &mut QueryBuffers,
    lexicon: Option<&Lexicon>,
    expansion_weight: f64,
    index: Option<&Index>,
) -> StrTable {
    let mut text = TextTerms(StrTable::default(), index);
    build_terms(&mut text, bufs, lexicon, expansion_weight);
    text.0
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    /// An expansion of words the index knows is weak: it weighs the tools the request's own
    /// words reach and ranks no other; an expansion of words it does not know stands in for
    /// them.
    #[test]
    fn injected_terms_weigh_only_what_the_request_reaches() {
        let a = the_analyzer();
        let names = [
            "files__find",
            "places__nearby",
            "places__search",
            "web__search",
        ];
        let idx = Index::build(
            Arc::clone(&a),
            names.iter().map(|n| n.to_string()).collect(),
            vec![
                doc("files__find", "", "Find files.", "", ""),
                doc(
                    "places__nearby",
                    "",
                    "Restaurants nearby; look up a place.",
                    "",
                    "",
                ),
                doc("places__search", "", "Search restaurants.", "", ""),
                doc("web__search", "", "Search the web.", "", ""),
            ],
        )
        .unwrap();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex = Lexicon::new(&a, &[e("look", "search find"), e("zork", "web")]).unwrap();
        let s = settings();
        let search = Searcher::new(&idx);
        let r = search
            .search("looking for restaurants", 10, &s, Some(&lex), None)
            .unwrap();
        assert_eq!(r.docs, [1, 2], "{r:?}");
        let terms = main_terms_with(&idx, "looking for restaurants", &lex);
        assert_eq!((terms.items.len(), terms.weak), (4, 2));
        // "zork" is no word of the index: its expansion ranks on its own.
        let r = search.search("zork", 10, &s, Some(&lex), None).unwrap();
        assert_eq!(r.docs, [3]);
        // The query terms list the weak ones last, as the search scans them.
        let listed: Vec<String> = search
            .query_terms("look restaurants", Some(&lex), 0.6)
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(listed, ["look", "restaur", "search", "find"]);
    }

    fn main_terms_with(idx: &Index, q: &str, lex: &Lexicon) -> TermList {
        crate::search::scratch::with_scratch(|sc| {
            crate::query::tokens::analyse_query(&idx.analyzer, q, &mut sc.query);
            super::main_terms(idx, &mut sc.query, Some(lex), 0.6);
            std::mem::take(&mut sc.query.terms)
        })
    }
}
