//! Scoring settings: BM25F field weights, `b`, `k1` and the expansion weight.

use crate::consts::N_FIELDS;

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

pub(crate) type ScoringKey = [u64; 2 * N_FIELDS + 1];

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

    pub(crate) fn key(&self) -> ScoringKey {
        let mut key = [0u64; 2 * N_FIELDS + 1];
        for f in 0..N_FIELDS {
            key[f] = self.weights[f].to_bits();
            key[N_FIELDS + f] = self.b[f].to_bits();
        }
        key[2 * N_FIELDS] = self.k1.to_bits();
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn settings_are_validated_and_cached() {
        let idx = catalogue();
        let bad = [
            Settings::new(
                [f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0],
                [0.5; N_FIELDS],
                1.2,
                0.5,
            ),
            Settings::new([-1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5; N_FIELDS], 1.2, 0.5),
            Settings::new([1.0; N_FIELDS], [1.5, 0.5, 0.5, 0.5, 0.5, 0.5], 1.2, 0.5),
            Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 0.0, 0.5),
            Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], f64::INFINITY, 0.5),
            Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, f64::NAN),
            Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, -0.1),
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
            let s = Settings::new([1.0 + i as f64; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
            idx.search("pull", 3, &s, None, None).unwrap();
        }
        assert_eq!(idx.cached_settings(), SETTINGS_CACHE);
        // Zero weights: nothing scores above zero, so the fallback runs and finds nothing.
        let zero = Settings::new([0.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
        let r = idx.search("pull", 3, &zero, None, None).unwrap();
        assert!(r.fallback && r.docs.is_empty());
        assert!(idx.explain("pull", 99, &settings(), None, false).is_err());
        let ex = idx.explain("pull", 0, &zero, None, false).unwrap();
        assert_eq!(ex[0].2, [0.0; N_FIELDS]);
    }
}
