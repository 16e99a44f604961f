//! Analysis of a run of documents into local terms and per-document counts (a build's
//! parallel step).

use crate::analysis::analyzer::{Analyzer, TokenScratch};
use crate::consts::N_FIELDS;
use crate::error::{to_u32, Error};
use crate::index::core::TF_BIG;
use crate::index::hot_memo::HotMemo;
use crate::strtab::{str_hash, StrTable};

/// Identifiers a build memo holds (per chunk of documents) before it starts over.
const BUILD_MEMO_IDENTS: usize = 1 << 20;
const BUILD_MEMO_BYTES: usize = 1 << 26;

/// What one worker makes of a run of documents: its own vocabulary and, per document,
/// field lengths and (local term id, per-field counts) pairs, the counts a byte each as in
/// the index (a [`TF_BIG`] byte: the exact counts are in `big`).
pub(crate) struct ChunkTerms {
    /// Local terms, by local id.
    pub(crate) terms: StrTable,
    pub(crate) lens: Vec<[u32; N_FIELDS]>,
    /// End of each document's pairs in `pairs`.
    pub(crate) doc_ends: Vec<usize>,
    pub(crate) pairs: Vec<(u32, [u8; N_FIELDS])>,
    /// (pair, exact counts) of the pairs with a [`TF_BIG`] byte, by pair.
    pub(crate) big: Vec<(u32, [u32; N_FIELDS])>,
}

/// A run of documents analysed ([`Index::analyse`](crate::Index::analyse)), to be made into
/// an index with the runs before and after it ([`Index::assemble`](crate::Index::assemble)).
/// A caller that makes a large catalogue's texts a part at a time analyses each part while
/// it makes the next.
pub struct AnalysedDocs {
    /// The analyser's id: a run is assembled only with the analyser that read it.
    pub(crate) analyser: u64,
    /// The run's chunks, in document order.
    pub(crate) chunks: Vec<ChunkTerms>,
    /// Documents in the run.
    pub(crate) docs: usize,
}

impl AnalysedDocs {
    /// How many documents the run holds.
    pub fn len(&self) -> usize {
        self.docs
    }

    /// Whether the run holds no document.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }
}

/// Analyse a run of documents into a [`ChunkTerms`]. Each distinct identifier is analysed
/// once (its local term ids are remembered, keyed by its text), and each distinct folded
/// word is stemmed once. The memo and the word map are [`StrTable`]s: keys packed in an
/// arena, 8-byte slots, so that the lookup every identifier costs stays in cache as much
/// as it can.
///
/// One function of some 140 lines on purpose: it is the build's hot loop, every identifier
/// touching the hot cache, the memo, the word map and the counts, which are its locals; the
/// miss path runs inside the analyzer's callback, which cannot return, so a failure is kept
/// aside and returned after it. Cut into functions, these would travel together as a
/// struct of a dozen borrows through the per-identifier path.
pub(crate) fn analyse_chunk<S: AsRef<str>>(
    an: &Analyzer,
    docs: &[[S; N_FIELDS]],
) -> Result<ChunkTerms, Error> {
    let mut scratch = TokenScratch::default();
    // Identifier -> range of `memo_ids`.
    let mut memo = StrTable::default();
    let mut memo_ranges: Vec<(u32, u32)> = Vec::new();
    let mut memo_ids: Vec<u32> = Vec::new();
    let mut hot = HotMemo::new(docs.len());
    // Folded word -> local id of its stem.
    let mut words = StrTable::default();
    let mut word_term: Vec<u32> = Vec::new();
    let mut terms = StrTable::default();
    // Per local term: (the last document that had it + 1, its counts in that document),
    // together so that an occurrence touches one cache line, not two.
    let mut counts: Vec<(u32, [u32; N_FIELDS])> = Vec::new();
    let mut doc_terms: Vec<u32> = Vec::new();
    // A field's identifiers and their inline keys.
    let mut idents: Vec<(&str, Option<[u64; 3]>, usize)> = Vec::new();
    let mut out = ChunkTerms {
        terms: StrTable::default(),
        lens: Vec::with_capacity(docs.len()),
        doc_ends: Vec::with_capacity(docs.len()),
        pairs: Vec::new(),
        big: Vec::new(),
    };
    let mut failure: Option<Error> = None;
    for (di, doc) in docs.iter().enumerate() {
        let mark = di as u32 + 1;
        doc_terms.clear();
        let mut lens = [0u32; N_FIELDS];
        for (f, text) in doc.iter().enumerate() {
            let mut n = 0usize;
            idents.clear();
            an.for_each_identifier(text.as_ref(), |ident| {
                let key = HotMemo::key(ident);
                idents.push((ident, key, key.map_or(0, |k| hot.set(&k))));
            });
            // Touch each identifier's set of the hot cache before using any: the loads are
            // independent, so their cache misses overlap instead of stalling one by one.
            let mut touch = 0u64;
            for &(_, key, set) in &idents {
                if key.is_some() {
                    touch ^= hot.touch(set);
                }
            }
            std::hint::black_box(touch);
            for &(ident, key, set) in &idents {
                let (a, b) = match key.and_then(|k| hot.get(set, &k)) {
                    Some(range) => range,
                    None => {
                        let h = str_hash(ident);
                        let range = match memo.find(ident, h) {
                            Some(e) => memo_ranges[e as usize],
                            None => {
                                if memo.len() >= BUILD_MEMO_IDENTS
                                    || memo.text_len() >= BUILD_MEMO_BYTES
                                {
                                    memo.clear();
                                    memo_ranges.clear();
                                    memo_ids.clear();
                                    hot.clear();
                                }
                                let a = memo_ids.len();
                                an.identifier_words(ident, &mut scratch, &mut |w: &str| {
                                    let wh = str_hash(w);
                                    let id = match words.find(w, wh) {
                                        Some(wid) => word_term[wid as usize],
                                        None => {
                                            let stem = an.stem(w);
                                            let inserted =
                                                terms.insert(&stem, str_hash(&stem)).and_then(
                                                    |(id, _)| words.insert(w, wh).map(|_| id),
                                                );
                                            match inserted {
                                                Ok(id) => {
                                                    word_term.push(id);
                                                    id
                                                }
                                                Err(e) => {
                                                    failure.get_or_insert(e);
                                                    return;
                                                }
                                            }
                                        }
                                    };
                                    memo_ids.push(id);
                                });
                                if let Some(e) = failure.take() {
                                    return Err(e);
                                }
                                // Within u32: the memo starts over before its identifiers' text
                                // reaches BUILD_MEMO_BYTES, and each id comes from a token of it.
                                let range = (a as u32, memo_ids.len() as u32);
                                memo.insert(ident, h)?;
                                memo_ranges.push(range);
                                range
                            }
                        };
                        if let Some(k) = key {
                            hot.put(set, k, range);
                        }
                        range
                    }
                };
                let (a, b) = (a as usize, b as usize);
                for &id in &memo_ids[a..b] {
                    let i = id as usize;
                    if i >= counts.len() {
                        counts.resize(i + 1, (0, [0; N_FIELDS]));
                    }
                    let (stamp, tf) = &mut counts[i];
                    if *stamp != mark {
                        *stamp = mark;
                        *tf = [0; N_FIELDS];
                        doc_terms.push(id);
                    }
                    tf[f] = tf[f].saturating_add(1);
                }
                n += b - a;
            }
            lens[f] = to_u32(n, "field token count")?;
        }
        out.lens.push(lens);
        for &id in &doc_terms {
            let tf = counts[id as usize].1;
            if tf.iter().any(|&x| x >= u32::from(TF_BIG)) {
                out.big
                    .push((to_u32(out.pairs.len(), "postings count")?, tf));
            }
            out.pairs
                .push((id, tf.map(|x| x.min(u32::from(TF_BIG)) as u8)));
        }
        out.doc_ends.push(out.pairs.len());
    }
    out.terms = terms;
    Ok(out)
}
