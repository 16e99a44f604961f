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
//!   posting, cached per settings value) and adds `(qw * idf) * sat` into a dense
//!   accumulator (no branch per posting), then walks the same postings again: the first
//!   visit of a document reads its score, zeroes the slot for the next search and offers
//!   the hit to a bounded top-k (a score below the k-th best is rejected with one
//!   comparison).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::{Arc, RwLock};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::{Analyzer, TokenScratch};
use crate::lexicon::Lexicon;
use crate::strtab::{str_hash, Arena, StrTable};

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

/// A field count of a posting that does not fit a byte: the exact counts are in `tf_big`.
const TF_BIG: u8 = u8::MAX;
/// Up to this `k`, the best hits are kept in a sorted array as they come; above it, all
/// hits are collected and partially sorted.
const TOP_INSERT_MAX: usize = 64;
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
    entries: RwLock<Vec<(ScoringKey, Arc<[f64]>)>>,
}

impl SatCache {
    fn get(&self, key: &ScoringKey) -> Option<Arc<[f64]>> {
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

    fn insert(&self, key: ScoringKey, table: Arc<[f64]>) -> Arc<[f64]> {
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
    /// (start, end) in `text`, and the token's hash.
    toks: Vec<(usize, usize, u64)>,
}

impl QueryMemo {
    fn reset(&mut self, owner: u64) {
        self.owner = owner;
        self.map.clear();
        self.text.clear();
        self.toks.clear();
    }

    #[inline]
    fn token(&self, t: &(usize, usize, u64)) -> &str {
        &self.text[t.0..t.1]
    }
}

/// Per-thread buffers of the query path.
#[derive(Debug, Default)]
struct Scratch {
    tok: TokenScratch,
    memo: QueryMemo,
    /// The query's tokens, as entries of `memo.toks`.
    qtoks: Vec<(usize, usize, u64)>,
    /// The query tokens' lexicon word ids.
    lex_ids: Vec<u32>,
    terms: TermList,
    accum: Accum,
    fuzzy: FuzzyScratch,
}

/// Score accumulator: a dense slot per document. Between searches every slot is 0.0 (the
/// collection pass restores that); `dirty` marks a search that did not finish (a panic),
/// so the next one clears all.
#[derive(Debug, Default)]
struct Accum {
    acc: Vec<f64>,
    dirty: bool,
    top: Vec<Hit>,
}

/// The per-call parameters of a search.
struct Request<'a> {
    k: usize,
    expansion_weight: f64,
    sat: &'a [f64],
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
/// field lengths and (local term id, per-field counts) pairs.
struct ChunkTerms {
    /// Local terms, by local id.
    terms: StrTable,
    lens: Vec<[u32; N_FIELDS]>,
    /// End of each document's pairs in `pairs`.
    doc_ends: Vec<usize>,
    pairs: Vec<(u32, [u32; N_FIELDS])>,
}

/// The columnar index.
pub struct Index {
    analyzer: Arc<Analyzer>,
    names: Arena,
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

/// Stems shared by the workers of one build: a word is stemmed once per build, not once
/// per chunk of documents (Snowball costs about a microsecond a word).
#[derive(Default)]
struct StemCache {
    map: RwLock<FxHashMap<Box<str>, Box<str>>>,
}

impl StemCache {
    /// The stem of `word` (folded, filtered) into `out`.
    fn stem(&self, an: &Analyzer, word: &str, out: &mut String) {
        out.clear();
        {
            let map = self.map.read().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = map.get(word) {
                out.push_str(s);
                return;
            }
        }
        let stem = an.stem(word);
        out.push_str(&stem);
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        map.entry(word.into())
            .or_insert_with(|| stem.as_ref().into());
    }
}

/// Analyse a run of documents into a [`ChunkTerms`]. Each distinct identifier is analysed
/// once (its local term ids are remembered, keyed by its text), and each distinct folded
/// word is stemmed once. The memo and the word map are [`StrTable`]s: keys packed in an
/// arena, 8-byte slots, so that the lookup every identifier costs stays in cache as much
/// as it can.
fn analyse_chunk(
    an: &Analyzer,
    stems: &StemCache,
    docs: &[[String; N_FIELDS]],
) -> Result<ChunkTerms, String> {
    let mut stem = String::new();
    let mut scratch = TokenScratch::default();
    // Identifier -> range of `memo_ids`.
    let mut memo = StrTable::default();
    let mut memo_ranges: Vec<(usize, usize)> = Vec::new();
    let mut memo_ids: Vec<u32> = Vec::new();
    // Folded word -> local id of its stem.
    let mut words = StrTable::default();
    let mut word_term: Vec<u32> = Vec::new();
    let mut terms = StrTable::default();
    let mut counts: Vec<[u32; N_FIELDS]> = Vec::new();
    let mut stamp: Vec<u32> = Vec::new();
    let mut doc_terms: Vec<u32> = Vec::new();
    let mut out = ChunkTerms {
        terms: StrTable::default(),
        lens: Vec::with_capacity(docs.len()),
        doc_ends: Vec::with_capacity(docs.len()),
        pairs: Vec::new(),
    };
    let mut failure: Option<String> = None;
    for (di, doc) in docs.iter().enumerate() {
        let mark = di as u32 + 1;
        doc_terms.clear();
        let mut lens = [0u32; N_FIELDS];
        for (f, text) in doc.iter().enumerate() {
            let mut n = 0usize;
            an.for_each_identifier(text, |ident| {
                let h = str_hash(ident);
                let (a, b) = match memo.find(ident, h) {
                    Some(e) => memo_ranges[e as usize],
                    None => {
                        if memo.len() >= BUILD_MEMO_IDENTS || memo.text_len() >= BUILD_MEMO_BYTES {
                            memo.clear();
                            memo_ranges.clear();
                            memo_ids.clear();
                        }
                        let a = memo_ids.len();
                        an.identifier_words(ident, &mut scratch, &mut |w: &str| {
                            let wh = str_hash(w);
                            let id = match words.find(w, wh) {
                                Some(wid) => word_term[wid as usize],
                                None => {
                                    stems.stem(an, w, &mut stem);
                                    let inserted = terms
                                        .insert(&stem, str_hash(&stem))
                                        .and_then(|(id, _)| words.insert(w, wh).map(|_| id));
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
                        let range = (a, memo_ids.len());
                        if let Err(e) = memo.insert(ident, h) {
                            failure.get_or_insert(e);
                        }
                        memo_ranges.push(range);
                        range
                    }
                };
                for &id in &memo_ids[a..b] {
                    let i = id as usize;
                    if i >= stamp.len() {
                        stamp.resize(i + 1, 0);
                        counts.resize(i + 1, [0; N_FIELDS]);
                    }
                    if stamp[i] != mark {
                        stamp[i] = mark;
                        counts[i] = [0; N_FIELDS];
                        doc_terms.push(id);
                    }
                    counts[i][f] = counts[i][f].saturating_add(1);
                }
                n += b - a;
            });
            lens[f] = to_u32(n, "field token count")?;
        }
        if let Some(e) = failure.take() {
            return Err(e);
        }
        out.lens.push(lens);
        out.pairs
            .extend(doc_terms.iter().map(|&id| (id, counts[id as usize])));
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
        let stems = StemCache::default();
        let chunks: Vec<ChunkTerms> = fields
            .par_chunks(chunk)
            .map(|docs| analyse_chunk(an, &stems, docs))
            .collect::<Result<_, String>>()?;
        drop(fields);
        drop(stems);

        let mut name_arena = Arena::default();
        for name in &names {
            name_arena.push(name)?;
        }
        drop(names);
        name_arena.shrink_to_fit();

        // Merge the chunks' vocabularies (in document order) and count document frequencies.
        let mut vocab = StrTable::default();
        let mut df: Vec<u32> = Vec::new();
        let mut maps: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
        for c in &chunks {
            let mut map = Vec::with_capacity(c.terms.len());
            for local in 0..c.terms.len() {
                let term = c.terms.get(local);
                let (id, new) = vocab.insert(term, str_hash(term))?;
                if new {
                    df.push(0);
                }
                map.push(id);
            }
            for &(local, _) in &c.pairs {
                df[map[local as usize] as usize] += 1;
            }
            maps.push(map);
        }
        vocab.shrink_to_fit();

        // Postings: offsets per term, doc ids ascending, per-field counts.
        let mut term_start: Vec<u32> = Vec::with_capacity(df.len() + 1);
        let mut total = 0usize;
        for &d in &df {
            term_start.push(to_u32(total, "postings count")?);
            total += d as usize;
        }
        term_start.push(to_u32(total, "postings count")?);
        let mut cursor: Vec<u32> = term_start[..df.len()].to_vec();
        let mut post_doc = vec![0u32; total];
        let mut post_tf = vec![[0u8; N_FIELDS]; total];
        let mut tf_big: Vec<(u32, [u32; N_FIELDS])> = Vec::new();
        let mut doc_len: Vec<[u32; N_FIELDS]> = Vec::with_capacity(n);
        let mut totals = [0u64; N_FIELDS];
        let mut doc = 0u32;
        for (c, map) in chunks.into_iter().zip(&maps) {
            let mut start = 0;
            for (lens, &end) in c.lens.iter().zip(&c.doc_ends) {
                for &(local, tf) in &c.pairs[start..end] {
                    let id = map[local as usize] as usize;
                    let p = cursor[id];
                    cursor[id] += 1;
                    post_doc[p as usize] = doc;
                    post_tf[p as usize] = tf.map(|x| x.min(u32::from(TF_BIG)) as u8);
                    if tf.iter().any(|&x| x >= u32::from(TF_BIG)) {
                        tf_big.push((p, tf));
                    }
                }
                for (total, &len) in totals.iter_mut().zip(lens) {
                    *total += u64::from(len);
                }
                doc_len.push(*lens);
                doc += 1;
                start = end;
            }
        }
        drop(maps);
        tf_big.sort_unstable_by_key(|&(p, _)| p);
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

        Ok(Index {
            analyzer,
            names: name_arena,
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

    /// Weighted query terms in order: the query's own (weight 1), then lexicon expansions
    /// (weight `expansion_weight`); a repeated term keeps its first position and largest
    /// weight. Terms outside the vocabulary are included.
    pub fn query_terms(
        &self,
        query: &str,
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
    ) -> Vec<(String, f64)> {
        let toks = self.analyzer.tokens(query);
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
        for t in &toks {
            add(t, 1.0);
        }
        if let Some(lex) = lexicon {
            if expansion_weight > 0.0 {
                lex.expand(&toks, |t| add(t, expansion_weight));
            }
        }
        out
    }

    /// The main stage's terms of analysed tokens (the explain path's; searches use
    /// [`Index::query_main_terms`]).
    fn main_terms(
        &self,
        toks: &[String],
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
        out: &mut TermList,
    ) {
        out.clear();
        for t in toks {
            if let Some(id) = self.vocab.find(t, str_hash(t)) {
                out.add(id, 1.0);
            }
        }
        if let Some(lex) = lexicon {
            if expansion_weight > 0.0 {
                lex.expand(toks, |t| {
                    if let Some(id) = self.vocab.find(t, str_hash(t)) {
                        out.add(id, expansion_weight);
                    }
                });
            }
        }
    }

    /// Analyse `query` into `sc.qtoks` through the per-thread identifier memo.
    fn analyse_query(&self, query: &str, sc: &mut Scratch) {
        let Scratch {
            tok, memo, qtoks, ..
        } = sc;
        let owner = self.analyzer.id();
        if memo.owner != owner
            || memo.map.len() >= QUERY_MEMO_IDENTS
            || memo.text.len() >= QUERY_MEMO_BYTES
        {
            // Start over only between queries, so that the ranges in `qtoks` stay valid.
            memo.reset(owner);
        }
        qtoks.clear();
        self.analyzer.for_each_identifier(query, |ident| {
            let (a, b) = match memo.map.get(ident) {
                Some(&range) => range,
                None => {
                    let a = memo.toks.len();
                    let QueryMemo { text, toks, .. } = &mut *memo;
                    self.analyzer.identifier_tokens(ident, tok, &mut |t: &str| {
                        let start = text.len();
                        text.push_str(t);
                        toks.push((start, text.len(), str_hash(t)));
                    });
                    let range = (a, memo.toks.len());
                    memo.map.insert(ident.into(), range);
                    range
                }
            };
            qtoks.extend_from_slice(&memo.toks[a..b]);
        });
    }

    /// The main stage's terms of the analysed query in `sc`: its tokens in the vocabulary
    /// (weight 1), then the lexicon's expansions in the vocabulary.
    fn query_main_terms(&self, req: &Request<'_>, sc: &mut Scratch) {
        let Scratch {
            memo,
            qtoks,
            lex_ids,
            terms,
            ..
        } = sc;
        terms.clear();
        for t in qtoks.iter() {
            if let Some(id) = self.vocab.find(memo.token(t), t.2) {
                terms.add(id, 1.0);
            }
        }
        let Some(lex) = req.lexicon else {
            return;
        };
        if req.expansion_weight > 0.0 {
            lex_ids.clear();
            lex_ids.extend(qtoks.iter().map(|t| lex.word_id(memo.token(t), t.2)));
            lex.expand_ids(lex_ids, |t, h| {
                if let Some(id) = self.vocab.find(t, h) {
                    terms.add(id, req.expansion_weight);
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
    fn sat_table(&self, settings: &Settings) -> Arc<[f64]> {
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
        let table: Arc<[f64]> = self
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
        self.cache.insert(key, table)
    }

    /// Add each term's weighted postings into the accumulator.
    fn accumulate(&self, terms: &TermList, sat: &[f64], accum: &mut Accum) {
        let n = self.names.len();
        if accum.dirty {
            accum.acc.iter_mut().for_each(|x| *x = 0.0);
        }
        if accum.acc.len() < n {
            accum.acc.resize(n, 0.0);
        }
        accum.dirty = true;
        let acc = &mut accum.acc[..n];
        for &(id, weight) in &terms.items {
            let t = id as usize;
            let q = weight * self.idf[t];
            let range = self.postings(t);
            for (&doc, &s) in self.post_doc[range.clone()].iter().zip(&sat[range]) {
                acc[doc as usize] += q * s;
            }
        }
    }

    /// Walk the postings of `terms` again: the first visit of a document reads its score
    /// and zeroes its slot for the next search (a later visit, or a document whose score
    /// is 0, reads 0 and is skipped; such a document is no hit). The best `k` hits (score
    /// > 0, admitted by `allowed`) go to `accum.top`, best first. Returns the number of hits.
    fn collect(
        &self,
        terms: &TermList,
        k: usize,
        allowed: Option<&Filter>,
        accum: &mut Accum,
    ) -> usize {
        let n = self.names.len();
        let Accum { acc, top, .. } = accum;
        let acc = &mut acc[..n];
        let small = k <= TOP_INSERT_MAX;
        top.clear();
        let mut hits = 0usize;
        // Scores below this cannot enter a full top (the k-th best); 0 while it fills.
        let mut floor = 0.0f64;
        for &(id, _) in &terms.items {
            for &doc in &self.post_doc[self.postings(id as usize)] {
                let d = doc as usize;
                let score = acc[d];
                if score == 0.0 {
                    continue;
                }
                acc[d] = 0.0;
                if score.partial_cmp(&0.0) != Some(Ordering::Greater)
                    || allowed.is_some_and(|f| !f.contains(d))
                {
                    continue;
                }
                hits += 1;
                if score < floor {
                    continue;
                }
                let hit = Hit { score, doc };
                if !small {
                    top.push(hit);
                } else if k > 0 && self.offer(top, k, hit, terms) {
                    floor = top[k - 1].score;
                }
            }
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
        hits
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
    #[cold]
    fn tie_order(&self, a: u32, b: u32, terms: &TermList) -> Ordering {
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
        self.accumulate(&sc.terms, req.sat, &mut sc.accum);
        let mut hits = self.collect(&sc.terms, req.k, req.allowed, &mut sc.accum);
        let fallback = hits == 0;
        if fallback {
            let Scratch {
                memo,
                qtoks,
                terms,
                accum,
                fuzzy,
                ..
            } = sc;
            let toks: Vec<&str> = qtoks.iter().map(|t| memo.token(t)).collect();
            self.fuzzy_terms(&toks, fuzzy, terms);
            self.accumulate(terms, req.sat, accum);
            hits = self.collect(terms, req.k, req.allowed, accum);
        }
        let top = &sc.accum.top;
        let k = req.k.min(hits).min(top.len());
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
        let toks = self.analyzer.tokens(query);
        let mut terms = TermList::default();
        if fallback {
            let refs: Vec<&str> = toks.iter().map(String::as_str).collect();
            self.fuzzy_terms(&refs, &mut FuzzyScratch::default(), &mut terms);
        } else {
            self.main_terms(&toks, lexicon, settings.expansion_weight, &mut terms);
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

/// The trigram index of the vocabulary: distinct trigrams ascending, their term ranges,
/// the terms (ascending ids), and each term's trigram count. Terms' trigrams are found in
/// parallel; the index is then laid out by counting (no sort of the (trigram, term) pairs).
fn trigram_index(vocab: &StrTable) -> Result<TrigramIndex, String> {
    let v = vocab.len();
    let step = v
        .div_ceil(rayon::current_num_threads().max(1) * 4)
        .max(1024);
    // Per run of terms: each term's distinct trigrams, back to back, and their counts.
    let parts: Vec<(Vec<u64>, Vec<u32>)> = (0..v.div_ceil(step))
        .into_par_iter()
        .map(|c| {
            let ids = c * step..((c + 1) * step).min(v);
            let mut all = Vec::new();
            let mut counts = Vec::with_capacity(ids.len());
            let mut grams = Vec::new();
            for id in ids {
                let term = vocab.get(id);
                if term.chars().nth(FUZZY_MIN_CHARS - 1).is_some() {
                    trigrams_into(term, &mut grams);
                    counts.push(grams.len() as u32);
                    all.extend_from_slice(&grams);
                } else {
                    counts.push(0);
                }
            }
            (all, counts)
        })
        .collect();
    let total: usize = parts.iter().map(|p| p.0.len()).sum();
    to_u32(total, "trigram postings")?;
    // Distinct trigrams, sorted; each pair's trigram by its rank.
    let mut slot: FxHashMap<u64, u32> = FxHashMap::default();
    for (all, _) in &parts {
        for &g in all {
            let next = slot.len() as u32;
            slot.entry(g).or_insert(next);
        }
    }
    let mut tri_keys: Vec<u64> = slot.keys().copied().collect();
    tri_keys.par_sort_unstable();
    for (rank, g) in tri_keys.iter().enumerate() {
        slot.insert(*g, rank as u32);
    }
    let mut tri_start = vec![0u32; tri_keys.len() + 1];
    for (all, _) in &parts {
        for g in all {
            tri_start[slot[g] as usize + 1] += 1;
        }
    }
    for i in 1..tri_start.len() {
        tri_start[i] += tri_start[i - 1];
    }
    let mut cursor = tri_start.clone();
    let mut tri_terms = vec![0u32; total];
    let mut tri_count: Vec<u32> = Vec::with_capacity(v);
    let mut id = 0u32;
    for (all, counts) in &parts {
        let mut at = 0;
        for &c in counts {
            for g in &all[at..at + c as usize] {
                let r = slot[g] as usize;
                tri_terms[cursor[r] as usize] = id;
                cursor[r] += 1;
            }
            at += c as usize;
            id += 1;
        }
        tri_count.extend_from_slice(counts);
    }
    Ok((tri_keys, tri_start, tri_terms, tri_count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chars::CharTable;

    fn analyzer() -> Arc<Analyzer> {
        let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        let en = include_str!("../../../python/toolsurface/data/stopwords_en.txt");
        let ru = include_str!("../../../python/toolsurface/data/stopwords_ru.txt");
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
        let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
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

impl Index {
    /// TEMPORARY: (postings of the query's terms, best-case MaxScore candidates).
    pub fn debug_maxscore(
        &self,
        query: &str,
        settings: &Settings,
        lexicon: Option<&Lexicon>,
    ) -> (usize, usize, usize) {
        let sat = self.sat_table(settings);
        let r = self.search(query, 10, settings, lexicon, None).unwrap();
        let toks = self.analyzer.tokens(query);
        let mut terms = TermList::default();
        self.main_terms(&toks, lexicon, settings.expansion_weight, &mut terms);
        let theta = r.scores.last().copied().unwrap_or(0.0);
        let mut ub: Vec<(f64, usize)> = terms
            .items
            .iter()
            .map(|&(id, w)| {
                let range = self.postings(id as usize);
                let m = sat[range.clone()].iter().copied().fold(0.0, f64::max);
                ((w * self.idf[id as usize]) * m, id as usize)
            })
            .collect();
        ub.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: usize = ub.iter().map(|&(_, t)| self.postings(t).len()).sum();
        let mut acc = 0.0;
        let mut e = 0;
        while e < ub.len() && acc + ub[e].0 < theta {
            acc += ub[e].0;
            e += 1;
        }
        let mut docs: Vec<u32> = ub[e..]
            .iter()
            .flat_map(|&(_, t)| self.post_doc[self.postings(t)].iter().copied())
            .collect();
        docs.sort_unstable();
        docs.dedup();
        (total, docs.len(), ub.len() - e)
    }
}
