//! A query's path to its terms: tokenising (through a per-thread memo), the context before
//! its ask, the weighted term list with lexicon expansions, and the fallback's fuzzy terms.

pub(crate) mod ask;
pub(crate) mod fuzzy;
pub(crate) mod memo;
pub(crate) mod targets;
pub(crate) mod terms;
pub(crate) mod tokens;
