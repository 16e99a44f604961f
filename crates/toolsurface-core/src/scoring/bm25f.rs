//! BM25F, written once: the length normalisation and the term-frequency factor of one
//! posting, and the shape of a settings value's table of saturated weights. Pure formulas:
//! the index computes its tables with them (`index/core.rs`), explanations their parts.

use crate::consts::N_FIELDS;
use crate::scoring::settings::Settings;

/// What a search needs of one settings value: the saturated weight of every posting, and
/// each term's largest (an upper bound of its part of any score).
#[derive(Debug)]
pub(crate) struct SatTable {
    /// Per posting: `s / (k1 + s)`, in four bytes ([`TfFactor::sat`] is exactly such a
    /// value): half the memory of a table of doubles, and half the bytes a scan reads.
    pub(crate) sat: Box<[f32]>,
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
    /// `s / (k1 + s)` rounded to the nearest single-precision value: the saturated weight
    /// a search multiplies by `qw * idf`. Rounded here, where the table and the
    /// explanations both take it, and the same way in the pure engine (`saturated`), so
    /// the engines' scores still agree to the bit.
    pub(crate) sat: f64,
}

/// The BM25F formula of one posting, written once: the saturation table of searches
/// (`Index::sat_table`) and explanations both call it, so their scores cannot drift
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
        sat: to_single(s / (settings.k1 + s)),
    }
}

/// `x` rounded to the nearest single-precision value (ties to even), as a double.
#[inline]
pub(crate) fn to_single(x: f64) -> f64 {
    // A saturated weight is in [0, 1): the cast neither overflows nor loses its sign.
    f64::from(x as f32)
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    #[test]
    fn scores_match_the_formula_and_rank() {
        let idx = catalogue();
        let s = settings();
        let r = Searcher::new(&idx)
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
            let ex = Searcher::new(&idx)
                .explain("list pull requests", *d as i64, &s, None, false)
                .unwrap();
            let total: f64 = ex.iter().flat_map(|e| e.2.iter()).sum();
            assert!((total - sc).abs() <= 1e-12 * sc.abs(), "{total} vs {sc}");
        }
    }
}
