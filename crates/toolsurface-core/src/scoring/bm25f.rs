//! BM25F: the saturated weight of every posting under one settings value.

use std::sync::Arc;

use rayon::prelude::*;

use crate::consts::N_FIELDS;
use crate::index::{Index, TF_BIG};
use crate::scoring::Settings;

/// What a search needs of one settings value: the saturated weight of every posting, and
/// each term's largest (an upper bound of its part of any score).
#[derive(Debug)]
pub(crate) struct SatTable {
    /// Per posting: `s / (k1 + s)`.
    pub(crate) sat: Box<[f64]>,
    /// Per term: the largest `sat` of its postings.
    pub(crate) term_max: Box<[f64]>,
}

/// BM25F's length normalisation of each field of a document whose field lengths are `lens`:
/// `(1 - b) + b * (len / avglen)`.
#[inline]
pub(crate) fn length_norms(
    b: &[f64; N_FIELDS],
    lens: &[u32; N_FIELDS],
    avglen: &[f64; N_FIELDS],
) -> [f64; N_FIELDS] {
    let mut d = [0.0; N_FIELDS];
    for f in 0..N_FIELDS {
        d[f] = (1.0 - b[f]) + b[f] * (f64::from(lens[f]) / avglen[f]);
    }
    d
}

/// One posting's BM25F term-frequency factor (see [`tf_factor`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TfFactor {
    /// Per field, its part of the pseudo-frequency: `(w * tf) / norm` (0 where tf is 0).
    pub(crate) parts: [f64; N_FIELDS],
    /// The parts summed in field order: the pseudo-frequency `s`.
    pub(crate) sum: f64,
    /// `s / (k1 + s)`: the saturated weight a search multiplies by `qw * idf`.
    pub(crate) sat: f64,
}

/// The BM25F formula of one posting, written once: the saturation table of searches
/// ([`Index::sat_table`]) and explanations both call it, so their scores cannot drift
/// apart. `tf` is the posting's per-field counts, `norms` its document's
/// [`length_norms`]. The sum runs in field order over the fields having the term, as the
/// pure engine's does, so every bit matches it.
#[inline]
pub(crate) fn tf_factor(
    settings: &Settings,
    tf: &[u32; N_FIELDS],
    norms: &[f64; N_FIELDS],
) -> TfFactor {
    let w = &settings.weights;
    let mut parts = [0.0f64; N_FIELDS];
    let mut s = 0.0;
    for f in 0..N_FIELDS {
        if tf[f] > 0 {
            parts[f] = (w[f] * f64::from(tf[f])) / norms[f];
            s += parts[f];
        }
    }
    TfFactor {
        parts,
        sum: s,
        sat: s / (settings.k1 + s),
    }
}

impl Index {
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
                tf_factor(settings, &tf, &denom[doc as usize]).sat
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
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

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
}
