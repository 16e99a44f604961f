//! The search layer, the crate's top: [`Searcher`] (`searcher.rs`) borrows an index and owns
//! the per-thread scratch (`scratch.rs`); the scan (`scan.rs`) into a bounded top-k
//! (`topk.rs`), a request's parameters and result (`request.rs`), boosts (`boosted.rs`) and the
//! rules that find them (`rules.rs`), explanations (`explain.rs`), and batches handed out a chunk at a time (`chunks.rs`). Declarations and re-exports only.

pub(crate) mod boosted;
pub(crate) mod chunks;
pub(crate) mod explain;
pub(crate) mod request;
pub(crate) mod rules;
pub(crate) mod scan;
pub(crate) mod scratch;
pub(crate) mod searcher;
pub(crate) mod topk;

pub use self::boosted::Boost;
pub use self::chunks::Chunks;
pub use self::explain::Explanation;
pub use self::request::SearchResult;
pub use self::rules::BoostRules;
pub use self::searcher::Searcher;
