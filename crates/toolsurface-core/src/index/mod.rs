//! Columnar BM25F index over five fields, its search, fallback and explain.
//!
//! Mirrors `PureIndex` of `python/toolsurface/retrieval/pure.py` expression for expression:
//! f64 everywhere, the same evaluation order, accumulation in query-term order, and ties
//! broken the same way (score descending, name ascending, then first-touch order).
//!
//! Layout, for the scan and for size:
//!
//! - the vocabulary and the names are strings in one arena each ([`StrTable`], [`Arena`]);
//! - the postings of term `t` are `term_start[t]..term_start[t + 1]` of `post_doc` (u32
//!   document ids, ascending) and `post_tf` (one byte a field; [`TF_BIG`] sends the rare
//!   posting with a count of 255 or more to `tf_big`, which holds its exact counts);
//! - a search reads only `post_doc` and the settings' table of saturated weights (one f64 a
//!   posting, and each term's largest, cached per settings value). Documents go in blocks
//!   of [`SCAN_BLOCK`] ids, which all use one block's accumulator slots (so they stay in
//!   cache); in a block every term, in query order, adds `(qw * idf) * sat` into the dense
//!   accumulator (no branch per posting), then the block's touched slots are read once
//!   each, zeroed for the next block, and offered to a
//!   bounded top-k (a score below the k-th best is rejected with one comparison), the
//!   postings of the terms of largest upper bound first, until the bounds of the terms
//!   left cannot reach the k-th best (their slots are then only zeroed). Ties
//!   (equal score and name) are ordered by first touch, worked out only when they occur;
//! - a build analyses runs of documents in parallel (each distinct identifier once per run,
//!   each distinct word stemmed once per build), merges the runs' vocabularies, and lays
//!   out postings and the trigram index in parallel.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, RwLock};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::{in_payload, Analyzer, TokenScratch};
use crate::lexicon::Lexicon;
use crate::strtab::{str_hash, Arena, StrTable, MIX};

/// Number of indexed fields: name, search_hint, summary, body, params.
pub const N_FIELDS: usize = 5;
/// Field names, in index order.
pub const FIELD_NAMES: [&str; N_FIELDS] = ["name", "search_hint", "summary", "body", "params"];
/// Saturated-weight tables kept (one per scoring settings value, least recently used out).
pub const SETTINGS_CACHE: usize = 8;
/// Query tokens and vocabulary terms shorter than this never take part in the fallback.
pub const FUZZY_MIN_CHARS: usize = 3;
/// Dice similarity of trigram sets a fuzzy match needs.
pub const FUZZY_MIN_SIMILARITY: f64 = 0.5;
/// Vocabulary terms a query token may bring in through the fallback.
pub const FUZZY_PER_TOKEN: usize = 3;
/// Query weight of a token of the request's payload (quoted text, the text after a colon:
/// what the action is given rather than the action; see [`Analyzer::payload_spans`]) and
/// of a number ([`Analyzer::is_number`]).
pub const PAYLOAD_WEIGHT: f64 = 0.5;

/// A field count of a posting that does not fit a byte: the exact counts are in `tf_big`.
const TF_BIG: u8 = u8::MAX;
/// Documents scored together: their accumulator slots (8 bytes each) stay in a core's L2,
/// and every block reuses the same slots, so a cold query misses on one block's slots only.
/// A power of two (slots are `doc & (SCAN_BLOCK - 1)`), at least 64 (a block's bitset is
/// whole words). 2^14 and 2^16 measured no better cold, 2^12 and 2^13 worse (more block
/// boundaries to find per term). Unit tests use small values so that small catalogues
/// take the paths large ones do: the re-walk of one block, the sweep of one block of fewer
/// slots than `SCAN_BLOCK`, and the sweep of several blocks.
#[cfg(not(test))]
const SCAN_BLOCK: usize = 1 << 15;
#[cfg(test)]
const SCAN_BLOCK: usize = 128;
/// From this many documents, a block's touched documents are found by a bitset sweep.
#[cfg(not(test))]
const SWEEP_MIN_DOCS: usize = 1 << 13;
#[cfg(test)]
const SWEEP_MIN_DOCS: usize = 50;
// A slot is `doc & (slots - 1)` and a block's bitset is whole words; smaller catalogues
// re-walk a single block.
const _: () = assert!(SCAN_BLOCK.is_power_of_two() && SCAN_BLOCK >= 64);
const _: () = assert!(SWEEP_MIN_DOCS <= SCAN_BLOCK);
/// Up to this `k`, the best hits are kept in a sorted array as they come; above it, all
/// hits are collected and partially sorted.
const TOP_INSERT_MAX: usize = 64;
/// The light terms' slots of a block are cleared in one sweep of the block's slots when
/// their postings number more than a quarter of its documents (sequential stores beat
/// that many scattered ones), else one by one.
const ZERO_FILL_RATIO: usize = 4;
/// Identifiers (and bytes of their tokens) the per-thread query memo holds before it starts
/// over.
const QUERY_MEMO_IDENTS: usize = 1 << 13;
const QUERY_MEMO_BYTES: usize = 1 << 18;
/// Identifiers a build memo holds (per chunk of documents) before it starts over.
const BUILD_MEMO_IDENTS: usize = 1 << 20;
const BUILD_MEMO_BYTES: usize = 1 << 26;

/// Scoring settings: BM25F field weights and `b`, `k1`, and the lexicon expansion weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Per-field weight (finite, >= 0).
    pub weights: [f64; N_FIELDS],
    /// Per-field length normalisation (within [0, 1]).
    pub b: [f64; N_FIELDS],
    /// Saturation (finite, > 0).
    pub k1: f64,
    /// Weight of lexicon expansions (finite, >= 0).
    pub expansion_weight: f64,
}

type ScoringKey = [u64; 2 * N_FIELDS + 1];

/// Python-like `repr` of a float, for error messages.
fn float_repr(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:?}")
    }
}

impl Settings {
    /// Settings with the given values (not yet validated).
    pub fn new(
        weights: [f64; N_FIELDS],
        b: [f64; N_FIELDS],
        k1: f64,
        expansion_weight: f64,
    ) -> Self {
        Settings {
            weights,
            b,
            k1,
            expansion_weight,
        }
    }

    /// An error for settings no score can be computed with (messages as the pure engine's).
    pub fn validate(&self) -> Result<(), String> {
        for &w in &self.weights {
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!(
                    "field weight {} must be finite and >= 0",
                    float_repr(w)
                ));
            }
        }
        for &x in &self.b {
            if !(x.is_finite() && (0.0..=1.0).contains(&x)) {
                return Err(format!("b {} must be within [0, 1]", float_repr(x)));
            }
        }
        if !(self.k1.is_finite() && self.k1 > 0.0) {
            return Err(format!("k1 {} must be finite and > 0", float_repr(self.k1)));
        }
        if !(self.expansion_weight.is_finite() && self.expansion_weight >= 0.0) {
            return Err(format!(
                "expansion_weight {} must be finite and >= 0",
                float_repr(self.expansion_weight)
            ));
        }
        Ok(())
    }

    fn key(&self) -> ScoringKey {
        let mut key = [0u64; 2 * N_FIELDS + 1];
        for f in 0..N_FIELDS {
            key[f] = self.weights[f].to_bits();
            key[N_FIELDS + f] = self.b[f].to_bits();
        }
        key[2 * N_FIELDS] = self.k1.to_bits();
        key
    }
}

/// The set of document ids a search may return (a bitset).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    bits: Vec<u64>,
    count: usize,
}

impl Filter {
    /// Whether `doc` is admitted.
    #[inline]
    pub fn contains(&self, doc: usize) -> bool {
        self.bits
            .get(doc / 64)
            .is_some_and(|w| (w >> (doc % 64)) & 1 == 1)
    }

    /// Number of distinct admitted ids.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no id is admitted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

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

/// One matched term of an explanation: term, query weight, per-field contributions.
pub type Explanation = (String, f64, [f64; N_FIELDS]);

/// Bounded LRU of saturated-weight tables, keyed by the bits of the scoring settings.
///
/// A search with the most recently used settings (the usual case) takes only the read lock;
/// the write lock is for reordering and inserting.
#[derive(Debug, Default)]
struct SatCache {
    // Most recently used last.
    entries: RwLock<Vec<(ScoringKey, Arc<SatTable>)>>,
}

/// What a search needs of one settings value: the saturated weight of every posting, and
/// each term's largest (an upper bound of its part of any score).
#[derive(Debug)]
struct SatTable {
    /// Per posting: `s / (k1 + s)`.
    sat: Box<[f64]>,
    /// Per term: the largest `sat` of its postings.
    term_max: Box<[f64]>,
}

impl SatCache {
    fn get(&self, key: &ScoringKey) -> Option<Arc<SatTable>> {
        {
            let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
            match entries.last() {
                Some((k, table)) if k == key => return Some(Arc::clone(table)),
                _ => {}
            }
            if !entries.iter().any(|(k, _)| k == key) {
                return None;
            }
        }
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        // Another thread may have evicted it meanwhile.
        let pos = entries.iter().position(|(k, _)| k == key)?;
        let entry = entries.remove(pos);
        let table = Arc::clone(&entry.1);
        entries.push(entry);
        Some(table)
    }

    fn insert(&self, key: ScoringKey, table: Arc<SatTable>) -> Arc<SatTable> {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if let Some(pos) = entries.iter().position(|(k, _)| *k == key) {
            // Another thread computed it meanwhile: keep one copy.
            let entry = entries.remove(pos);
            let existing = Arc::clone(&entry.1);
            entries.push(entry);
            return existing;
        }
        entries.push((key, Arc::clone(&table)));
        while entries.len() > SETTINGS_CACHE {
            entries.remove(0);
        }
        table
    }

    fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Ordered query terms (vocabulary ids) with weights; adding a present term keeps the larger
/// weight and the first position.
#[derive(Debug, Default)]
struct TermList {
    items: Vec<(u32, f64)>,
    pos: FxHashMap<u32, usize>,
}

const TERM_LIST_LINEAR: usize = 32;

impl TermList {
    fn clear(&mut self) {
        self.items.clear();
        self.pos.clear();
    }

    fn add(&mut self, id: u32, weight: f64) {
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

#[derive(Clone, Copy, Debug)]
struct Hit {
    score: f64,
    doc: u32,
}

/// Tokens of recent query identifiers, per thread: an identifier seen before costs one hash
/// lookup instead of splitting, folding, stopword and stem lookups. Tokens carry their
/// [`str_hash`], so the vocabulary and the lexicon look them up without hashing again.
#[derive(Debug, Default)]
struct QueryMemo {
    /// The analyzer the tokens come from ([`Analyzer::id`]); 0 for none.
    owner: u64,
    /// Identifier -> range of `toks`.
    map: FxHashMap<Box<str>, (usize, usize)>,
    /// Token text, back to back.
    text: String,
    /// The tokens, in `text`.
    toks: Vec<MemoTok>,
    /// Bytes of the identifiers held as keys.
    key_bytes: usize,
}

impl QueryMemo {
    fn reset(&mut self, owner: u64) {
        self.owner = owner;
        self.map.clear();
        self.text.clear();
        self.toks.clear();
        self.key_bytes = 0;
    }

    #[inline]
    fn token(&self, t: &MemoTok) -> &str {
        &self.text[t.start..t.end]
    }
}

/// No index or lexicon has this uid (they count up from 0 and 1).
const NOT_LOOKED_UP: u64 = u64::MAX;

/// A token of the query memo: its text, its [`str_hash`], and its last vocabulary and
/// lexicon lookups, each tagged with the uid of the index or lexicon it was made in
/// ([`NOT_LOOKED_UP`]: none yet), so that a word seen before costs no lookup.
#[derive(Clone, Copy, Debug)]
struct MemoTok {
    start: usize,
    end: usize,
    hash: u64,
    vocab_of: u64,
    vocab_id: Option<u32>,
    lex_of: u64,
    lex_id: u32,
}

/// Per-thread buffers of the query path.
#[derive(Debug, Default)]
struct Scratch {
    tok: TokenScratch,
    memo: QueryMemo,
    /// The query's tokens, as positions in `memo.toks`.
    qtoks: Vec<usize>,
    /// The weight of each query token (1, or [`PAYLOAD_WEIGHT`] in the payload).
    qweights: Vec<f64>,
    /// The query's payload ranges ([`Analyzer::payload_spans`]).
    spans: Vec<(usize, usize)>,
    /// The query tokens' lexicon word ids.
    lex_ids: Vec<u32>,
    /// The vocabulary ids of one lexicon's targets in one index, as they are looked up.
    targets: TargetIds,
    terms: TermList,
    accum: Accum,
    fuzzy: FuzzyScratch,
}

/// Per target of one lexicon ([`Lexicon::target_count`]), its id in one index's vocabulary
/// once looked up: a Russian request expands to a dozen English targets or more, and looking
/// each up by its text again was about a tenth of a query at 1,635 tools. A search of
/// another index or with another lexicon moves the stamp, which makes every slot unknown
/// without touching them (a thread alternating between registries pays no clearing).
#[derive(Debug, Default)]
struct TargetIds {
    /// The uids of the index and lexicon the table is for (an index's uid is never 0, so a
    /// new table is for none).
    index: u64,
    lexicon: u64,
    /// A slot is known when its stamp is this one.
    stamp: u32,
    /// Per target: (its stamp, its id or [`TargetIds::ABSENT`]).
    slots: Vec<(u32, u32)>,
}

impl TargetIds {
    /// Not in the vocabulary (whose ids are below `u32::MAX - 1`: the string table refuses
    /// more).
    const ABSENT: u32 = u32::MAX;

    /// The slots for `index`'s vocabulary and `lex`'s targets, and the stamp of the known.
    fn table(&mut self, index: u64, lex: &Lexicon) -> (&mut [(u32, u32)], u32) {
        let n = lex.target_count();
        if self.index != index || self.lexicon != lex.uid() || self.slots.len() != n {
            self.index = index;
            self.lexicon = lex.uid();
            self.stamp = self.stamp.wrapping_add(1);
            if self.stamp == 0 || self.slots.len() != n {
                // Another length, or the stamp come round: every slot unknown again.
                self.slots.clear();
                self.slots.resize(n, (0, 0));
                self.stamp = 1;
            }
        }
        (&mut self.slots, self.stamp)
    }
}

/// Score accumulator: a dense slot per document of one scan block (at most [`SCAN_BLOCK`]
/// slots, reused by each block in turn). Between blocks and searches every slot is 0.0 (the
/// collection pass restores that); `dirty` marks a search that did not finish (a panic),
/// so the next one clears all.
#[derive(Debug, Default)]
struct Accum {
    acc: Vec<f64>,
    dirty: bool,
    /// Per query term: (qw * idf, its postings not yet scanned).
    cursors: Vec<(f64, std::ops::Range<usize>)>,
    /// Documents of the current block touched (large catalogues).
    seen: Vec<u64>,
    top: Vec<Hit>,
    /// Small tops: per term its upper bound, the terms by bound (largest first), the sums
    /// of the bounds from each rank on, and each term's postings in the current block.
    ubs: Vec<f64>,
    rank: Vec<usize>,
    rest: Vec<f64>,
    spans: Vec<(usize, usize)>,
    /// Per term: how many of its postings left fall in the current block.
    ends: Vec<usize>,
}

/// Per term, how many of its postings left (`cursors`, each a range of `post_doc`, ids
/// ascending) are below `block_end`, into `ends`: what `partition_point` gives, found with
/// fewer cold reads. A binary search's probes depend on each other and land all over a long
/// list (about 15 of them, a cold miss each, for a common term at 100,000 tools, where they
/// were 15% of a cold query's scan). Instead, one pass reads every term's first and last id
/// (loads independent of each other, so their misses overlap) and guesses the boundary's
/// position by interpolation (ids are spread over the catalogue), and a second gallops from
/// the guess: its probes fall around the block's end, on lines the scan reads anyway.
fn block_ends(
    post_doc: &[u32],
    cursors: &[(f64, std::ops::Range<usize>)],
    block_end: usize,
    ends: &mut Vec<usize>,
) {
    ends.clear();
    ends.extend(cursors.iter().map(|(_, range)| {
        let docs = &post_doc[range.clone()];
        match (docs.first(), docs.last()) {
            (Some(&first), Some(&last)) if (first as usize) < block_end => {
                if (last as usize) < block_end {
                    docs.len()
                } else {
                    // first < block_end <= last, so the guess is in 0..len.
                    let (from, span) = (
                        (block_end - first as usize) as u64,
                        u64::from(last - first) + 1,
                    );
                    (from * docs.len() as u64 / span) as usize
                }
            }
            _ => 0,
        }
    }));
    for (end, (_, range)) in ends.iter_mut().zip(cursors) {
        let docs = &post_doc[range.clone()];
        // The guessed ones (their first and last ids, read above, are in cache now).
        if let (Some(&first), Some(&last)) = (docs.first(), docs.last()) {
            if (first as usize) < block_end && (last as usize) >= block_end {
                *end = gallop_partition(docs, *end, block_end);
            }
        }
    }
}

/// `docs.partition_point(|d| d < target)` for ascending `docs`, searching outwards from the
/// position `guess` (`guess < docs.len()`) in steps that double.
fn gallop_partition(docs: &[u32], guess: usize, target: usize) -> usize {
    debug_assert!(guess < docs.len());
    let below = |i: usize| (docs[i] as usize) < target;
    let (mut lo, mut hi);
    if below(guess) {
        // The boundary is after `guess`: find a `hi` at or past it.
        lo = guess + 1;
        hi = lo;
        let mut step = 1;
        while hi < docs.len() && below(hi) {
            lo = hi + 1;
            hi = lo + step;
            step <<= 1;
        }
        hi = hi.min(docs.len());
    } else {
        // The boundary is at or before `guess`: find a `lo` below it (or 0).
        hi = guess;
        lo = guess;
        let mut step = 1;
        while lo > 0 {
            let probe = lo.saturating_sub(step);
            if below(probe) {
                lo = probe;
                break;
            }
            hi = probe;
            lo = probe;
            step <<= 1;
        }
    }
    lo + docs[lo..hi].partition_point(|&d| (d as usize) < target)
}

/// The per-call parameters of a search.
struct Request<'a> {
    k: usize,
    expansion_weight: f64,
    sat: &'a SatTable,
    lexicon: Option<&'a Lexicon>,
    allowed: Option<&'a Filter>,
}

#[derive(Debug, Default)]
struct FuzzyScratch {
    grams: Vec<u64>,
    count: Vec<u32>,
    stamp: Vec<u32>,
    gen: u32,
    touched: Vec<u32>,
}

/// The query weight of the tokens of `ident`, a slice of `query`: [`PAYLOAD_WEIGHT`] when
/// it starts inside one of the payload ranges `spans` or is a number
/// ([`Analyzer::is_number`]), else 1.
fn ident_weight(analyzer: &Analyzer, spans: &[(usize, usize)], query: &str, ident: &str) -> f64 {
    let start = ident.as_ptr() as usize - query.as_ptr() as usize;
    if in_payload(spans, start) || analyzer.is_number(ident) {
        PAYLOAD_WEIGHT
    } else {
        1.0
    }
}

/// The weight of a lexicon key's tokens: the largest (an expansion weighs
/// `expansion_weight` times this).
fn key_weight(weights: &[f64]) -> f64 {
    weights.iter().fold(0.0f64, |m, &w| m.max(w))
}

/// Start a new generation of a stamped scratch array of `n` slots.
fn next_generation(stamp: &mut Vec<u32>, gen: &mut u32, n: usize) {
    if stamp.len() < n {
        stamp.resize(n, 0);
    }
    *gen = gen.wrapping_add(1);
    if *gen == 0 {
        stamp.iter_mut().for_each(|s| *s = 0);
        *gen = 1;
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch (or a fresh one if it is busy or gone).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut slot = Some(f);
    let done = SCRATCH
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut s) => slot.take().map(|f| f(&mut s)),
            Err(_) => None,
        })
        .ok()
        .flatten();
    match (done, slot.take()) {
        (Some(r), _) => r,
        (None, Some(f)) => f(&mut Scratch::default()),
        // `slot` is emptied only by running `f`, which yields `Some`.
        (None, None) => unreachable!("scratch closure ran without a result"),
    }
}

/// Trigram key of three code points.
#[inline]
fn gram_key(a: char, b: char, c: char) -> u64 {
    ((a as u64) << 42) | ((b as u64) << 21) | (c as u64)
}

/// The distinct trigrams of `" " + term + " "`, sorted, into `out`.
fn trigrams_into(term: &str, out: &mut Vec<u64>) {
    out.clear();
    let mut a = ' ';
    let mut b: Option<char> = None;
    for c in term.chars().chain(std::iter::once(' ')) {
        if let Some(bb) = b {
            out.push(gram_key(a, bb, c));
            a = bb;
        }
        b = Some(c);
    }
    out.sort_unstable();
    out.dedup();
}

/// What one worker makes of a run of documents: its own vocabulary and, per document,
/// field lengths and (local term id, per-field counts) pairs, the counts a byte each as in
/// the index (a [`TF_BIG`] byte: the exact counts are in `big`).
struct ChunkTerms {
    /// Local terms, by local id.
    terms: StrTable,
    lens: Vec<[u32; N_FIELDS]>,
    /// End of each document's pairs in `pairs`.
    doc_ends: Vec<usize>,
    pairs: Vec<(u32, [u8; N_FIELDS])>,
    /// (pair, exact counts) of the pairs with a [`TF_BIG`] byte, by pair.
    big: Vec<(u32, [u32; N_FIELDS])>,
}

/// Marks a global term a chunk does not have.
const NO_LOCAL: u32 = u32::MAX;

/// A chunk's postings sorted by term: the run of local term `l` is
/// `start[l]..start[l + 1]` of `docs` (global ids, ascending) and `tfs`.
struct ChunkRuns {
    start: Vec<u32>,
    docs: Vec<u32>,
    tfs: Vec<[u8; N_FIELDS]>,
    /// Position in `docs` -> exact counts, for the [`TF_BIG`] bytes of `tfs`.
    big: FxHashMap<u32, [u32; N_FIELDS]>,
    /// Global term id -> local id, or [`NO_LOCAL`].
    local: Vec<u32>,
}

impl ChunkRuns {
    /// The chunk's pairs sorted by local term, of which there are `nl` (`c.terms` has been
    /// moved out to be merged); `local` is left empty (see [`ChunkRuns::map_terms`]).
    fn new(c: ChunkTerms, nl: usize, first_doc: u32) -> ChunkRuns {
        let mut start = vec![0u32; nl + 1];
        for &(l, _) in &c.pairs {
            start[l as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut cursor = start.clone();
        let mut docs = vec![0u32; c.pairs.len()];
        let mut tfs = vec![[0u8; N_FIELDS]; c.pairs.len()];
        let mut big = FxHashMap::default();
        let mut bigs = c.big.iter().peekable();
        let mut begin = 0;
        for (d, &end) in c.doc_ends.iter().enumerate() {
            for (k, &(l, tf)) in c.pairs[begin..end].iter().enumerate() {
                let p = cursor[l as usize] as usize;
                cursor[l as usize] += 1;
                docs[p] = first_doc + d as u32;
                tfs[p] = tf;
                if let Some(&(_, exact)) = bigs.next_if(|&&(at, _)| at as usize == begin + k) {
                    big.insert(p as u32, exact);
                }
            }
            begin = end;
        }
        ChunkRuns {
            start,
            docs,
            tfs,
            big,
            local: Vec::new(),
        }
    }

    /// Fill `local` from the chunk's local id -> global id map.
    fn map_terms(&mut self, map: &[u32], vocab_len: usize) {
        let mut local = vec![NO_LOCAL; vocab_len];
        for (l, &g) in map.iter().enumerate() {
            local[g as usize] = l as u32;
        }
        self.local = local;
    }
}

/// Merge the chunks' vocabularies (in document order): the merged vocabulary, and per
/// chunk its local id -> global id. The first chunk's is the start of the merged one as it
/// stands (its ids are the global ones): a quarter of the merge's lookups saved.
fn merge_vocabularies(terms: Vec<StrTable>) -> Result<(StrTable, Vec<Vec<u32>>), String> {
    let mut terms = terms.into_iter();
    let mut vocab = terms.next().unwrap_or_default();
    let mut maps: Vec<Vec<u32>> = Vec::with_capacity(terms.len() + 1);
    maps.push((0..to_u32(vocab.len(), "vocabulary size")?).collect());
    for t in terms {
        let mut map = Vec::with_capacity(t.len());
        for local in 0..t.len() {
            let term = t.get(local);
            map.push(vocab.insert(term, str_hash(term))?.0);
        }
        maps.push(map);
    }
    vocab.shrink_to_fit();
    Ok((vocab, maps))
}

/// The columnar index.
pub struct Index {
    /// Unique per index in the process: tags the query memo's vocabulary lookups.
    uid: u64,
    analyzer: Arc<Analyzer>,
    names: Arena,
    /// Whether the names ascend strictly (byte order) with the ids, as a registry builds
    /// them: then ids order ties as names do, without reading a name.
    name_ordered: bool,
    vocab: StrTable,
    /// Postings of term `t` are `term_start[t]..term_start[t + 1]`.
    term_start: Vec<u32>,
    post_doc: Vec<u32>,
    post_tf: Vec<[u8; N_FIELDS]>,
    /// (posting, exact counts) of the postings with a [`TF_BIG`] byte, by posting.
    tf_big: Vec<(u32, [u32; N_FIELDS])>,
    doc_len: Vec<[u32; N_FIELDS]>,
    avglen: [f64; N_FIELDS],
    idf: Vec<f64>,
    /// Distinct trigrams, ascending; the terms having `tri_keys[i]` are
    /// `tri_terms[tri_start[i]..tri_start[i + 1]]` (vocabulary ids, ascending).
    tri_keys: Vec<u64>,
    tri_start: Vec<u32>,
    tri_terms: Vec<u32>,
    /// Distinct trigrams of each term (0 for terms too short for the fallback).
    tri_count: Vec<u32>,
    cache: SatCache,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("docs", &self.names.len())
            .field("vocabulary", &self.vocab.len())
            .field("postings", &self.post_doc.len())
            .finish_non_exhaustive()
    }
}

fn to_u32(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("{what} {n} exceeds the index's limit of {}", u32::MAX))
}

/// Bytes of identifier a [`HotMemo`] entry holds inline (one more byte holds the length).
const HOT_KEY_BYTES: usize = 23;
/// Bounds of log2 of the [`HotMemo`]'s sets of two entries: 4,096 sets of 64 bytes (256 KiB,
/// within a core's L2) for a chunk of up to 4,096 documents, up to 16,384 sets (1 MiB) for
/// 8,192 and more. Its lines are read a field's identifiers at a time, their misses
/// overlapping, so that the larger table's higher hit rate pays for its fewer L2 hits
/// (alternated against 4,096 sets at 100,000 tools: about 5% less build time).
const HOT_BITS: (u32, u32) = (12, 14);

/// One inline identifier of a [`HotMemo`]: `(key, (a, b))`, the key's first byte is the
/// identifier's length (0: empty entry), then its bytes, zero padded; `a..b` is its range
/// of the memo's ids.
type HotEntry = ([u64; 3], (u32, u32));

/// Two entries in one cache line: the newest first.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct HotSet([HotEntry; 2]);

/// A small two-way set-associative cache in front of a build's identifier memo, for the
/// identifiers met most: their text inline (up to [`HOT_KEY_BYTES`] bytes), so that a hit
/// costs one cache line of a table that stays in cache instead of the memo's misses (its
/// slot, the arena's offsets and text, its range). On catalogue text the 8,192 most
/// frequent identifiers make over nine in ten of the occurrences; two ways, read in the
/// one line, keep two identifiers of the same set where a direct-mapped table kept one.
struct HotMemo {
    sets: Vec<HotSet>,
    /// `64 - log2(sets.len())`.
    shift: u32,
}

impl HotMemo {
    /// A cache sized for a chunk of `docs` documents (see [`HOT_BITS`]).
    fn new(docs: usize) -> HotMemo {
        let bits = docs
            .next_power_of_two()
            .trailing_zeros()
            .clamp(HOT_BITS.0, HOT_BITS.1);
        HotMemo {
            sets: vec![HotSet([([0; 3], (0, 0)); 2]); 1 << bits],
            shift: 64 - bits,
        }
    }

    /// The inline key of `s`, or `None` when it is too long to be held.
    #[inline]
    fn key(s: &str) -> Option<[u64; 3]> {
        let b = s.as_bytes();
        if b.len() > HOT_KEY_BYTES {
            return None;
        }
        let mut k = [0u8; 24];
        k[0] = b.len() as u8;
        k[1..=b.len()].copy_from_slice(b);
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&k[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(w)
        };
        Some([word(0), word(1), word(2)])
    }

    /// The set of `key`: a hash of its three words (cheaper than hashing the text byte by
    /// byte, which is then needed only when the cache misses).
    #[inline]
    fn set(&self, key: &[u64; 3]) -> usize {
        let h = (key[0].wrapping_mul(MIX).rotate_left(26) ^ key[1]).wrapping_mul(MIX);
        let h = (h.rotate_left(26) ^ key[2]).wrapping_mul(MIX);
        (h >> self.shift) as usize
    }

    /// The range remembered for `key` (whose set is `set`), if it is in the cache.
    #[inline]
    fn get(&self, set: usize, key: &[u64; 3]) -> Option<(u32, u32)> {
        let [first, second] = &self.sets[set].0;
        if first.0 == *key {
            Some(first.1)
        } else if second.0 == *key {
            Some(second.1)
        } else {
            None
        }
    }

    /// A word of `set`, read to bring the set's line into cache.
    #[inline]
    fn touch(&self, set: usize) -> u64 {
        self.sets[set].0[0].0[0]
    }

    /// Remember `range` for `key` as its set's (`set`) newest entry; the set's oldest goes.
    #[inline]
    fn put(&mut self, set: usize, key: [u64; 3], range: (u32, u32)) {
        let set = &mut self.sets[set].0;
        set[1] = set[0];
        set[0] = (key, range);
    }

    /// Forget everything (the memo it stands in front of started over).
    fn clear(&mut self) {
        self.sets.fill(HotSet([([0; 3], (0, 0)); 2]));
    }
}

/// Analyse a run of documents into a [`ChunkTerms`]. Each distinct identifier is analysed
/// once (its local term ids are remembered, keyed by its text), and each distinct folded
/// word is stemmed once. The memo and the word map are [`StrTable`]s: keys packed in an
/// arena, 8-byte slots, so that the lookup every identifier costs stays in cache as much
/// as it can.
fn analyse_chunk<S: AsRef<str>>(
    an: &Analyzer,
    docs: &[[S; N_FIELDS]],
) -> Result<ChunkTerms, String> {
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
    let mut failure: Option<String> = None;
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

impl Index {
    /// Build the index of `names[i]` with the five field texts `fields[i]` (name,
    /// search_hint, summary, body, params). Analysis runs in parallel.
    pub fn build(
        analyzer: Arc<Analyzer>,
        names: Vec<String>,
        fields: Vec<[String; N_FIELDS]>,
    ) -> Result<Index, String> {
        Index::build_from(analyzer, &names, &fields)
    }

    /// [`Index::build`] from borrowed texts: a caller that borrows them (the Python binding
    /// borrows the Python strings) makes and frees no string per text.
    pub fn build_from<N: AsRef<str>, S: AsRef<str> + Sync>(
        analyzer: Arc<Analyzer>,
        names: &[N],
        fields: &[[S; N_FIELDS]],
    ) -> Result<Index, String> {
        if names.len() != fields.len() {
            return Err(format!(
                "{} names but {} field tuples",
                names.len(),
                fields.len()
            ));
        }
        let n = names.len();
        to_u32(n, "document count")?;
        // Few chunks: each has its own memo and vocabulary to merge; two a thread so that
        // one slow worker (a busy machine) does not hold the build up for long.
        let threads = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(threads * 2).max(256);
        let an: &Analyzer = &analyzer;
        let mut chunks: Vec<ChunkTerms> = fields
            .par_chunks(chunk)
            .map(|docs| analyse_chunk(an, docs))
            .collect::<Result<_, String>>()?;

        let mut name_arena = Arena::default();
        let mut name_ordered = true;
        for name in names {
            name_arena.push(name.as_ref())?;
            let i = name_arena.len() - 1;
            if i > 0 && name_ordered {
                name_ordered = name_arena.get(i - 1).as_bytes() < name_arena.get(i).as_bytes();
            }
        }
        name_arena.shrink_to_fit();

        // Field lengths, and each chunk's first document id.
        let mut doc_len: Vec<[u32; N_FIELDS]> = Vec::with_capacity(n);
        let mut first_doc = Vec::with_capacity(chunks.len());
        for c in &chunks {
            first_doc.push(doc_len.len() as u32);
            doc_len.extend_from_slice(&c.lens);
        }
        let mut totals = [0u64; N_FIELDS];
        for lens in &doc_len {
            for (total, &len) in totals.iter_mut().zip(lens) {
                *total += u64::from(len);
            }
        }

        // At once: the vocabularies merged, on one thread, and each chunk's pairs sorted by
        // local term (counting sort: doc ids stay ascending within a term), in parallel;
        // the sort needs no global id, so it no longer waits for the merge.
        let terms: Vec<StrTable> = chunks
            .iter_mut()
            .map(|c| std::mem::take(&mut c.terms))
            .collect();
        let sizes: Vec<usize> = terms.iter().map(StrTable::len).collect();
        let (merged, mut runs) = rayon::join(
            || merge_vocabularies(terms),
            || {
                chunks
                    .into_par_iter()
                    .zip(sizes.par_iter())
                    .zip(first_doc.par_iter())
                    .map(|((c, &nl), &first)| ChunkRuns::new(c, nl, first))
                    .collect::<Vec<ChunkRuns>>()
            },
        );
        let (vocab, maps) = merged?;
        let v = vocab.len();
        // Each chunk's global id -> local id, in parallel.
        runs.par_iter_mut()
            .zip(maps.par_iter())
            .for_each(|(r, map)| r.map_terms(map, v));
        drop(maps);

        // Document frequencies and postings offsets.
        let mut df = vec![0u32; v];
        for r in &runs {
            for (g, &local) in r.local.iter().enumerate() {
                if local != NO_LOCAL {
                    let l = local as usize;
                    df[g] += r.start[l + 1] - r.start[l];
                }
            }
        }
        let mut term_start: Vec<u32> = Vec::with_capacity(v + 1);
        let mut total = 0usize;
        for &d in &df {
            term_start.push(to_u32(total, "postings count")?);
            total += d as usize;
        }
        term_start.push(to_u32(total, "postings count")?);

        // Postings laid out in parallel over ranges of terms: each range's part of the
        // arrays is its own slice, filled from the chunks' runs in chunk (document) order.
        let mut post_doc = vec![0u32; total];
        let mut post_tf = vec![[0u8; N_FIELDS]; total];
        let parts = (rayon::current_num_threads().max(1) * 4).min(v.max(1));
        let mut pieces = Vec::with_capacity(parts);
        {
            let (mut docs_rest, mut tfs_rest) = (post_doc.as_mut_slice(), post_tf.as_mut_slice());
            let mut t0 = 0usize;
            for i in 1..=parts {
                // End at the term where the i-th share of the postings is reached.
                let goal = (total * i / parts) as u32;
                let t1 = if i == parts {
                    v
                } else {
                    term_start.partition_point(|&s| s < goal).clamp(t0, v)
                };
                let len = (term_start[t1] - term_start[t0]) as usize;
                let (d, dr) = docs_rest.split_at_mut(len);
                let (f, fr) = tfs_rest.split_at_mut(len);
                docs_rest = dr;
                tfs_rest = fr;
                pieces.push((t0..t1, d, f));
                t0 = t1;
            }
        }
        let bigs: Vec<Vec<(u32, [u32; N_FIELDS])>> = pieces
            .into_par_iter()
            .map(|(terms, docs, tfs)| {
                let base = term_start[terms.start] as usize;
                let mut at = 0usize;
                let mut big = Vec::new();
                for g in terms {
                    for r in &runs {
                        let local = r.local[g];
                        if local == NO_LOCAL {
                            continue;
                        }
                        let l = local as usize;
                        let run = r.start[l] as usize..r.start[l + 1] as usize;
                        let m = run.len();
                        docs[at..at + m].copy_from_slice(&r.docs[run.clone()]);
                        tfs[at..at + m].copy_from_slice(&r.tfs[run.clone()]);
                        if !r.big.is_empty() {
                            for (i, tf) in r.tfs[run.clone()].iter().enumerate() {
                                if !tf.contains(&TF_BIG) {
                                    continue;
                                }
                                if let Some(&exact) = r.big.get(&((run.start + i) as u32)) {
                                    big.push(((base + at + i) as u32, exact));
                                }
                            }
                        }
                        at += m;
                    }
                }
                big
            })
            .collect();
        drop(runs);
        let mut tf_big: Vec<(u32, [u32; N_FIELDS])> = bigs.concat();
        tf_big.shrink_to_fit();

        let nf = n as f64;
        let mut avglen = [0.0f64; N_FIELDS];
        for f in 0..N_FIELDS {
            avglen[f] = if n > 0 { totals[f] as f64 / nf } else { 0.0 };
        }
        let idf: Vec<f64> = df
            .iter()
            .map(|&d| {
                let dff = f64::from(d);
                (1.0 + ((nf - dff) + 0.5) / (dff + 0.5)).ln()
            })
            .collect();
        drop(df);

        let (tri_keys, tri_start, tri_terms, tri_count) = trigram_index(&vocab)?;

        static NEXT_UID: AtomicU64 = AtomicU64::new(1);
        Ok(Index {
            uid: NEXT_UID.fetch_add(1, AtomicOrdering::Relaxed),
            analyzer,
            names: name_arena,
            name_ordered,
            vocab,
            term_start,
            post_doc,
            post_tf,
            tf_big,
            doc_len,
            avglen,
            idf,
            tri_keys,
            tri_start,
            tri_terms,
            tri_count,
            cache: SatCache::default(),
        })
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no documents.
    pub fn is_empty(&self) -> bool {
        self.names.len() == 0
    }

    /// Number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.vocab.len()
    }

    /// Number of postings (term, document) pairs.
    pub fn postings_len(&self) -> usize {
        self.post_doc.len()
    }

    /// The analyzer the index was built with (and analyses queries with).
    pub fn analyzer(&self) -> &Arc<Analyzer> {
        &self.analyzer
    }

    /// The name of document `doc` (panics when out of range, like slice indexing).
    pub fn name(&self, doc: usize) -> &str {
        self.names.get(doc)
    }

    /// Average field lengths (tokens).
    pub fn avglen(&self) -> [f64; N_FIELDS] {
        self.avglen
    }

    /// idf of a term, if it is in the vocabulary.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.vocab
            .find(term, str_hash(term))
            .map(|id| self.idf[id as usize])
    }

    /// Number of cached saturated-weight tables.
    pub fn cached_settings(&self) -> usize {
        self.cache.len()
    }

    /// Heap bytes of the index structures (vocabulary, postings, lengths, idf, trigram
    /// index, names); the settings cache is not counted.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let postings = self.term_start.capacity() * 4
            + self.post_doc.capacity() * 4
            + self.post_tf.capacity() * N_FIELDS
            + self.tf_big.capacity() * size_of::<(u32, [u32; N_FIELDS])>();
        let docs = self.doc_len.capacity() * size_of::<[u32; N_FIELDS]>();
        let idf = self.idf.capacity() * 8;
        let tri = self.tri_keys.capacity() * 8
            + self.tri_start.capacity() * 4
            + self.tri_terms.capacity() * 4
            + self.tri_count.capacity() * 4;
        self.names.memory_bytes() + self.vocab.memory_bytes() + postings + docs + idf + tri
    }

    /// A digest of every array of the index (names, vocabulary in id order, postings,
    /// lengths, idf bits, trigram index), so that a change to the build can be checked to
    /// leave the index identical.
    pub fn digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for i in 0..self.names.len() {
            self.names.get(i).hash(&mut h);
        }
        for i in 0..self.vocab.len() {
            self.vocab.get(i).hash(&mut h);
        }
        self.term_start.hash(&mut h);
        self.post_doc.hash(&mut h);
        self.post_tf.hash(&mut h);
        self.tf_big.hash(&mut h);
        self.doc_len.hash(&mut h);
        self.avglen.map(f64::to_bits).hash(&mut h);
        for x in &self.idf {
            x.to_bits().hash(&mut h);
        }
        self.tri_keys.hash(&mut h);
        self.tri_start.hash(&mut h);
        self.tri_terms.hash(&mut h);
        self.tri_count.hash(&mut h);
        h.finish()
    }

    /// A filter admitting the given document ids; an id out of range is an error.
    pub fn make_filter(&self, ids: &[i64]) -> Result<Filter, String> {
        let n = self.names.len();
        let mut bits = vec![0u64; n.div_ceil(64)];
        let mut count = 0;
        for &i in ids {
            let d = usize::try_from(i)
                .ok()
                .filter(|&d| d < n)
                .ok_or_else(|| format!("document id {i} out of range 0..{n}"))?;
            let (w, b) = (d / 64, d % 64);
            if (bits[w] >> b) & 1 == 0 {
                bits[w] |= 1 << b;
                count += 1;
            }
        }
        Ok(Filter { bits, count })
    }

    /// Validate a document id (as the pure engine does).
    pub fn check_doc(&self, doc: i64) -> Result<usize, String> {
        let n = self.names.len();
        usize::try_from(doc)
            .ok()
            .filter(|&d| d < n)
            .ok_or_else(|| format!("document id {doc} out of range 0..{n}"))
    }

    #[inline]
    fn postings(&self, term: usize) -> std::ops::Range<usize> {
        self.term_start[term] as usize..self.term_start[term + 1] as usize
    }

    /// Exact per-field counts of posting `p`.
    #[inline]
    fn tf(&self, p: usize) -> [u32; N_FIELDS] {
        let tf = self.post_tf[p];
        if tf.contains(&TF_BIG) {
            if let Ok(i) = self.tf_big.binary_search_by_key(&(p as u32), |&(q, _)| q) {
                return self.tf_big[i].1;
            }
        }
        tf.map(u32::from)
    }

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

    /// The analysed tokens of `query` and the weight of each: [`PAYLOAD_WEIGHT`] for those
    /// of an identifier in the request's payload ([`Analyzer::payload_spans`]) or of a
    /// number ([`Analyzer::is_number`]), else 1.
    fn query_tokens(&self, query: &str) -> (Vec<String>, Vec<f64>) {
        let mut spans = Vec::new();
        self.analyzer.payload_spans(query, &mut spans);
        let mut scratch = TokenScratch::default();
        let (mut toks, mut weights) = (Vec::new(), Vec::new());
        self.analyzer.for_each_identifier(query, |ident| {
            let w = ident_weight(&self.analyzer, &spans, query, ident);
            self.analyzer
                .identifier_tokens(ident, &mut scratch, &mut |t: &str| {
                    toks.push(t.to_string());
                    weights.push(w);
                });
        });
        (toks, weights)
    }

    /// The main stage's terms of analysed tokens and their weights (the explain path's;
    /// searches use [`Index::query_main_terms`]).
    fn main_terms(
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

    /// Analyse `query` into `sc.qtoks` through the per-thread identifier memo.
    fn analyse_query(&self, query: &str, sc: &mut Scratch) {
        let Scratch {
            tok,
            memo,
            qtoks,
            qweights,
            spans,
            ..
        } = sc;
        let owner = self.analyzer.id();
        if memo.owner != owner
            || memo.map.len() >= QUERY_MEMO_IDENTS
            || memo.text.len() + memo.key_bytes >= QUERY_MEMO_BYTES
        {
            // Start over only between queries, so that the ranges in `qtoks` stay valid.
            memo.reset(owner);
        }
        qtoks.clear();
        qweights.clear();
        self.analyzer.payload_spans(query, spans);
        self.analyzer.for_each_identifier(query, |ident| {
            let w = ident_weight(&self.analyzer, spans, query, ident);
            let (a, b) = match memo.map.get(ident) {
                Some(&range) => range,
                None => {
                    let a = memo.toks.len();
                    let QueryMemo { text, toks, .. } = &mut *memo;
                    self.analyzer.identifier_tokens(ident, tok, &mut |t: &str| {
                        let start = text.len();
                        text.push_str(t);
                        toks.push(MemoTok {
                            start,
                            end: text.len(),
                            hash: str_hash(t),
                            vocab_of: NOT_LOOKED_UP,
                            vocab_id: None,
                            lex_of: NOT_LOOKED_UP,
                            lex_id: 0,
                        });
                    });
                    let range = (a, memo.toks.len());
                    memo.key_bytes += ident.len();
                    memo.map.insert(ident.into(), range);
                    range
                }
            };
            qtoks.extend(a..b);
            qweights.extend(std::iter::repeat_n(w, b - a));
        });
    }

    /// The main stage's terms of the analysed query in `sc`: its tokens in the vocabulary
    /// (weighted as in [`Index::query_terms`]), then the lexicon's expansions in the
    /// vocabulary.
    fn query_main_terms(&self, req: &Request<'_>, sc: &mut Scratch) {
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

    /// Fallback terms: for each distinct query token of >= 3 chars, the best 3 vocabulary
    /// terms by trigram Dice similarity (>= 0.5), weighted by that similarity.
    fn fuzzy_terms(&self, toks: &[&str], fz: &mut FuzzyScratch, out: &mut TermList) {
        out.clear();
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        let vocab_n = self.vocab.len();
        for &tok in toks {
            if !seen.insert(tok) || tok.chars().count() < FUZZY_MIN_CHARS {
                continue;
            }
            trigrams_into(tok, &mut fz.grams);
            next_generation(&mut fz.stamp, &mut fz.gen, vocab_n);
            if fz.count.len() < vocab_n {
                fz.count.resize(vocab_n, 0);
            }
            fz.touched.clear();
            for g in &fz.grams {
                let Ok(i) = self.tri_keys.binary_search(g) else {
                    continue;
                };
                let range = self.tri_start[i] as usize..self.tri_start[i + 1] as usize;
                for &id in &self.tri_terms[range] {
                    let i = id as usize;
                    if fz.stamp[i] != fz.gen {
                        fz.stamp[i] = fz.gen;
                        fz.count[i] = 0;
                        fz.touched.push(id);
                    }
                    fz.count[i] += 1;
                }
            }
            let nq = fz.grams.len();
            let mut best: Vec<(f64, u32)> = Vec::with_capacity(FUZZY_PER_TOKEN + 1);
            for &id in &fz.touched {
                let i = id as usize;
                let dice =
                    (2.0 * f64::from(fz.count[i])) / ((nq + self.tri_count[i] as usize) as f64);
                if dice >= FUZZY_MIN_SIMILARITY {
                    let term = self.vocab.get(i);
                    let better = |x: &(f64, u32)| {
                        dice > x.0 || (dice == x.0 && term < self.vocab.get(x.1 as usize))
                    };
                    let at = best.iter().position(better).unwrap_or(best.len());
                    if at < FUZZY_PER_TOKEN {
                        best.insert(at, (dice, id));
                        best.truncate(FUZZY_PER_TOKEN);
                    }
                }
            }
            for (dice, id) in best {
                out.add(id, dice);
            }
        }
    }

    /// The saturated weight of every posting under `settings` (cached).
    fn sat_table(&self, settings: &Settings) -> Arc<SatTable> {
        let key = settings.key();
        if let Some(t) = self.cache.get(&key) {
            return t;
        }
        let (w, b, k1) = (&settings.weights, &settings.b, settings.k1);
        let avg = &self.avglen;
        let denom: Vec<[f64; N_FIELDS]> = self
            .doc_len
            .iter()
            .map(|lens| {
                let mut d = [0.0; N_FIELDS];
                for f in 0..N_FIELDS {
                    d[f] = (1.0 - b[f]) + b[f] * (f64::from(lens[f]) / avg[f]);
                }
                d
            })
            .collect();
        let sat: Box<[f64]> = self
            .post_doc
            .par_iter()
            .zip(self.post_tf.par_iter())
            .enumerate()
            .with_min_len(8192)
            .map(|(p, (&doc, small))| {
                let tf = if small.contains(&TF_BIG) {
                    self.tf(p)
                } else {
                    small.map(u32::from)
                };
                let den = &denom[doc as usize];
                let mut s = 0.0;
                for f in 0..N_FIELDS {
                    if tf[f] > 0 {
                        s += (w[f] * f64::from(tf[f])) / den[f];
                    }
                }
                s / (k1 + s)
            })
            .collect::<Vec<f64>>()
            .into();
        let term_max: Box<[f64]> = (0..self.vocab.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|t| sat[self.postings(t)].iter().fold(0.0f64, |m, &x| m.max(x)))
            .collect::<Vec<f64>>()
            .into();
        self.cache.insert(key, Arc::new(SatTable { sat, term_max }))
    }

    /// Score the documents having any of `terms` and keep the best `k` hits (score > 0,
    /// admitted by `allowed`) in `accum.top`, best first. Returns whether there is any hit.
    ///
    /// Documents go in blocks of [`SCAN_BLOCK`] ids, so that the accumulator slots a block
    /// touches stay in the core's cache. In each block, every term in query order adds
    /// `(qw * idf) * sat` of its postings in the block (a document's sum is built in query
    /// order, whatever the blocking, so every score is the pure engine's bit for bit).
    ///
    /// Then, for a top of at most [`TOP_INSERT_MAX`] (the usual case), the block's postings
    /// are walked term by term, the term of largest upper bound first (a term's bound is
    /// `qw * idf` times its largest saturated weight): each visit reads the slot and zeroes
    /// it, so that the first visit of a document sees its score and a later one sees 0,
    /// which no hit has; a score at least the current k-th best is offered to the top.
    /// A document not met yet has only the terms left, so its score is at most the sum of
    /// their bounds: once that sum is below the k-th best, the walk stops and the slots of
    /// the terms left are only zeroed. The heavy terms are the rare ones, so most of the
    /// common terms' postings are never offered. The stop is exact: the sum of bounds is
    /// scaled up by `margin`, which covers the rounding of two sums of at most `m`
    /// non-negative terms taken in different orders, so a skipped document scores below
    /// the k-th best, and one equal to it (which its name could still put first) is never
    /// skipped. Ties are ordered by [`Index::offer`], a total order, so the order in which
    /// documents are offered does not matter.
    ///
    /// A larger top collects every hit (large catalogues sweep a bitset of the block's
    /// touched documents in id order; small ones walk the block's postings again) and
    /// selects the best.
    fn scan(
        &self,
        terms: &TermList,
        table: &SatTable,
        k: usize,
        allowed: Option<&Filter>,
        accum: &mut Accum,
    ) -> bool {
        let sat = &table.sat[..];
        let n = self.names.len();
        if accum.dirty {
            accum.acc.iter_mut().for_each(|x| *x = 0.0);
        }
        // One block's slots, reused by every block: a power of two long (at least one slot),
        // and blocks start at multiples of it, so `doc & mask` is `doc - block_start` and
        // indexes it without a bounds check. A large catalogue's query touches nearly every
        // slot, so one block's worth (warm after the first block) instead of one slot per
        // document saves most of a cold query's accumulator misses.
        let slots = n.next_power_of_two().clamp(1, SCAN_BLOCK);
        if accum.acc.len() < slots {
            accum.acc.resize(slots, 0.0);
        }
        accum.dirty = true;
        let Accum {
            acc,
            top,
            cursors,
            seen,
            ubs,
            rank,
            rest,
            spans,
            ends,
            ..
        } = accum;
        let acc = &mut acc[..slots];
        let mask = acc.len() - 1;
        // Per term: its weight, then its postings not yet scanned.
        cursors.clear();
        cursors.extend(terms.items.iter().map(|&(id, weight)| {
            let t = id as usize;
            (weight * self.idf[t], self.postings(t))
        }));
        let small = k <= TOP_INSERT_MAX;
        // A small top skips the documents that cannot enter it (see below): terms by
        // upper bound (`qw * idf` times the term's largest saturated weight), largest
        // first, and the sums of the bounds from each on.
        let bounded = small && k > 0;
        let m = cursors.len();
        let margin = 1.0 + (m as f64 + 2.0) * 8.0 * f64::EPSILON;
        if bounded {
            ubs.clear();
            ubs.extend(
                terms
                    .items
                    .iter()
                    .zip(cursors.iter())
                    .map(|(&(id, _), &(q, _))| q * table.term_max[id as usize]),
            );
            rank.clear();
            rank.extend(0..m);
            rank.sort_unstable_by(|&a, &b| ubs[b].total_cmp(&ubs[a]).then(a.cmp(&b)));
            rest.clear();
            rest.resize(m + 1, 0.0);
            for r in (0..m).rev() {
                rest[r] = rest[r + 1] + ubs[rank[r]];
            }
            spans.clear();
            spans.resize(m, (0, 0));
        }
        top.clear();
        let mut found = false;
        // Scores below this cannot enter a full top (the k-th best); 0 while it fills.
        let mut floor = 0.0f64;
        // Large catalogues mark the documents each block touches in a bitset and sweep it
        // in id order (sequential slots, no second random walk); small ones walk the
        // block's postings again (fewer instructions when everything is in cache).
        let sweep = n >= SWEEP_MIN_DOCS;
        if sweep {
            seen.clear();
            seen.resize(SCAN_BLOCK / 64, 0);
        }
        // Offer document `d` with `score` (its slot just read): the branches are taken
        // rarely once the top is full, so the many documents below it (or seen already,
        // reading 0) cost no misprediction. A macro, to be inlined in both loops.
        macro_rules! consider {
            ($d:expr, $score:expr) => {{
                let (d, score): (usize, f64) = ($d, $score);
                if score > 0.0 && score >= floor && allowed.is_none_or(|f| f.contains(d)) {
                    found = true;
                    let hit = Hit {
                        score,
                        doc: d as u32,
                    };
                    if !small {
                        top.push(hit);
                    } else if k > 0 && self.offer(top, k, hit, terms) {
                        floor = top[k - 1].score;
                    }
                }
            }};
        }
        let mut block_start = 0usize;
        while block_start < n {
            let block_end = (block_start + SCAN_BLOCK).min(n);
            let last = block_end == n;
            if !last {
                block_ends(&self.post_doc, cursors, block_end, ends);
            }
            for (i, (q, range)) in cursors.iter_mut().enumerate() {
                let docs = &self.post_doc[range.clone()];
                let m = if last { docs.len() } else { ends[i] };
                let q = *q;
                let sats = &sat[range.start..range.start + m];
                if bounded {
                    spans[i] = (range.start, range.start + m);
                    // Four postings a step (a term has a document once, so the order of
                    // its postings changes no sum).
                    let (d4, s4) = (docs[..m].chunks_exact(4), sats.chunks_exact(4));
                    let (dr, sr) = (d4.remainder(), s4.remainder());
                    for (d, s) in d4.zip(s4) {
                        acc[d[0] as usize & mask] += q * s[0];
                        acc[d[1] as usize & mask] += q * s[1];
                        acc[d[2] as usize & mask] += q * s[2];
                        acc[d[3] as usize & mask] += q * s[3];
                    }
                    for (&doc, &s) in dr.iter().zip(sr) {
                        acc[doc as usize & mask] += q * s;
                    }
                } else if sweep {
                    for (&doc, &s) in docs[..m].iter().zip(sats) {
                        let b = doc as usize & mask;
                        acc[b] += q * s;
                        seen[b >> 6] |= 1u64 << (b & 63);
                    }
                } else {
                    for (&doc, &s) in docs[..m].iter().zip(sats) {
                        acc[doc as usize & mask] += q * s;
                    }
                }
                range.start += m;
            }
            if bounded {
                // The block's documents, through the terms of largest bound first: each
                // document is read (and its slot zeroed) at its first visit; once the
                // bounds of the terms left sum below the k-th best, the documents having
                // only those cannot enter the top, and their slots are only zeroed.
                let mut done = rank.len();
                for (r, &i) in rank.iter().enumerate() {
                    if rest[r] * margin < floor {
                        done = r;
                        break;
                    }
                    let (a, b) = spans[i];
                    for &doc in &self.post_doc[a..b] {
                        let slot = doc as usize & mask;
                        let score = acc[slot];
                        if score != 0.0 {
                            acc[slot] = 0.0;
                            consider!(doc as usize, score);
                        }
                    }
                }
                let light: usize = rank[done..].iter().map(|&i| spans[i].1 - spans[i].0).sum();
                if light * ZERO_FILL_RATIO > block_end - block_start {
                    // Every slot the walk left set is a light term's (ZERO_FILL_RATIO).
                    acc[..block_end - block_start].fill(0.0);
                } else {
                    for &i in &rank[done..] {
                        let (a, b) = spans[i];
                        let d4 = self.post_doc[a..b].chunks_exact(4);
                        let dr = d4.remainder();
                        for d in d4 {
                            acc[d[0] as usize & mask] = 0.0;
                            acc[d[1] as usize & mask] = 0.0;
                            acc[d[2] as usize & mask] = 0.0;
                            acc[d[3] as usize & mask] = 0.0;
                        }
                        for &doc in dr {
                            acc[doc as usize & mask] = 0.0;
                        }
                    }
                }
            } else if sweep {
                for (w, word) in seen.iter_mut().enumerate() {
                    let mut bits = std::mem::take(word);
                    while bits != 0 {
                        let b = w * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let score = acc[b];
                        acc[b] = 0.0;
                        consider!(block_start + b, score);
                    }
                }
            } else {
                // Only catalogues below SWEEP_MIN_DOCS re-walk, and they are a single block
                // (SWEEP_MIN_DOCS <= SCAN_BLOCK): each term's postings up to its cursor.
                debug_assert_eq!(block_start, 0);
                for (&(id, _), (_, rest)) in terms.items.iter().zip(cursors.iter()) {
                    for &doc in &self.post_doc[self.postings(id as usize).start..rest.start] {
                        let slot = doc as usize & mask;
                        let score = acc[slot];
                        acc[slot] = 0.0;
                        consider!(doc as usize, score);
                    }
                }
            }
            block_start = block_end;
        }
        accum.dirty = false;
        if !small {
            let cmp = |a: &Hit, b: &Hit| self.hit_order(a, b, terms);
            if k < top.len() {
                top.select_nth_unstable_by(k - 1, cmp);
                top.truncate(k);
            }
            top.sort_unstable_by(cmp);
        }
        found
    }

    /// Put `hit` into `top` (sorted, best first, at most `k` long) if it belongs there;
    /// whether `top` is full afterwards.
    #[inline]
    fn offer(&self, top: &mut Vec<Hit>, k: usize, hit: Hit, terms: &TermList) -> bool {
        let mut at = top.len();
        if at == k {
            if !self.before(&hit, &top[k - 1], terms) {
                return true;
            }
            at = k - 1;
        } else {
            top.push(hit);
        }
        // Insertion step: move worse hits down one place.
        while at > 0 && self.before(&hit, &top[at - 1], terms) {
            top[at] = top[at - 1];
            at -= 1;
        }
        top[at] = hit;
        top.len() == k
    }

    /// Whether `a` ranks before `b`.
    #[inline]
    fn before(&self, a: &Hit, b: &Hit, terms: &TermList) -> bool {
        if a.score != b.score {
            return a.score > b.score;
        }
        self.tie_order(a.doc, b.doc, terms) == Ordering::Less
    }

    /// Order of hits: score descending, then name (code point order), then first touch.
    fn hit_order(&self, a: &Hit, b: &Hit, terms: &TermList) -> Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| self.tie_order(a.doc, b.doc, terms))
    }

    /// Order of two documents with equal scores: name, then the order in which the scan of
    /// `terms` first touched them (as the pure engine's dict of accumulators has them).
    /// Names in id order are the ids' order (a tie at the k-th best is common where tools
    /// are alike, and reading two names was two cold misses).
    #[inline]
    fn tie_order(&self, a: u32, b: u32, terms: &TermList) -> Ordering {
        if self.name_ordered {
            return a.cmp(&b);
        }
        self.tie_order_by_name(a, b, terms)
    }

    /// [`Index::tie_order`] for names not in id order.
    #[cold]
    fn tie_order_by_name(&self, a: u32, b: u32, terms: &TermList) -> Ordering {
        let (na, nb) = (self.names.get(a as usize), self.names.get(b as usize));
        na.as_bytes()
            .cmp(nb.as_bytes())
            .then_with(|| self.first_touch(a, terms).cmp(&self.first_touch(b, terms)))
    }

    /// When the scan of `terms` first touches `doc`: (index of the first term whose
    /// postings hold it, doc); postings are scanned in ascending doc order.
    fn first_touch(&self, doc: u32, terms: &TermList) -> (usize, u32) {
        let first = terms
            .items
            .iter()
            .position(|&(id, _)| {
                self.post_doc[self.postings(id as usize)]
                    .binary_search(&doc)
                    .is_ok()
            })
            .unwrap_or(usize::MAX);
        (first, doc)
    }

    fn search_in(&self, query: &str, req: &Request<'_>, sc: &mut Scratch) -> SearchResult {
        self.analyse_query(query, sc);
        self.query_main_terms(req, sc);
        let found = self.scan(&sc.terms, req.sat, req.k, req.allowed, &mut sc.accum);
        let fallback = !found;
        if fallback {
            let Scratch {
                memo,
                qtoks,
                terms,
                accum,
                fuzzy,
                ..
            } = sc;
            let toks: Vec<&str> = qtoks.iter().map(|&i| memo.token(&memo.toks[i])).collect();
            self.fuzzy_terms(&toks, fuzzy, terms);
            self.scan(terms, req.sat, req.k, req.allowed, accum);
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
    /// When nothing scores, the trigram fallback runs and `fallback` is set.
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
        let req = Request {
            k,
            expansion_weight: settings.expansion_weight,
            sat: &sat,
            lexicon,
            allowed,
        };
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
        let req = Request {
            k,
            expansion_weight: settings.expansion_weight,
            sat: &sat,
            lexicon,
            allowed,
        };
        Ok(queries
            .par_iter()
            .map(|q| with_scratch(|sc| self.search_in(q, &req, sc)))
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
    ) -> Result<Vec<Explanation>, String> {
        settings.validate()?;
        let doc = self.check_doc(doc)?;
        let (toks, weights) = self.query_tokens(query);
        let mut terms = TermList::default();
        if fallback {
            let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
            self.fuzzy_terms(&refs, &mut FuzzyScratch::default(), &mut terms);
        } else {
            self.main_terms(
                &toks,
                &weights,
                lexicon,
                settings.expansion_weight,
                &mut terms,
            );
        }
        let (w, b, k1) = (&settings.weights, &settings.b, settings.k1);
        let lens = &self.doc_len[doc];
        let mut out = Vec::new();
        for &(id, weight) in &terms.items {
            let t = id as usize;
            let range = self.postings(t);
            let Ok(i) = self.post_doc[range.clone()].binary_search(&(doc as u32)) else {
                continue;
            };
            let tf = self.tf(range.start + i);
            let mut parts = [0.0f64; N_FIELDS];
            let mut s = 0.0;
            for f in 0..N_FIELDS {
                if tf[f] > 0 {
                    parts[f] = (w[f] * f64::from(tf[f]))
                        / ((1.0 - b[f]) + b[f] * (f64::from(lens[f]) / self.avglen[f]));
                    s += parts[f];
                }
            }
            let total = (weight * self.idf[t]) * (s / (k1 + s));
            let mut shares = [0.0f64; N_FIELDS];
            for f in 0..N_FIELDS {
                if parts[f] > 0.0 {
                    shares[f] = total * (parts[f] / s);
                }
            }
            out.push((self.vocab.get(t).to_string(), weight, shares));
        }
        Ok(out)
    }
}

type TrigramIndex = (Vec<u64>, Vec<u32>, Vec<u32>, Vec<u32>);

/// One run of consecutive terms of the trigram build.
struct TrigramRun {
    /// Each term's distinct trigrams, back to back.
    grams: Vec<u64>,
    /// Each term's number of them (0 for terms too short for the fallback).
    counts: Vec<u32>,
    /// The run's distinct trigrams.
    keys: FxHashSet<u64>,
}

/// The trigram index of the vocabulary: distinct trigrams ascending, their term ranges,
/// the terms (ascending ids), and each term's trigram count.
///
/// A counting sort in parallel over runs of terms, with no sort of the (trigram, term)
/// pairs and no single-threaded pass over them: a catalogue has few distinct trigrams (17k
/// at 100,000 tools, for 4.6M pairs), so each run collects its own in a small hash set that
/// stays in cache; the union, sorted, gives each trigram its rank; each run counts its
/// pairs per rank; the counts, summed run by run in term order, give each run its own
/// cursor per rank; and the runs then write their term ids to disjoint places of the array
/// at once (relaxed atomic stores: each place is written exactly once, and the array is
/// read only after the parallel loop has joined).
fn trigram_index(vocab: &StrTable) -> Result<TrigramIndex, String> {
    trigram_index_within(vocab, None)
}

/// [`trigram_index`], its histograms allowed `hist_budget` counters in all (default: as many
/// as the pairs, and at least 2^20); past it, runs share histograms.
fn trigram_index_within(
    vocab: &StrTable,
    hist_budget: Option<usize>,
) -> Result<TrigramIndex, String> {
    let v = vocab.len();
    let step = v
        .div_ceil(rayon::current_num_threads().max(1) * 4)
        .max(1024);
    let runs: Vec<TrigramRun> = (0..v.div_ceil(step))
        .into_par_iter()
        .map(|c| {
            let ids = c * step..((c + 1) * step).min(v);
            let mut run = TrigramRun {
                grams: Vec::with_capacity(ids.len() * 12),
                counts: Vec::with_capacity(ids.len()),
                keys: FxHashSet::default(),
            };
            let mut grams = Vec::new();
            for id in ids {
                let term = vocab.get(id);
                if term.chars().nth(FUZZY_MIN_CHARS - 1).is_some() {
                    trigrams_into(term, &mut grams);
                    run.counts.push(grams.len() as u32);
                    run.grams.extend_from_slice(&grams);
                    run.keys.extend(grams.iter().copied());
                } else {
                    run.counts.push(0);
                }
            }
            run
        })
        .collect();
    let total: usize = runs.iter().map(|r| r.grams.len()).sum();
    to_u32(total, "trigram postings")?;
    let mut tri_keys: Vec<u64> = {
        let mut all: FxHashSet<u64> = FxHashSet::default();
        for r in &runs {
            all.extend(r.keys.iter().copied());
        }
        all.into_iter().collect()
    };
    tri_keys.sort_unstable();
    let rank: FxHashMap<u64, u32> = tri_keys
        .iter()
        .enumerate()
        .map(|(r, &g)| (g, r as u32))
        .collect();
    let k = tri_keys.len();
    // A histogram per group of runs costs groups x k counters: a script with a large
    // alphabet (CJK) has millions of distinct trigrams, so past the budget (by default the
    // size of the pairs themselves) runs share histograms, down to one for all (the same
    // output, in term order, with less parallelism).
    let budget = hist_budget.unwrap_or_else(|| total.max(1 << 20));
    let groups = (budget / k.max(1)).clamp(1, runs.len().max(1));
    let per = runs.len().div_ceil(groups).max(1);
    let (tri_start, tri_terms) = trigram_scatter(&runs, &rank, k, total, step, per);
    let mut tri_count: Vec<u32> = Vec::with_capacity(v);
    for r in &runs {
        tri_count.extend_from_slice(&r.counts);
    }
    Ok((tri_keys, tri_start, tri_terms, tri_count))
}

/// The parallel scatter of [`trigram_index`], over groups of `per` consecutive runs: each
/// group counts its pairs per trigram rank, the counts summed group by group in term order
/// give each group its own cursor per rank, and the groups then write their term ids to
/// disjoint places at once. Returns each rank's start and the term ids.
fn trigram_scatter(
    runs: &[TrigramRun],
    rank: &FxHashMap<u64, u32>,
    k: usize,
    total: usize,
    step: usize,
    per: usize,
) -> (Vec<u32>, Vec<u32>) {
    let mut ranked: Vec<(Vec<u32>, Vec<u32>)> = runs
        .par_chunks(per)
        .map(|group| {
            let mut hist = vec![0u32; k];
            let ranks: Vec<u32> = group
                .iter()
                .flat_map(|r| r.grams.iter())
                .map(|g| {
                    let x = rank[g];
                    hist[x as usize] += 1;
                    x
                })
                .collect();
            (ranks, hist)
        })
        .collect();
    // Rank `r`'s terms start at `tri_start[r]`; within them, group by group: each group's
    // count becomes its cursor.
    let mut tri_start = Vec::with_capacity(k + 1);
    let mut at = 0u32;
    for x in 0..k {
        tri_start.push(at);
        for (_, hist) in ranked.iter_mut() {
            let n = hist[x];
            hist[x] = at;
            at += n;
        }
    }
    tri_start.push(at);
    let slots: Vec<AtomicU32> = (0..total).map(|_| AtomicU32::new(0)).collect();
    runs.par_chunks(per)
        .zip(ranked.par_iter_mut())
        .enumerate()
        .for_each(|(g, (group, (ranks, cursor)))| {
            let mut at = 0usize;
            for (j, run) in group.iter().enumerate() {
                let c = g * per + j;
                for (i, &n) in run.counts.iter().enumerate() {
                    let id = (c * step + i) as u32;
                    for &x in &ranks[at..at + n as usize] {
                        let p = &mut cursor[x as usize];
                        slots[*p as usize].store(id, AtomicOrdering::Relaxed);
                        *p += 1;
                    }
                    at += n as usize;
                }
            }
        });
    let tri_terms = slots.into_iter().map(AtomicU32::into_inner).collect();
    (tri_start, tri_terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chars::CharTable;

    fn analyzer() -> Arc<Analyzer> {
        let table = CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        let en = include_str!("../../../../python/toolsurface/data/stopwords_en.txt");
        let ru = include_str!("../../../../python/toolsurface/data/stopwords_ru.txt");
        Arc::new(Analyzer::new(table, en.lines().chain(ru.lines())))
    }

    fn doc(name: &str, hint: &str, summary: &str, body: &str, params: &str) -> [String; 5] {
        [name, hint, summary, body, params].map(String::from)
    }

    fn settings() -> Settings {
        Settings::new(
            [3.0, 2.5, 2.0, 1.0, 0.4],
            [0.3, 0.5, 0.5, 0.75, 0.75],
            1.2,
            0.6,
        )
    }

    fn catalogue() -> Index {
        let docs = vec![
            doc(
                "github__list_pull_requests",
                "",
                "Lists pull requests.",
                "Filter by state.",
                "owner\nrepo",
            ),
            doc(
                "github__create_pull_request",
                "",
                "Opens a new pull request.",
                "",
                "title\nbody",
            ),
            doc(
                "github__list_issues",
                "",
                "Lists issues in a repository.",
                "",
                "state",
            ),
            doc(
                "slack__send_message",
                "chat",
                "Sends a message to a channel.",
                "",
                "channel\ntext",
            ),
            doc(
                "calendar__create_event",
                "",
                "Creates a calendar event or meeting.",
                "",
                "start\nend",
            ),
        ];
        let names = docs.iter().map(|d| d[0].clone()).collect();
        Index::build(analyzer(), names, docs).expect("index")
    }

    /// Straightforward re-implementation of the scoring formula, for comparison.
    fn naive_score(idx: &Index, query: &str, s: &Settings, doc: usize) -> f64 {
        let toks = idx.analyzer().tokens(query);
        let mut seen: Vec<&str> = Vec::new();
        let mut score = 0.0;
        for t in &toks {
            if seen.contains(&t.as_str()) {
                continue;
            }
            seen.push(t);
            let Some(id) = idx.vocab.find(t, str_hash(t)) else {
                continue;
            };
            let id = id as usize;
            for p in idx.postings(id) {
                if idx.post_doc[p] as usize != doc {
                    continue;
                }
                let tf = idx.tf(p);
                let lens = idx.doc_len[doc];
                let mut x = 0.0;
                for f in 0..N_FIELDS {
                    if tf[f] > 0 {
                        x += (s.weights[f] * tf[f] as f64)
                            / ((1.0 - s.b[f]) + s.b[f] * (lens[f] as f64 / idx.avglen[f]));
                    }
                }
                score += (1.0 * idx.idf[id]) * (x / (s.k1 + x));
            }
        }
        score
    }

    #[test]
    fn scores_match_the_formula_and_rank() {
        let idx = catalogue();
        let s = settings();
        let r = idx
            .search("list pull requests", 10, &s, None, None)
            .unwrap();
        assert!(!r.fallback);
        assert_eq!(idx.name(r.docs[0] as usize), "github__list_pull_requests");
        for (d, sc) in r.docs.iter().zip(&r.scores) {
            assert_eq!(
                *sc,
                naive_score(&idx, "list pull requests", &s, *d as usize)
            );
        }
        for w in r.scores.windows(2) {
            assert!(w[0] >= w[1]);
        }
        // idf: ln(1 + (N - df + 0.5) / (df + 0.5)).
        let df = 2.0; // "pull" in two docs
        let want = (1.0f64 + ((5.0 - df) + 0.5) / (df + 0.5)).ln();
        assert_eq!(idx.idf("pull"), Some(want));
        // Every explanation sums (close enough) to the score.
        for (d, sc) in r.docs.iter().zip(&r.scores) {
            let ex = idx
                .explain("list pull requests", *d as i64, &s, None, false)
                .unwrap();
            let total: f64 = ex.iter().flat_map(|e| e.2.iter()).sum();
            assert!((total - sc).abs() <= 1e-12 * sc.abs(), "{total} vs {sc}");
        }
    }

    #[test]
    fn counts_of_255_and_more_are_exact_across_chunks() {
        // Several build chunks (256 documents at least each), counts either side of TF_BIG.
        let counts = |i: usize| -> [u32; N_FIELDS] {
            let big = |c: usize| if i % 7 == c { 250 + (i % 11) as u32 } else { 1 };
            [big(0), 0, 0, big(3), (i % 3) as u32]
        };
        let mut names = Vec::new();
        let mut docs = Vec::new();
        for i in 0..900 {
            let c = counts(i);
            let text = |n: u32| "word ".repeat(n as usize);
            names.push(format!("t{i:04}"));
            docs.push([
                text(c[0]),
                String::new(),
                String::new(),
                text(c[3]),
                text(c[4]),
            ]);
        }
        let idx = Index::build(analyzer(), names, docs).unwrap();
        let id = idx.vocab.find("word", str_hash("word")).unwrap() as usize;
        let got: Vec<(u32, [u32; N_FIELDS])> = idx
            .postings(id)
            .map(|p| (idx.post_doc[p], idx.tf(p)))
            .collect();
        let want: Vec<(u32, [u32; N_FIELDS])> = (0..900).map(|i| (i as u32, counts(i))).collect();
        assert_eq!(got, want);
        assert!(!idx.tf_big.is_empty());
    }

    #[test]
    fn k_ties_and_limits() {
        let idx = catalogue();
        let s = settings();
        let all = idx.search("create", 100, &s, None, None).unwrap();
        assert_eq!(all.docs.len(), 2);
        let zero = idx.search("create", 0, &s, None, None).unwrap();
        assert!(zero.docs.is_empty() && !zero.fallback);
        let one = idx.search("create", 1, &s, None, None).unwrap();
        assert_eq!(one.docs, all.docs[..1]);
        let huge = idx.search("create", usize::MAX, &s, None, None).unwrap();
        assert_eq!(huge, all);
        // Identical documents tie on score: the name decides.
        let docs = vec![
            doc("b", "", "same words", "", ""),
            doc("a", "", "same words", "", ""),
            doc("c", "", "same words", "", ""),
        ];
        let idx2 =
            Index::build(analyzer(), vec!["b".into(), "a".into(), "c".into()], docs).unwrap();
        let r = idx2.search("words", 10, &s, None, None).unwrap();
        assert_eq!(r.docs, vec![1, 0, 2]);
        assert_eq!(r.scores[0], r.scores[1]);
        let r = idx2.search("words", 2, &s, None, None).unwrap();
        assert_eq!(r.docs, vec![1, 0]);
    }

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
    fn fallback_finds_typos() {
        let idx = catalogue();
        let s = settings();
        let r = idx.search("calendr mesage", 10, &s, None, None).unwrap();
        assert!(r.fallback);
        let names: Vec<&str> = r.docs.iter().map(|&d| idx.name(d as usize)).collect();
        assert!(names.contains(&"calendar__create_event"), "{names:?}");
        assert!(names.contains(&"slack__send_message"), "{names:?}");
        let ex = idx.explain("calendr", 4, &s, None, true).unwrap();
        assert_eq!(ex[0].0, "calendar");
        assert!(ex[0].1 >= 0.5 && ex[0].1 < 1.0);
        // Nothing at all: fallback ran, found nothing.
        let r = idx.search("zzzzqqq", 10, &s, None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
        let r = idx.search("", 10, &s, None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
    }

    #[test]
    fn settings_are_validated_and_cached() {
        let idx = catalogue();
        let bad = [
            Settings::new([f64::NAN, 1.0, 1.0, 1.0, 1.0], [0.5; 5], 1.2, 0.5),
            Settings::new([-1.0, 1.0, 1.0, 1.0, 1.0], [0.5; 5], 1.2, 0.5),
            Settings::new([1.0; 5], [1.5, 0.5, 0.5, 0.5, 0.5], 1.2, 0.5),
            Settings::new([1.0; 5], [0.5; 5], 0.0, 0.5),
            Settings::new([1.0; 5], [0.5; 5], f64::INFINITY, 0.5),
            Settings::new([1.0; 5], [0.5; 5], 1.2, f64::NAN),
            Settings::new([1.0; 5], [0.5; 5], 1.2, -0.1),
        ];
        for s in bad {
            assert!(idx.search("pull", 3, &s, None, None).is_err());
            assert!(idx
                .search_many(&["pull".into()], 3, &s, None, None)
                .is_err());
            assert!(idx.explain("pull", 0, &s, None, false).is_err());
        }
        assert_eq!(idx.cached_settings(), 0);
        for i in 0..12 {
            let s = Settings::new([1.0 + i as f64; 5], [0.5; 5], 1.2, 0.5);
            idx.search("pull", 3, &s, None, None).unwrap();
        }
        assert_eq!(idx.cached_settings(), SETTINGS_CACHE);
        // Zero weights: nothing scores above zero, so the fallback runs and finds nothing.
        let zero = Settings::new([0.0; 5], [0.5; 5], 1.2, 0.5);
        let r = idx.search("pull", 3, &zero, None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
        assert!(idx.explain("pull", 99, &settings(), None, false).is_err());
        let ex = idx.explain("pull", 0, &zero, None, false).unwrap();
        assert_eq!(ex[0].2, [0.0; 5]);
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
        let many = idx.search_many(&qs, 3, &s, None, None).unwrap();
        for (q, r) in qs.iter().zip(many) {
            assert_eq!(r, idx.search(q, 3, &s, None, None).unwrap());
        }
    }

    #[test]
    fn empty_and_mismatched_catalogues() {
        let idx = Index::build(analyzer(), vec![], vec![]).unwrap();
        assert!(idx.is_empty());
        let r = idx.search("anything", 5, &settings(), None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
        assert!(Index::build(analyzer(), vec!["a".into()], vec![]).is_err());
        assert!(idx.memory_bytes() < 1 << 20);
        let idx = catalogue();
        assert!(idx.memory_bytes() > 0);
        assert!(idx.vocabulary_size() > 10);
    }

    #[test]
    fn trigram_index_matches_a_naive_one_over_many_runs() {
        // Enough terms for several runs of the parallel build, with shared and rare grams.
        let mut vocab = StrTable::default();
        let mut x = 7u64;
        for i in 0..9000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (x >> 60) as usize;
            let term: String = (0..len)
                .map(|j| {
                    let c = ((x >> (j * 5 % 50)) % 7) as u8;
                    if i % 11 == 0 && j == 1 {
                        'ж'
                    } else {
                        char::from(b'a' + c)
                    }
                })
                .collect();
            vocab.insert(&term, str_hash(&term)).unwrap();
        }
        // A histogram per run (default budget), runs sharing them, one for all (no budget).
        for budget in [None, Some(1000), Some(0)] {
            check_trigrams(&vocab, trigram_index_within(&vocab, budget).unwrap());
        }
    }

    fn check_trigrams(vocab: &StrTable, built: TrigramIndex) {
        let (keys, start, terms, count) = built;
        let mut naive: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
        let mut g = Vec::new();
        for (id, &n) in count.iter().enumerate() {
            let term = vocab.get(id);
            if term.chars().count() >= FUZZY_MIN_CHARS {
                trigrams_into(term, &mut g);
                assert_eq!(n as usize, g.len());
                for &k in &g {
                    naive.entry(k).or_default().push(id as u32);
                }
            } else {
                assert_eq!(n, 0);
            }
        }
        assert_eq!(count.len(), vocab.len());
        assert_eq!(keys, naive.keys().copied().collect::<Vec<_>>());
        assert_eq!(start.len(), keys.len() + 1);
        for (i, ids) in naive.values().enumerate() {
            assert_eq!(
                &terms[start[i] as usize..start[i + 1] as usize],
                ids.as_slice()
            );
        }
    }

    #[test]
    fn trigrams() {
        let mut g = Vec::new();
        trigrams_into("abc", &mut g);
        assert_eq!(g.len(), 3);
        trigrams_into("aaaa", &mut g);
        assert_eq!(g.len(), 3); // " aa", "aaa", "aa "
        trigrams_into("x", &mut g);
        assert_eq!(g, vec![gram_key(' ', 'x', ' ')]);
    }
}

#[cfg(test)]
mod topk_tests {
    use super::*;
    use crate::chars::CharTable;

    #[test]
    fn top_k_is_a_prefix_of_the_full_ranking() {
        let table = CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        let a = Arc::new(Analyzer::new(table, ["the"]));
        let words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"];
        let mut names = Vec::new();
        let mut fields = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..300 {
            let mut text = String::new();
            for _ in 0..(i % 7 + 1) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(words[(x >> 33) as usize % words.len()]);
                text.push(' ');
            }
            // Duplicate names and identical documents create exact ties.
            names.push(format!("tool{}", i % 50));
            fields.push([
                String::new(),
                String::new(),
                text,
                String::new(),
                String::new(),
            ]);
        }
        let idx = Index::build(a, names, fields).unwrap();
        let s = Settings::new([1.0; 5], [0.75; 5], 1.2, 0.0);
        for q in ["alpha", "alpha beta", "omega sigma gamma", "delt"] {
            let full = idx.search(q, usize::MAX, &s, None, None).unwrap();
            assert!(full.docs.len() > 40, "{q}");
            for k in 0..=full.docs.len() + 1 {
                let r = idx.search(q, k, &s, None, None).unwrap();
                let m = k.min(full.docs.len());
                assert_eq!(r.docs, full.docs[..m], "{q} k={k}");
                assert_eq!(r.scores, full.scores[..m]);
                assert_eq!(r.fallback, full.fallback);
            }
        }
    }
}

#[cfg(test)]
mod term_list_tests {
    use super::TermList;

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

#[cfg(test)]
mod scan_tests {
    use super::*;
    use crate::chars::CharTable;

    /// The shared character table with one stopword, "the".
    fn the_analyzer() -> Arc<Analyzer> {
        let table = CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        Arc::new(Analyzer::new(table, ["the"]))
    }

    /// A seeded linear congruential generator: the same documents on every run.
    fn lcg(seed: u64) -> impl FnMut() -> usize {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        }
    }

    /// The ranking by definition: every document scored term by term in query order, hits
    /// ordered by score, name, then first touch of a term-at-a-time scan.
    fn naive(
        idx: &Index,
        terms: &TermList,
        sat: &[f64],
        k: usize,
        allowed: Option<&Filter>,
    ) -> Vec<(u32, f64)> {
        let n = idx.len();
        let mut acc = vec![0.0f64; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut seen = vec![false; n];
        for &(id, w) in &terms.items {
            let q = w * idf_of(idx, id);
            for p in idx.postings(id as usize) {
                let d = idx.post_doc[p] as usize;
                if !seen[d] {
                    seen[d] = true;
                    touched.push(d as u32);
                }
                acc[d] += q * sat[p];
            }
        }
        let mut hits: Vec<(usize, u32, f64)> = touched
            .iter()
            .enumerate()
            .filter(|&(_, &d)| {
                acc[d as usize] > 0.0 && allowed.is_none_or(|f| f.contains(d as usize))
            })
            .map(|(pos, &d)| (pos, d, acc[d as usize]))
            .collect();
        hits.sort_by(|a, b| {
            b.2.total_cmp(&a.2)
                .then_with(|| idx.name(a.1 as usize).cmp(idx.name(b.1 as usize)))
                .then(a.0.cmp(&b.0))
        });
        hits.into_iter().take(k).map(|(_, d, s)| (d, s)).collect()
    }

    fn idf_of(idx: &Index, id: u32) -> f64 {
        idx.idf[id as usize]
    }

    /// Every query's top `k`, unfiltered and filtered (documents `i % modulus != left_out`
    /// only), equals the definition's ranking (`naive`), scores and order alike.
    fn assert_ranks_as_naive(
        idx: &Index,
        s: &Settings,
        queries: &[&str],
        ks: &[usize],
        modulus: i64,
        left_out: i64,
    ) {
        let n = idx.len();
        let sat = idx.sat_table(s);
        let kept: Vec<i64> = (0..n as i64).filter(|i| i % modulus != left_out).collect();
        let filter = idx.make_filter(&kept).unwrap();
        for &q in queries {
            let toks = idx.analyzer.tokens(q);
            let mut terms = TermList::default();
            idx.main_terms(&toks, &vec![1.0; toks.len()], None, 0.0, &mut terms);
            for allowed in [None, Some(&filter)] {
                let full = naive(idx, &terms, &sat.sat, usize::MAX, allowed);
                assert!(!full.is_empty(), "{q} n={n}");
                for &k in ks {
                    let r = idx.search(q, k, s, None, allowed).unwrap();
                    let want = &full[..k.min(full.len())];
                    let got: Vec<(u32, f64)> = r
                        .docs
                        .iter()
                        .copied()
                        .zip(r.scores.iter().copied())
                        .collect();
                    assert_eq!(got, want, "{q} n={n} k={k} filtered={}", allowed.is_some());
                    assert!(!r.fallback);
                }
            }
        }
    }

    /// The galloping search from any guess, and the interpolated guesses of `block_ends`,
    /// give exactly `partition_point`, on dense, sparse and clustered id lists.
    #[test]
    fn block_boundaries_are_partition_points() {
        let mut next = lcg(5);
        for case in 0..300 {
            let len = 1 + next() % 200;
            let gap = 1 + case % 7 * (1 + next() % 50);
            let mut docs = Vec::with_capacity(len);
            let mut d = next() % 10;
            for _ in 0..len {
                docs.push(d as u32);
                // Mostly small steps with a rare jump: clustered ids defeat interpolation.
                d += 1 + if next() % 16 == 0 {
                    gap * 20
                } else {
                    next() % gap
                };
            }
            let top = d + 5;
            for target in (0..top).step_by(1 + top / 97) {
                let want = docs.partition_point(|&x| (x as usize) < target);
                for guess in 0..len {
                    assert_eq!(
                        gallop_partition(&docs, guess, target),
                        want,
                        "{docs:?} {guess} {target}"
                    );
                }
                let lo = next() % len;
                let cursors = [(1.0, lo..len), (1.0, 0..len), (1.0, len..len)];
                let mut ends = Vec::new();
                block_ends(&docs, &cursors, target, &mut ends);
                let part = |r: &std::ops::Range<usize>| {
                    docs[r.clone()].partition_point(|&x| (x as usize) < target)
                };
                let wanted: Vec<usize> = cursors.iter().map(|(_, r)| part(r)).collect();
                assert_eq!(ends, wanted, "{docs:?} {target} from {lo}");
            }
        }
    }

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Naming {
        Shuffled,
        Ordered,
        Repeated,
    }

    /// Names ascend with the ids only when strictly ascending, in byte (code point) order.
    #[test]
    fn names_in_id_order_are_detected() {
        let a = the_analyzer();
        let cases: [(&[&str], bool); 6] = [
            (&[], true),
            (&["a"], true),
            (&["a", "ab", "b"], true),
            (&["a", "a"], false),
            (&["b", "a"], false),
            (&["z", "é"], true),
        ];
        for (names, ordered) in cases {
            let fields = vec![<[String; N_FIELDS]>::default(); names.len()];
            let owned = names.iter().map(|s| s.to_string()).collect();
            let idx = Index::build(Arc::clone(&a), owned, fields).unwrap();
            assert_eq!(idx.name_ordered, ordered, "{names:?}");
        }
    }

    #[test]
    fn every_scan_path_ranks_as_the_definition() {
        let a = the_analyzer();
        let words = [
            "alpha", "beta", "gamma", "delta", "omega", "sigma", "pi", "rho",
        ];
        let s = Settings::new(
            [1.0, 0.5, 2.0, 0.25, 1.5],
            [0.75, 0.2, 0.5, 1.0, 0.0],
            1.2,
            0.7,
        );
        // One block (re-walk), one block of 64 slots (sweep), several blocks (sweep); names
        // with duplicates and out of id order, ascending with the ids (ties by id), and
        // ascending with duplicates (ties by first touch).
        let namings = [Naming::Shuffled, Naming::Ordered, Naming::Repeated];
        for (n, naming) in [40usize, 60, 150, 333]
            .into_iter()
            .flat_map(|n| namings.map(|m| (n, m)))
        {
            let mut next = lcg(99 + n as u64);
            let mut names = Vec::new();
            let mut fields = Vec::new();
            for i in 0..n {
                let mut f: [String; N_FIELDS] = Default::default();
                for field in f.iter_mut() {
                    for _ in 0..next() % 4 {
                        field.push_str(words[next() % words.len()]);
                        field.push(' ');
                    }
                }
                // Duplicate names and identical documents make exact ties.
                names.push(match naming {
                    Naming::Shuffled => format!("tool{}", (i * 7) % (n / 3 + 1)),
                    Naming::Ordered => format!("tool{i:04}"),
                    Naming::Repeated => format!("tool{:04}", i / 2),
                });
                fields.push(f);
            }
            let idx = Index::build(Arc::clone(&a), names, fields).unwrap();
            assert_eq!(idx.name_ordered, naming == Naming::Ordered);
            let queries = [
                "alpha",
                "beta gamma",
                "omega pi rho alpha",
                "sigma delta beta alpha",
            ];
            let ks = [0, 1, 2, 3, 5, 10, 17, 64, 65, 100, n, n + 5];
            assert_ranks_as_naive(&idx, &s, &queries, &ks, 3, 1);
        }
    }

    /// Rare heavy terms and common light ones (the case where the walk stops early), with
    /// many exact ties around the k-th best: every top must be the definition's.
    #[test]
    fn skipping_light_terms_keeps_the_ranking() {
        let a = the_analyzer();
        let s = Settings::new([5.0, 2.5, 1.25, 0.4, 0.4], [0.5; N_FIELDS], 2.0, 1.0);
        for n in [60usize, 300, 900] {
            let mut next = lcg(7 + n as u64);
            let mut names = Vec::new();
            let mut fields = Vec::new();
            for i in 0..n {
                let mut f: [String; N_FIELDS] = Default::default();
                // "list" and "get" nearly everywhere, "slack" and "calendar" rarely;
                // every fifth document a copy of the one before (equal scores).
                if i % 5 == 4 {
                    f = fields.last().cloned().expect("a document before");
                } else {
                    for (field, text) in f.iter_mut().enumerate() {
                        for w in ["list", "get", "item", "slack", "calendar", "event"] {
                            let p = match w {
                                "list" | "get" => 2,
                                "item" | "event" => 6,
                                _ => 25,
                            };
                            if next() % p == 0 {
                                text.push_str(w);
                                text.push(' ');
                                if field > 2 && next() % 2 == 0 {
                                    text.push_str(w);
                                    text.push(' ');
                                }
                            }
                        }
                    }
                }
                names.push(format!("t{:03}", (i * 37) % (n / 2 + 1)));
                fields.push(f);
            }
            let idx = Index::build(Arc::clone(&a), names, fields).unwrap();
            let queries = [
                "slack list",
                "list get slack",
                "calendar event list get item",
                "get list",
                "item calendar",
            ];
            assert_ranks_as_naive(&idx, &s, &queries, &[1, 2, 3, 4, 5, 7, 10, 20, 64], 4, 2);
        }
    }

    /// The query memo keeps each word's vocabulary and lexicon ids, and the scratch the
    /// lexicon targets' ids, per index and lexicon: alternating between indexes (same
    /// analyzer, other vocabularies) and lexicons on one thread gives what a fresh thread
    /// (empty memo) gives.
    #[test]
    fn the_query_memo_follows_the_index_and_lexicon() {
        let a = the_analyzer();
        let doc = |text: &str| {
            [
                text.to_string(),
                String::new(),
                text.to_string(),
                String::new(),
                String::new(),
            ]
        };
        let names = |n: usize| (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>();
        let one = Index::build(
            Arc::clone(&a),
            names(3),
            vec![doc("alpha beta"), doc("gamma"), doc("beta delta")],
        )
        .unwrap();
        let two = Index::build(
            Arc::clone(&a),
            names(3),
            vec![doc("delta"), doc("gamma alpha"), doc("epsilon")],
        )
        .unwrap();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex_a = Lexicon::new(&a, &[e("zeta", "gamma"), e("beta", "epsilon")]).unwrap();
        let lex_b = Lexicon::new(&a, &[e("gamma", "beta"), e("zeta", "delta")]).unwrap();
        let s = Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
        let queries = ["alpha zeta", "beta gamma", "zeta", "delta epsilon zeta"];
        let fresh = |idx: &Index, q: &str, lex: Option<&Lexicon>| {
            std::thread::scope(|sc| {
                sc.spawn(|| idx.search(q, 3, &s, lex, None).unwrap())
                    .join()
                    .unwrap()
            })
        };
        for _ in 0..3 {
            for q in queries {
                for idx in [&one, &two] {
                    for lex in [None, Some(&lex_a), Some(&lex_b)] {
                        let got = idx.search(q, 3, &s, lex, None).unwrap();
                        assert_eq!(got, fresh(idx, q, lex), "{q}");
                    }
                }
                // One lexicon, the index alternating: the targets' ids are the index's.
                for lex in [Some(&lex_a), Some(&lex_b)] {
                    for idx in [&one, &two, &one] {
                        let got = idx.search(q, 3, &s, lex, None).unwrap();
                        assert_eq!(got, fresh(idx, q, lex), "{q}");
                    }
                }
            }
        }
    }

    /// A lexicon target's id is known for the index and lexicon it was looked up in only,
    /// also after the stamp comes round (every slot is then cleared, not taken as known).
    #[test]
    fn target_ids_are_known_only_for_their_index_and_lexicon() {
        let a = the_analyzer();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex = Lexicon::new(&a, &[e("zeta", "gamma delta")]).unwrap();
        let other = Lexicon::new(&a, &[e("zeta", "gamma"), e("eta", "delta")]).unwrap();
        assert_eq!((lex.target_count(), other.target_count()), (2, 2));
        let mut t = TargetIds::default();
        let (slots, stamp) = t.table(7, &lex);
        assert!(slots.iter().all(|s| s.0 != stamp));
        slots[0] = (stamp, 3);
        let (slots, again) = t.table(7, &lex);
        assert_eq!((again, slots[0]), (stamp, (stamp, 3)));
        for (index, lexicon) in [(8, &lex), (7, &other), (7, &lex)] {
            let (slots, now) = t.table(index, lexicon);
            assert!(slots.iter().all(|s| s.0 != now), "{index}");
        }
        // A slot stamped long ago, and the stamp about to come round.
        t.slots[1] = (1, 9);
        t.stamp = u32::MAX;
        let (slots, now) = t.table(9, &lex);
        assert!(slots.iter().all(|s| s.0 != now));
    }

    #[test]
    fn the_query_memo_follows_the_analyzer() {
        let table = || {
            CharTable::parse(include_str!("../../../../python/toolsurface/data/chars.tsv"))
                .expect("table")
        };
        // Same documents, analyzers that differ only in a stopword.
        let plain = Arc::new(Analyzer::new(table(), ["the"]));
        let picky = Arc::new(Analyzer::new(table(), ["the", "alpha"]));
        let docs = || {
            vec![
                [
                    "alpha_tool".to_string(),
                    String::new(),
                    "alpha beta".to_string(),
                    String::new(),
                    String::new(),
                ],
                [
                    "beta_tool".to_string(),
                    String::new(),
                    "beta gamma".to_string(),
                    String::new(),
                    String::new(),
                ],
            ]
        };
        let names = || vec!["alpha_tool".to_string(), "beta_tool".to_string()];
        let a = Index::build(plain, names(), docs()).unwrap();
        let b = Index::build(picky, names(), docs()).unwrap();
        let s = Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.0);
        for _ in 0..3 {
            for q in ["Alpha", "alpha beta", "ALPHA_beta", "alpha"] {
                let ra = a.search(q, 5, &s, None, None).unwrap();
                let rb = b.search(q, 5, &s, None, None).unwrap();
                let ta: Vec<String> = a
                    .query_terms(q, None, 0.0)
                    .into_iter()
                    .map(|t| t.0)
                    .collect();
                let tb: Vec<String> = b
                    .query_terms(q, None, 0.0)
                    .into_iter()
                    .map(|t| t.0)
                    .collect();
                assert!(ta.contains(&"alpha".to_string()), "{q}: {ta:?}");
                assert!(!tb.contains(&"alpha".to_string()), "{q}: {tb:?}");
                // "alpha" finds document 0 through the plain analyzer only.
                assert_eq!(ra.docs.first(), Some(&0), "{q}");
                if q == "alpha" || q == "Alpha" {
                    assert!(rb.fallback, "{q}: {rb:?}");
                } else {
                    // Only "beta" counts: both documents have it, the first in one field.
                    assert!(!rb.fallback && rb.docs == [1, 0], "{q}: {rb:?}");
                }
            }
        }
    }
}
