//! The index layer: the columnar BM25F index (`core.rs`) with its cache of saturated-weight
//! tables (`sat_cache.rs`), its build (`build.rs`, the chunks' analysis in `chunk.rs` behind
//! `hot_memo.rs`), its learned field replaced from its own postings (`relearn.rs`), the
//! vocabulary's trigram index (`trigram.rs`), and the document sets a search may be limited
//! to (`filter.rs`). Declarations and re-exports only.

pub(crate) mod build;
pub(crate) mod chunk;
pub(crate) mod core;
pub(crate) mod filter;
pub(crate) mod hot_memo;
pub(crate) mod relearn;
pub(crate) mod sat_cache;
pub(crate) mod trigram;

pub use self::chunk::AnalysedDocs;
pub use self::core::Index;
pub use self::filter::Filter;
