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

impl Index {
    /// The saturated weight of every posting under `settings` (cached).
    pub(crate) fn sat_table(&self, settings: &Settings) -> Arc<SatTable> {
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
