//! The columnar BM25F index over six fields: its arrays, their accessors, and its tables of
//! saturated weights (one per settings value, cached in `sat_cache.rs`, computed here with
//! the formulas of `scoring/bm25f.rs`). Building it is in `build.rs` (the chunks' analysis
//! in `chunk.rs`, behind `hot_memo.rs`), the trigram index in `trigram.rs`; searching it is
//! the `search` layer's (`search::Searcher` borrows an index).
//!
//! Mirrors `PureIndex` of `python/toolsurface/retrieval/pure.py` expression for expression:
//! f64 everywhere, the same evaluation order, accumulation in query-term order, and ties
//! broken the same way (score descending, name ascending, then first-touch order).
//!
//! Layout, for the scan and for size:
//!
//! - the vocabulary and the names are strings in one arena each (`StrTable`, `Arena`);
//! - the postings of term `t` are `term_start[t]..term_start[t + 1]` of `post_doc` (u32
//!   document ids, ascending) and `post_tf` (one byte a field; `TF_BIG` sends the rare
//!   posting with a count of 255 or more to `tf_big`, which holds its exact counts);
//! - a search reads only `post_doc` and the settings' table of saturated weights (one f64 a
//!   posting, and each term's largest, cached per settings value), block by block of
//!   documents into one block's accumulator slots, offering the block's documents to a
//!   bounded top-k (see `search/scan.rs`);
//! - a build analyses runs of documents in parallel (each distinct identifier once per run,
//!   each distinct word stemmed once per build), merges the runs' vocabularies, and lays
//!   out postings and the trigram index in parallel.

use std::sync::Arc;

use rayon::prelude::*;

use crate::analysis::analyzer::Analyzer;
use crate::consts::N_FIELDS;
use crate::error::{check_doc, Error};
use crate::index::sat_cache::SatCache;
use crate::scoring::bm25f::{length_norms, tf_factor, SatTable};
use crate::scoring::settings::Settings;
use crate::strtab::{str_hash, Arena, StrTable};

/// A field count of a posting that does not fit a byte: the exact counts are in `tf_big`.
pub(crate) const TF_BIG: u8 = u8::MAX;

/// The columnar index.
pub struct Index {
    /// Unique per index in the process: tags the query memo's vocabulary lookups.
    pub(crate) uid: u64,
    pub(crate) analyzer: Arc<Analyzer>,
    pub(crate) names: Arena,
    /// Whether the names ascend strictly (byte order) with the ids, as a registry builds
    /// them: then ids order ties as names do, without reading a name.
    pub(crate) name_ordered: bool,
    pub(crate) vocab: StrTable,
    /// Postings of term `t` are `term_start[t]..term_start[t + 1]`.
    pub(crate) term_start: Vec<u32>,
    pub(crate) post_doc: Vec<u32>,
    pub(crate) post_tf: Vec<[u8; N_FIELDS]>,
    /// (posting, exact counts) of the postings with a [`TF_BIG`] byte, by posting.
    pub(crate) tf_big: Vec<(u32, [u32; N_FIELDS])>,
    pub(crate) doc_len: Vec<[u32; N_FIELDS]>,
    pub(crate) avglen: [f64; N_FIELDS],
    pub(crate) idf: Vec<f64>,
    /// Bit `t` is set when term `t` occurs in a tool's own texts (a field before the learned
    /// one): a word only the learned field holds does not make the lexicon's expansion of it
    /// weak, since the tools' texts do not reach it (see `query::terms`).
    pub(crate) own_text: Vec<u64>,
    /// Distinct trigrams, ascending; the terms having `tri_keys[i]` are
    /// `tri_terms[tri_start[i]..tri_start[i + 1]]` (vocabulary ids, ascending).
    pub(crate) tri_keys: Vec<u64>,
    pub(crate) tri_start: Vec<u32>,
    pub(crate) tri_terms: Vec<u32>,
    /// Distinct trigrams of each term (0 for terms too short for the fallback).
    pub(crate) tri_count: Vec<u32>,
    pub(crate) cache: SatCache,
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

impl Index {
    /// Whether term `t` occurs in a tool's own texts, not only in the learned field.
    #[inline]
    pub(crate) fn in_own_text(&self, t: u32) -> bool {
        self.own_text
            .get(t as usize / 64)
            .is_some_and(|word| word >> (t % 64) & 1 == 1)
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
        let idf = self.idf.capacity() * 8 + self.own_text.capacity() * 8;
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

    /// Validate a document id (as the pure engine does).
    pub fn check_doc(&self, doc: i64) -> Result<usize, Error> {
        check_doc(doc, self.names.len())
    }

    #[inline]
    pub(crate) fn postings(&self, term: usize) -> std::ops::Range<usize> {
        self.term_start[term] as usize..self.term_start[term + 1] as usize
    }

    /// Exact per-field counts of posting `p`.
    #[inline]
    pub(crate) fn tf(&self, p: usize) -> [u32; N_FIELDS] {
        let tf = self.post_tf[p];
        if tf.contains(&TF_BIG) {
            if let Ok(i) = self.tf_big.binary_search_by_key(&(p as u32), |&(q, _)| q) {
                return self.tf_big[i].1;
            }
        }
        tf.map(u32::from)
    }

    /// Make (and cache) what searches under `settings` read, so that the first of them does
    /// not: a binding calls it with the interpreter let go, since the table is made on the
    /// rayon pool, which may be busy with another caller's batch. Invalid settings are an
    /// error.
    pub fn prepare(&self, settings: &Settings) -> Result<(), Error> {
        settings.validate()?;
        self.sat_table(settings);
        Ok(())
    }

    /// The saturated weight of every posting under `settings` (cached).
    pub(crate) fn sat_table(&self, settings: &Settings) -> Arc<SatTable> {
        let key = settings.key();
        if let Some(t) = self.cache.get(&key) {
            return t;
        }
        let denom: Vec<[f64; N_FIELDS]> = self
            .doc_len
            .iter()
            .map(|lens| length_norms(&settings.b, lens, &self.avglen))
            .collect();
        let sat: Box<[f32]> = self
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
                // Exact: the factor's weight is already a single-precision value.
                tf_factor(settings, &tf, &denom[doc as usize]).sat as f32
            })
            .collect::<Vec<f32>>()
            .into();
        let term_max: Box<[f64]> = (0..self.vocab.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|t| {
                sat[self.postings(t)]
                    .iter()
                    .fold(0.0f64, |m, &x| m.max(f64::from(x)))
            })
            .collect::<Vec<f64>>()
            .into();
        self.cache.insert(key, Arc::new(SatTable { sat, term_max }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn empty_and_mismatched_catalogues() {
        let idx = Index::build(analyzer(), vec![], vec![]).unwrap();
        assert!(idx.is_empty());
        let r = Searcher::new(&idx)
            .search("anything", 5, &settings(), None, None)
            .unwrap();
        assert!(r.fallback && r.docs.is_empty());
        assert!(Index::build(analyzer(), vec!["a".into()], vec![]).is_err());
        assert!(idx.memory_bytes() < 1 << 20);
        let idx = catalogue();
        assert!(idx.memory_bytes() > 0);
        assert!(idx.vocabulary_size() > 10);
    }

    #[test]
    fn prepared_settings_are_cached_and_searched_as_before() {
        let idx = catalogue();
        let s = settings();
        let want = Searcher::new(&idx).search("list issues", 3, &s, None, None);
        let idx = catalogue();
        let cached = idx.cached_settings();
        idx.prepare(&s).unwrap();
        assert_eq!(idx.cached_settings(), cached + 1);
        idx.prepare(&s).unwrap(); // made once
        assert_eq!(idx.cached_settings(), cached + 1);
        let got = Searcher::new(&idx).search("list issues", 3, &s, None, None);
        assert_eq!(got.unwrap(), want.unwrap());
        let mut bad = s;
        bad.k1 = f64::NAN;
        assert!(idx.prepare(&bad).is_err());
        assert_eq!(idx.cached_settings(), cached + 1);
    }
}
