//! Scoring: the settings and the BM25F saturated weights they give, cached per value.

pub(crate) mod bm25f;
pub(crate) mod cache;
pub(crate) mod settings;

pub use settings::Settings;
