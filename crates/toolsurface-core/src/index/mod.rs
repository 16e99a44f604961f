//! The columnar BM25F index over six fields: its arrays and their accessors. Building it
//! is in `build.rs` (the chunks' analysis in `chunk.rs`, behind `hot_memo.rs`), the
//! trigram index in `trigram.rs`; searching it, explaining a hit and its scoring live in
//! the crate's `search`, `explain` and `scoring` modules, as further `impl Index` blocks.
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

mod build;
mod chunk;
mod hot_memo;
pub(crate) mod trigram;

use std::sync::Arc;

pub use crate::consts::{
    FIELD_NAMES, FUZZY_MIN_CHARS, FUZZY_MIN_SIMILARITY, FUZZY_PER_TOKEN, N_FIELDS, PAYLOAD_WEIGHT,
    SETTINGS_CACHE,
};
pub use crate::explain::Explanation;
pub use crate::scoring::Settings;
pub use crate::search::{Filter, SearchResult};

use crate::analysis::Analyzer;
use crate::scoring::cache::SatCache;
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

fn to_u32(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("{what} {n} exceeds the index's limit of {}", u32::MAX))
}

impl Index {
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

    /// Validate a document id (as the pure engine does).
    pub fn check_doc(&self, doc: i64) -> Result<usize, String> {
        let n = self.names.len();
        usize::try_from(doc)
            .ok()
            .filter(|&d| d < n)
            .ok_or_else(|| format!("document id {doc} out of range 0..{n}"))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

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
}
