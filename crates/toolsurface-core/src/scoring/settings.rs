//! Scoring settings: BM25F field weights, `b`, `k1` and the expansion weight.

use crate::consts::N_FIELDS;
use crate::error::{Error, Setting};

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

/// Five values (the learned field's then 0) or six, as one per field.
fn per_field(values: &[f64]) -> Result<[f64; N_FIELDS], Error> {
    match values.len() {
        5 | N_FIELDS => Ok(std::array::from_fn(|f| {
            values.get(f).copied().unwrap_or(0.0)
        })),
        _ => Err(Error::FieldValues),
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

    /// Settings from per-field values as a caller passes them: five (a caller that predates
    /// the learned field: its weight and `b` are then 0, so it scores nothing) or six each;
    /// any other count is [`Error::FieldValues`]. Not yet validated.
    pub fn from_fields(
        weights: &[f64],
        b: &[f64],
        k1: f64,
        expansion_weight: f64,
    ) -> Result<Self, Error> {
        Ok(Settings::new(
            per_field(weights)?,
            per_field(b)?,
            k1,
            expansion_weight,
        ))
    }

    /// An error for settings no score can be computed with (messages as the pure engine's),
    /// naming the first bad value in the order weights, b, k1, expansion weight.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |setting, value| Err(Error::Setting { setting, value });
        for &w in &self.weights {
            if !(w.is_finite() && w >= 0.0) {
                return bad(Setting::Weight, w);
            }
        }
        for &x in &self.b {
            if !(x.is_finite() && (0.0..=1.0).contains(&x)) {
                return bad(Setting::B, x);
            }
        }
        if !(self.k1.is_finite() && self.k1 > 0.0) {
            return bad(Setting::K1, self.k1);
        }
        if !(self.expansion_weight.is_finite() && self.expansion_weight >= 0.0) {
            return bad(Setting::ExpansionWeight, self.expansion_weight);
        }
        Ok(())
    }

    /// The bits the saturated weights depend on (weights, b, k1; not the expansion weight),
    /// the key of the index's cache of them.
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
            assert!(Searcher::new(&idx)
                .search("pull", 3, &s, None, None)
                .is_err());
            assert!(Searcher::new(&idx)
                .search_many(&["pull".into()], 3, &s, None, None)
                .is_err());
            assert!(Searcher::new(&idx)
                .explain("pull", 0, &s, None, false)
                .is_err());
        }
        assert_eq!(idx.cached_settings(), 0);
        for i in 0..12 {
            let s = Settings::new([1.0 + i as f64; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
            Searcher::new(&idx)
                .search("pull", 3, &s, None, None)
                .unwrap();
        }
        assert_eq!(idx.cached_settings(), SETTINGS_CACHE);
        // Zero weights: nothing scores above zero, so the fallback runs and finds nothing.
        let zero = Settings::new([0.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
        let r = Searcher::new(&idx)
            .search("pull", 3, &zero, None, None)
            .unwrap();
        assert!(r.fallback && r.docs.is_empty());
        assert!(Searcher::new(&idx)
            .explain("pull", 99, &settings(), None, false)
            .is_err());
        let ex = Searcher::new(&idx)
            .explain("pull", 0, &zero, None, false)
            .unwrap();
        assert_eq!(ex[0].2, [0.0; N_FIELDS]);
    }
}
