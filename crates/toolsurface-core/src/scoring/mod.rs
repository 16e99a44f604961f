//! Scoring: the settings, and the BM25F formulas they are used in. Pure: nothing here knows
//! the index; the index keeps the per-settings tables (`index/core.rs`, `index/sat_cache.rs`).

pub(crate) mod bm25f;
pub(crate) mod settings;

pub use self::settings::Settings;
