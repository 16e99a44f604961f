//! The core's one error type: what can go wrong building a table, a lexicon or an index,
//! or with the arguments of a search.
//!
//! Each variant's [`Display`](std::fmt::Display) is the message the pure engine gives for
//! the same fault, byte for byte: the binding raises it as the `ValueError` text Python
//! callers (and the Python tests) see, so a message changes only with the pure engine's.

use std::fmt;

use crate::pystr::py_repr;

/// What went wrong in the core. Every public fallible function returns it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A line of the character table (`chars.tsv`) that does not parse.
    CharTable {
        /// Its number, from 1.
        line: usize,
        /// The line as written.
        text: String,
        /// What is wrong with it.
        problem: CharTableProblem,
    },
    /// An entry of a lexicon that cannot be compiled.
    Lexicon {
        /// Its position in the entries given, from 0.
        entry: usize,
        /// Its source phrase as written.
        source: String,
        /// What is wrong with it.
        problem: LexiconProblem,
    },
    /// More lexicon targets (counted over all entries, up to entry `entry`) than a `u32`
    /// numbers.
    LexiconTargets {
        /// The entry at which the count passed the limit.
        entry: usize,
    },
    /// The lexicon's target terms take more than 4 GiB of text.
    LexiconText,
    /// A scoring setting outside its range (the settings are checked before every use).
    Setting {
        /// Which one.
        setting: Setting,
        /// Its value.
        value: f64,
    },
    /// Per-field weights or `b` given as neither five nor six values.
    FieldValues,
    /// A boost's factor that is not finite or is below 1.
    BoostFactor(f64),
    /// Boost rules used with an index other than the one they were made for.
    RulesIndex {
        /// Documents of the rules' index.
        rules: usize,
        /// Documents of the index searched.
        index: usize,
    },
    /// A document id outside the index.
    DocOutOfRange {
        /// The id given.
        doc: i64,
        /// The number of documents.
        len: usize,
    },
    /// An index build given a different number of names and field tuples.
    LengthMismatch {
        /// Names given.
        names: usize,
        /// Field tuples given.
        fields: usize,
    },
    /// A count (documents, postings, terms) past what the index's `u32` ids address.
    Limit {
        /// What is counted, as the message names it ("document count", ...).
        what: &'static str,
        /// The count.
        n: usize,
        /// The largest the index takes.
        limit: u64,
    },
    /// The strings of one table (names, vocabulary) take more than 4 GiB of text.
    TextLimit,
    /// Documents analysed by one analyser assembled into an index with another.
    AnalyserMismatch,
}

/// Which scoring setting an [`Error::Setting`] is about, and so the rule it broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// A field weight: finite and >= 0.
    Weight,
    /// A field's `b`: within [0, 1].
    B,
    /// `k1`: finite and > 0.
    K1,
    /// The expansion weight: finite and >= 0.
    ExpansionWeight,
}

/// What is wrong with a line of the character table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CharTableProblem {
    /// A class letter other than U, L, O, M, N, I.
    UnknownClass(String),
    /// A field that is no hexadecimal number.
    InvalidHex(String),
    /// A hexadecimal number past `u32`.
    HexOutOfRange(String),
    /// A range that starts before the previous one ends, or ends before it starts.
    Overlap,
    /// A fold to a number that is no code point (a surrogate, past U+10FFFF).
    FoldTarget(u32),
    /// A line of neither shape.
    Shape,
}

/// What is wrong with a lexicon entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexiconProblem {
    /// A source written as a shape (`<...>`) that is not a known one.
    UnknownShape(String),
    /// A source tagged with a language (`<xx>`) that is not one of the known ones, with the
    /// known ones as the analysis layer lists them (this layer is below it).
    UnknownLanguage(String, &'static [&'static str]),
    /// A source with no index terms.
    NoSourceTerms,
    /// A target (given as written) with no index terms.
    NoTargetTerms(String),
}

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

impl fmt::Display for CharTableProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CharTableProblem::UnknownClass(class) => write!(f, "unknown class {class:?}"),
            CharTableProblem::InvalidHex(s) => write!(f, "invalid hexadecimal number {s:?}"),
            CharTableProblem::HexOutOfRange(s) => {
                write!(f, "hexadecimal number out of range {s:?}")
            }
            CharTableProblem::Overlap => f.write_str("ranges must ascend without overlap"),
            CharTableProblem::FoldTarget(cp) => write!(f, "fold target {cp:X} is not a code point"),
            CharTableProblem::Shape => {
                f.write_str("expected 'C first last class' or 'F cp folded'")
            }
        }
    }
}

impl fmt::Display for LexiconProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LexiconProblem::UnknownShape(shape) => write!(
                f,
                "unknown shape {shape} (the known one is {})",
                crate::consts::ISSUE_KEY_SHAPE
            ),
            LexiconProblem::UnknownLanguage(tag, known) => write!(
                f,
                "unknown language {tag} (the known ones are {})",
                known.join(" ")
            ),
            LexiconProblem::NoSourceTerms => f.write_str("source has no index terms"),
            LexiconProblem::NoTargetTerms(target) => {
                write!(f, "target {} has no terms", py_repr(target))
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::CharTable {
                line,
                text,
                problem,
            } => write!(f, "chars.tsv line {line}: {problem}: {}", py_repr(text)),
            Error::Lexicon {
                entry,
                source,
                problem,
            } => write!(f, "lexicon entry {entry} ({}): {problem}", py_repr(source)),
            Error::LexiconTargets { entry } => {
                write!(f, "lexicon entry {entry}: more than {} targets", u32::MAX)
            }
            Error::LexiconText => f.write_str("lexicon targets exceed 4 GiB of text"),
            Error::Setting { setting, value } => {
                let v = float_repr(*value);
                match setting {
                    Setting::Weight => write!(f, "field weight {v} must be finite and >= 0"),
                    Setting::B => write!(f, "b {v} must be within [0, 1]"),
                    Setting::K1 => write!(f, "k1 {v} must be finite and > 0"),
                    Setting::ExpansionWeight => {
                        write!(f, "expansion_weight {v} must be finite and >= 0")
                    }
                }
            }
            Error::FieldValues => f.write_str(
                "weights and b take five or six values: name, search_hint, summary, body, \
                 params[, learned]",
            ),
            Error::BoostFactor(factor) => write!(
                f,
                "a boost's factor must be finite and at least 1, got {factor}"
            ),
            Error::RulesIndex { rules, index } => write!(
                f,
                "boost rules made for an index of {rules} documents used with one of {index}"
            ),
            Error::DocOutOfRange { doc, len } => {
                write!(f, "document id {doc} out of range 0..{len}")
            }
            Error::LengthMismatch { names, fields } => {
                write!(f, "{names} names but {fields} field tuples")
            }
            Error::AnalyserMismatch => {
                write!(f, "documents analysed by another analyser than the index's")
            }
            Error::Limit { what, n, limit } => {
                write!(f, "{what} {n} exceeds the index's limit of {limit}")
            }
            Error::TextLimit => f.write_str("strings exceed the index's limit of 4 GiB"),
        }
    }
}

impl std::error::Error for Error {}

/// `n` as a `u32` id or count, or [`Error::Limit`] naming `what`.
pub(crate) fn to_u32(n: usize, what: &'static str) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| Error::Limit {
        what,
        n,
        limit: u64::from(u32::MAX),
    })
}

/// `doc` as an index into `len` documents, or [`Error::DocOutOfRange`] (as the pure engine
/// checks an id).
pub(crate) fn check_doc(doc: i64, len: usize) -> Result<usize, Error> {
    usize::try_from(doc)
        .ok()
        .filter(|&d| d < len)
        .ok_or(Error::DocOutOfRange { doc, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are the pure engine's: a few spelled out in full.
    #[test]
    fn messages_are_the_pure_engines() {
        let e = Error::Setting {
            setting: Setting::K1,
            value: f64::INFINITY,
        };
        assert_eq!(e.to_string(), "k1 inf must be finite and > 0");
        let e = Error::Setting {
            setting: Setting::Weight,
            value: -1.0,
        };
        assert_eq!(e.to_string(), "field weight -1.0 must be finite and >= 0");
        assert_eq!(
            check_doc(5, 5).unwrap_err().to_string(),
            "document id 5 out of range 0..5"
        );
        assert_eq!(
            check_doc(-1, 5).unwrap_err(),
            Error::DocOutOfRange { doc: -1, len: 5 }
        );
        assert_eq!(check_doc(4, 5), Ok(4));
        let e = Error::Lexicon {
            entry: 1,
            source: "it's".into(),
            problem: LexiconProblem::NoTargetTerms("the".into()),
        };
        assert_eq!(
            e.to_string(),
            "lexicon entry 1 (\"it's\"): target 'the' has no terms"
        );
        assert_eq!(
            Error::FieldValues.to_string(),
            "weights and b take five or six values: name, search_hint, summary, body, params[, learned]"
        );
        assert_eq!(
            Error::BoostFactor(0.5).to_string(),
            "a boost's factor must be finite and at least 1, got 0.5"
        );
        assert_eq!(
            to_u32(usize::MAX, "document count")
                .unwrap_err()
                .to_string(),
            format!(
                "document count {} exceeds the index's limit of {}",
                usize::MAX,
                u32::MAX
            )
        );
    }
}
