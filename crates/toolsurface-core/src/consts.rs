//! The crate's public constants: the fields, the settings cache, the fallback and the payload.

/// Number of indexed fields: name, search_hint, summary, body, params, and learned (the
/// requests a host taught the tool, docs/analysis.md section 9; empty unless it did).
pub const N_FIELDS: usize = 6;
/// Field names, in index order.
pub const FIELD_NAMES: [&str; N_FIELDS] = [
    "name",
    "search_hint",
    "summary",
    "body",
    "params",
    "learned",
];
/// Saturated-weight tables kept (one per scoring settings value, least recently used out).
pub const SETTINGS_CACHE: usize = 8;
/// Query tokens and vocabulary terms shorter than this never take part in the fallback.
pub const FUZZY_MIN_CHARS: usize = 3;
/// Dice similarity of trigram sets a fuzzy match needs.
pub const FUZZY_MIN_SIMILARITY: f64 = 0.5;
/// Vocabulary terms a query token may bring in through the fallback.
pub const FUZZY_PER_TOKEN: usize = 3;
/// Aliases of one group under one first term that are compared with each other for those
/// that can decide no mention (`query/aliases.rs`): a declared group has at most 17 names.
/// Past it only repeats are left out, so that a table's build stays linear.
pub const ALIASES_PRUNED_UP_TO: usize = 32;
/// Query weight of a token of the request's payload (quoted text, the text after a colon:
/// what the action is given rather than the action; see [`Analyzer::payload_spans`](crate::Analyzer::payload_spans)) and
/// of a number ([`Analyzer::is_number`](crate::Analyzer::is_number)).
pub const PAYLOAD_WEIGHT: f64 = 0.5;
/// The one shape a lexicon source can name (docs/analysis.md §4): a query identifier that
/// is an issue key ([`Analyzer::is_issue_key`](crate::Analyzer::is_issue_key)) expands to
/// this entry's targets.
pub const ISSUE_KEY_SHAPE: &str = "<issue-key>";
