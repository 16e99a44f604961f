//! Columnar BM25F index over five fields, its search, fallback and explain.
//!
//! Mirrors `PureIndex` of `python/toolsurface/retrieval/pure.py` expression for expression:
//! f64 everywhere, the same evaluation order, accumulation in query-term order, and ties
//! broken the same way (score descending, name ascending, then first-touch order).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::{Analyzer, Memo, TokenBuf, TokenScratch};
use crate::lexicon::Lexicon;

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
#[derive(Debug, Default)]
struct SatCache {
    // Most recently used last.
    entries: Mutex<Vec<(ScoringKey, Arc<[f64]>)>>,
}

impl SatCache {
    fn get(&self, key: &ScoringKey) -> Option<Arc<[f64]>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let pos = entries.iter().position(|(k, _)| k == key)?;
        let entry = entries.remove(pos);
        let table = Arc::clone(&entry.1);
        entries.push(entry);
        Some(table)
    }

    fn insert(&self, key: ScoringKey, table: Arc<[f64]>) -> Arc<[f64]> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
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
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
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
    pos: u32,
}

/// Per-thread buffers of the query path.
#[derive(Debug, Default)]
struct Scratch {
    tok: TokenScratch,
    toks: TokenBuf,
    terms: TermList,
    accum: Accum,
    fuzzy: FuzzyScratch,
}

/// Score accumulator: a slot per document, valid when its stamp is the current generation.
#[derive(Debug, Default)]
struct Accum {
    acc: Vec<f64>,
    stamp: Vec<u32>,
    gen: u32,
    touched: Vec<u32>,
    hits: Vec<Hit>,
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

struct DocTerms {
    lens: [u32; N_FIELDS],
    terms: Vec<(String, [u32; N_FIELDS])>,
}

/// The columnar index.
pub struct Index {
    analyzer: Arc<Analyzer>,
    names: Vec<String>,
    vocab: FxHashMap<Box<str>, u32>,
    terms: Vec<Box<str>>,
    /// Postings of term `t` are `term_start[t]..term_start[t + 1]`.
    term_start: Vec<usize>,
    post_doc: Vec<u32>,
    post_tf: Vec<[u32; N_FIELDS]>,
    doc_len: Vec<[u32; N_FIELDS]>,
    avglen: [f64; N_FIELDS],
    idf: Vec<f64>,
    /// Trigram -> range of `tri_terms` (vocabulary ids, ascending).
    tri_map: FxHashMap<u64, (u32, u32)>,
    tri_terms: Vec<u32>,
    /// Distinct trigrams of each term (0 for terms too short for the fallback).
    tri_count: Vec<u32>,
    cache: SatCache,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("docs", &self.names.len())
            .field("vocabulary", &self.terms.len())
            .field("postings", &self.post_doc.len())
            .finish_non_exhaustive()
    }
}

fn to_u32(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("{what} {n} exceeds the index's limit of {}", u32::MAX))
}

fn analyse_doc(
    analyzer: &Analyzer,
    fields: &[String; N_FIELDS],
    scratch: &mut TokenScratch,
    memo: &mut Memo,
    counts: &mut FxHashMap<String, [u32; N_FIELDS]>,
) -> Result<DocTerms, String> {
    counts.clear();
    let mut lens = [0usize; N_FIELDS];
    for (f, text) in fields.iter().enumerate() {
        let mut n = 0usize;
        analyzer.for_each_token_memo(text, scratch, memo, |t| {
            n += 1;
            match counts.get_mut(t) {
                Some(c) => c[f] = c[f].saturating_add(1),
                None => {
                    let mut c = [0u32; N_FIELDS];
                    c[f] = 1;
                    counts.insert(t.to_string(), c);
                }
            }
        });
        lens[f] = n;
    }
    let mut out_lens = [0u32; N_FIELDS];
    for f in 0..N_FIELDS {
        out_lens[f] = to_u32(lens[f], "field token count")?;
    }
    Ok(DocTerms {
        lens: out_lens,
        terms: counts.drain().collect(),
    })
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
        let threads = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(threads * 4).max(16);
        let an: &Analyzer = &analyzer;
        let per_chunk: Vec<Result<Vec<DocTerms>, String>> = fields
            .par_chunks(chunk)
            .map(|docs| {
                let mut scratch = TokenScratch::default();
                let mut memo = Memo::new();
                let mut counts = FxHashMap::default();
                docs.iter()
                    .map(|f| analyse_doc(an, f, &mut scratch, &mut memo, &mut counts))
                    .collect()
            })
            .collect();
        drop(fields);

        // Intern terms in document order and count document frequencies.
        let mut vocab: FxHashMap<Box<str>, u32> = FxHashMap::default();
        let mut terms: Vec<Box<str>> = Vec::new();
        let mut df: Vec<usize> = Vec::new();
        let mut doc_len: Vec<[u32; N_FIELDS]> = Vec::with_capacity(n);
        let mut doc_terms: Vec<Vec<(u32, [u32; N_FIELDS])>> = Vec::with_capacity(n);
        let mut totals = [0u64; N_FIELDS];
        for chunk in per_chunk {
            for doc in chunk? {
                let mut ids = Vec::with_capacity(doc.terms.len());
                for (term, tf) in doc.terms {
                    let id = match vocab.get(term.as_str()) {
                        Some(&id) => id,
                        None => {
                            let id = to_u32(terms.len(), "vocabulary size")?;
                            let boxed = term.into_boxed_str();
                            terms.push(boxed.clone());
                            vocab.insert(boxed, id);
                            df.push(0);
                            id
                        }
                    };
                    df[id as usize] += 1;
                    ids.push((id, tf));
                }
                for (total, &len) in totals.iter_mut().zip(&doc.lens) {
                    *total += u64::from(len);
                }
                doc_len.push(doc.lens);
                doc_terms.push(ids);
            }
        }

        // Postings: offsets per term, doc ids ascending, per-field counts.
        let mut term_start = Vec::with_capacity(terms.len() + 1);
        let mut total = 0usize;
        for &d in &df {
            term_start.push(total);
            total += d;
        }
        term_start.push(total);
        let mut cursor: Vec<usize> = term_start[..terms.len()].to_vec();
        let mut post_doc = vec![0u32; total];
        let mut post_tf = vec![[0u32; N_FIELDS]; total];
        for (d, ids) in doc_terms.into_iter().enumerate() {
            for (id, tf) in ids {
                let p = cursor[id as usize];
                cursor[id as usize] += 1;
                post_doc[p] = d as u32;
                post_tf[p] = tf;
            }
        }

        let nf = n as f64;
        let mut avglen = [0.0f64; N_FIELDS];
        for f in 0..N_FIELDS {
            avglen[f] = if n > 0 { totals[f] as f64 / nf } else { 0.0 };
        }
        let idf: Vec<f64> = df
            .iter()
            .map(|&d| {
                let dff = d as f64;
                (1.0 + ((nf - dff) + 0.5) / (dff + 0.5)).ln()
            })
            .collect();

        // Trigram index over the vocabulary.
        let mut tri_count = vec![0u32; terms.len()];
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        let mut grams = Vec::new();
        for (id, term) in terms.iter().enumerate() {
            if term.chars().count() >= FUZZY_MIN_CHARS {
                trigrams_into(term, &mut grams);
                tri_count[id] = grams.len() as u32;
                pairs.extend(grams.iter().map(|&g| (g, id as u32)));
            }
        }
        pairs.sort_unstable();
        let mut tri_map: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
        let tri_terms: Vec<u32> = pairs.iter().map(|&(_, id)| id).collect();
        to_u32(tri_terms.len(), "trigram postings")?;
        let mut i = 0;
        while i < pairs.len() {
            let g = pairs[i].0;
            let start = i;
            while i < pairs.len() && pairs[i].0 == g {
                i += 1;
            }
            tri_map.insert(g, (start as u32, i as u32));
        }

        Ok(Index {
            analyzer,
            names,
            vocab,
            terms,
            term_start,
            post_doc,
            post_tf,
            doc_len,
            avglen,
            idf,
            tri_map,
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
        self.names.is_empty()
    }

    /// Number of distinct terms.
    pub fn vocabulary_size(&self) -> usize {
        self.terms.len()
    }

    /// Number of postings (term, document) pairs.
    pub fn postings_len(&self) -> usize {
        self.post_doc.len()
    }

    /// The analyzer the index was built with (and analyses queries with).
    pub fn analyzer(&self) -> &Arc<Analyzer> {
        &self.analyzer
    }

    /// Document names, by id.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Average field lengths (tokens).
    pub fn avglen(&self) -> [f64; N_FIELDS] {
        self.avglen
    }

    /// idf of a term, if it is in the vocabulary.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.vocab.get(term).map(|&id| self.idf[id as usize])
    }

    /// Number of cached saturated-weight tables.
    pub fn cached_settings(&self) -> usize {
        self.cache.len()
    }

    /// Heap bytes of the index structures (vocabulary strings and map, postings, lengths,
    /// idf, trigram index, names); the settings cache is not counted.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let map_slot = |k: usize, v: usize| k + v + 1;
        let strings: usize = self.terms.iter().map(|t| t.len()).sum();
        let names: usize = self.names.iter().map(String::capacity).sum::<usize>()
            + self.names.capacity() * size_of::<String>();
        let vocab = self.vocab.capacity() * map_slot(size_of::<Box<str>>(), 4) + strings;
        let terms = self.terms.capacity() * size_of::<Box<str>>() + strings;
        let postings = self.term_start.capacity() * size_of::<usize>()
            + self.post_doc.capacity() * 4
            + self.post_tf.capacity() * size_of::<[u32; N_FIELDS]>();
        let docs = self.doc_len.capacity() * size_of::<[u32; N_FIELDS]>();
        let idf = self.idf.capacity() * 8;
        let tri = self.tri_map.capacity() * map_slot(8, 8)
            + self.tri_terms.capacity() * 4
            + self.tri_count.capacity() * 4;
        names + vocab + terms + postings + docs + idf + tri
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

    fn main_terms(
        &self,
        toks: &[String],
        lexicon: Option<&Lexicon>,
        expansion_weight: f64,
        out: &mut TermList,
    ) {
        out.clear();
        for t in toks {
            if let Some(&id) = self.vocab.get(t.as_str()) {
                out.add(id, 1.0);
            }
        }
        if let Some(lex) = lexicon {
            if expansion_weight > 0.0 {
                lex.expand(toks, |t| {
                    if let Some(&id) = self.vocab.get(t) {
                        out.add(id, expansion_weight);
                    }
                });
            }
        }
    }

    /// Fallback terms: for each distinct query token of >= 3 chars, the best 3 vocabulary
    /// terms by trigram Dice similarity (>= 0.5), weighted by that similarity.
    fn fuzzy_terms(&self, toks: &[String], fz: &mut FuzzyScratch, out: &mut TermList) {
        out.clear();
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        let vocab_n = self.terms.len();
        for tok in toks {
            if !seen.insert(tok.as_str()) || tok.chars().count() < FUZZY_MIN_CHARS {
                continue;
            }
            trigrams_into(tok, &mut fz.grams);
            next_generation(&mut fz.stamp, &mut fz.gen, vocab_n);
            if fz.count.len() < vocab_n {
                fz.count.resize(vocab_n, 0);
            }
            fz.touched.clear();
            for g in &fz.grams {
                if let Some(&(a, b)) = self.tri_map.get(g) {
                    for &id in &self.tri_terms[a as usize..b as usize] {
                        let i = id as usize;
                        if fz.stamp[i] != fz.gen {
                            fz.stamp[i] = fz.gen;
                            fz.count[i] = 0;
                            fz.touched.push(id);
                        }
                        fz.count[i] += 1;
                    }
                }
            }
            let nq = fz.grams.len();
            let mut best: Vec<(f64, u32)> = Vec::with_capacity(FUZZY_PER_TOKEN + 1);
            for &id in &fz.touched {
                let i = id as usize;
                let dice =
                    (2.0 * f64::from(fz.count[i])) / ((nq + self.tri_count[i] as usize) as f64);
                if dice >= FUZZY_MIN_SIMILARITY {
                    let better = |x: &(f64, u32)| {
                        dice > x.0 || (dice == x.0 && *self.terms[i] < *self.terms[x.1 as usize])
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
            .with_min_len(8192)
            .map(|(&doc, tf)| {
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

    /// Add each term's weighted postings into the scratch accumulator and collect the hits
    /// (score > 0, admitted by `allowed`) in first-touch order.
    fn score(&self, terms: &TermList, sat: &[f64], allowed: Option<&Filter>, accum: &mut Accum) {
        let Accum {
            acc,
            stamp,
            gen,
            touched,
            hits,
            ..
        } = accum;
        let n = self.names.len();
        next_generation(stamp, gen, n);
        if acc.len() < n {
            acc.resize(n, 0.0);
        }
        touched.clear();
        hits.clear();
        for &(id, weight) in &terms.items {
            let t = id as usize;
            let q = weight * self.idf[t];
            let range = self.term_start[t]..self.term_start[t + 1];
            for (&doc, &s) in self.post_doc[range.clone()].iter().zip(&sat[range]) {
                let d = doc as usize;
                if stamp[d] != *gen {
                    stamp[d] = *gen;
                    acc[d] = 0.0;
                    touched.push(doc);
                }
                acc[d] += q * s;
            }
        }
        for &doc in touched.iter() {
            let s = acc[doc as usize];
            let admitted = match allowed {
                None => true,
                Some(f) => f.contains(doc as usize),
            };
            if s > 0.0 && admitted {
                let pos = hits.len() as u32;
                hits.push(Hit { score: s, doc, pos });
            }
        }
    }

    fn hit_order(&self, a: &Hit, b: &Hit) -> Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| {
                self.names[a.doc as usize]
                    .as_bytes()
                    .cmp(self.names[b.doc as usize].as_bytes())
            })
            .then(a.pos.cmp(&b.pos))
    }

    fn search_in(&self, query: &str, req: &Request<'_>, sc: &mut Scratch) -> SearchResult {
        let Scratch {
            tok,
            toks,
            terms,
            accum,
            fuzzy,
        } = sc;
        toks.clear();
        self.analyzer.tokens_buf(query, tok, toks);
        self.main_terms(toks.as_slice(), req.lexicon, req.expansion_weight, terms);
        self.score(terms, req.sat, req.allowed, accum);
        let fallback = accum.hits.is_empty();
        if fallback {
            self.fuzzy_terms(toks.as_slice(), fuzzy, terms);
            self.score(terms, req.sat, req.allowed, accum);
        }
        let k = req.k.min(accum.hits.len());
        if k == 0 {
            return SearchResult {
                docs: Vec::new(),
                scores: Vec::new(),
                fallback,
            };
        }
        let Accum { hits, top, .. } = accum;
        let best: &[Hit] = if k.saturating_mul(8) <= hits.len() {
            // Few wanted of many: one pass keeping the best k in order.
            top.clear();
            for h in hits.iter() {
                if top.len() == k {
                    match top.last() {
                        Some(worst) if self.hit_order(h, worst) == Ordering::Less => {
                            top.pop();
                        }
                        _ => continue,
                    }
                }
                let at = top.partition_point(|x| self.hit_order(x, h) == Ordering::Less);
                top.insert(at, *h);
            }
            top
        } else {
            if k < hits.len() {
                hits.select_nth_unstable_by(k - 1, |a, b| self.hit_order(a, b));
                hits.truncate(k);
            }
            hits.sort_unstable_by(|a, b| self.hit_order(a, b));
            hits
        };
        SearchResult {
            docs: best.iter().map(|h| h.doc).collect(),
            scores: best.iter().map(|h| h.score).collect(),
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
            self.fuzzy_terms(&toks, &mut FuzzyScratch::default(), &mut terms);
        } else {
            self.main_terms(&toks, lexicon, settings.expansion_weight, &mut terms);
        }
        let (w, b, k1) = (&settings.weights, &settings.b, settings.k1);
        let lens = &self.doc_len[doc];
        let mut out = Vec::new();
        for &(id, weight) in &terms.items {
            let t = id as usize;
            let range = self.term_start[t]..self.term_start[t + 1];
            let Ok(i) = self.post_doc[range.clone()].binary_search(&(doc as u32)) else {
                continue;
            };
            let tf = &self.post_tf[range.start + i];
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
            out.push((self.terms[t].to_string(), weight, shares));
        }
        Ok(out)
    }
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
            let Some(&id) = idx.vocab.get(t.as_str()) else {
                continue;
            };
            let id = id as usize;
            for p in idx.term_start[id]..idx.term_start[id + 1] {
                if idx.post_doc[p] as usize != doc {
                    continue;
                }
                let tf = idx.post_tf[p];
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
        assert_eq!(
            idx.names()[r.docs[0] as usize],
            "github__list_pull_requests"
        );
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
        assert_eq!(idx.names()[r.docs[0] as usize], "calendar__create_event");
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
        let names: Vec<&str> = r
            .docs
            .iter()
            .map(|&d| idx.names()[d as usize].as_str())
            .collect();
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
