//! The context before a request's ask and the subject of its search (docs/analysis.md §4):
//! the identifiers before the first ask marker ([`ASK_MARKERS`]) that is not the request's
//! first word, and those from the first subject marker ([`SUBJECT_MARKERS`]) past both,
//! weigh as the payload's: they tell what the user is about, or what the items sought are
//! about, not what they ask for.

use std::sync::OnceLock;

use crate::analysis::analyzer::Analyzer;
use crate::analysis::idents::{ASK_MARKERS, SUBJECT_MARKERS};

/// The markers as word-code sequences, and their distinct words (a word's code is its
/// position in the list plus one; 0 is no marker word).
struct Markers {
    words: Vec<&'static str>,
    phrases: Vec<Vec<u8>>,
}

fn markers() -> &'static Markers {
    static MARKERS: OnceLock<Markers> = OnceLock::new();
    MARKERS.get_or_init(|| {
        let mut words: Vec<&'static str> = Vec::new();
        let phrases = ASK_MARKERS
            .iter()
            .map(|m| {
                m.split(' ')
                    .map(|w| {
                        let at = words.iter().position(|&x| x == w).unwrap_or_else(|| {
                            words.push(w);
                            words.len() - 1
                        });
                        // At most a few dozen words: the code fits a byte.
                        u8::try_from(at + 1).unwrap_or(u8::MAX)
                    })
                    .collect()
            })
            .collect();
        Markers { words, phrases }
    })
}

/// The code of the marker word `ident` folds to, or 0.
pub(crate) fn word_code(analyzer: &Analyzer, ident: &str) -> u8 {
    let m = markers();
    m.words
        .iter()
        .position(|w| analyzer.folds_to(ident, w))
        .map_or(0, |i| u8::try_from(i + 1).unwrap_or(u8::MAX))
}

/// The position of the first identifier, after the first, where a marker's words start,
/// of `n` identifiers whose [`word_code`] `code(i)` gives (0 for one inside the payload);
/// `None` when a marker opens the request: its ask comes first and has no context.
pub(crate) fn ask_start(n: usize, code: impl Fn(usize) -> u8) -> Option<usize> {
    let m = markers();
    let starts_at = |i: usize| {
        code(i) != 0
            && m.phrases
                .iter()
                .any(|p| i + p.len() <= n && p.iter().enumerate().all(|(j, &c)| code(i + j) == c))
    };
    if n > 0 && starts_at(0) {
        return None;
    }
    (1..n).find(|&i| starts_at(i))
}

/// Whether `ident` folds to a subject marker ([`SUBJECT_MARKERS`]).
pub(crate) fn is_subject_marker(analyzer: &Analyzer, ident: &str) -> bool {
    SUBJECT_MARKERS.iter().any(|w| analyzer.folds_to(ident, w))
}

/// The position of the first subject marker of `n` identifiers (`marker(i)` says whether
/// identifier `i` is one outside the payload) past the request's first identifier and past
/// its ask's start `ask`: the subject runs from there to the request's end.
pub(crate) fn subject_start(
    n: usize,
    ask: Option<usize>,
    marker: impl Fn(usize) -> bool,
) -> Option<usize> {
    let from = ask.map_or(1, |a| a + 1);
    (from..n).find(|&i| marker(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_start_past_the_first_word() {
        let start = |c: Vec<u8>| ask_start(c.len(), |i| c[i]);
        let codes = |words: &[&str]| -> Vec<u8> {
            let m = markers();
            words
                .iter()
                .map(|w| {
                    m.words
                        .iter()
                        .position(|x| x == w)
                        .map_or(0, |i| i as u8 + 1)
                })
                .collect()
        };
        assert_eq!(start(codes(&["can", "you", "merge"])), None);
        assert_eq!(
            start(codes(&["green", "go", "ahead", "and", "merge"])),
            Some(1)
        );
        assert_eq!(start(codes(&["green", "go", "ahead", "merge"])), None);
        assert_eq!(start(codes(&["i", "you", "can", "you", "dig"])), Some(2));
        assert_eq!(start(codes(&["упал", "можешь", "глянуть"])), Some(1));
        assert_eq!(start(codes(&["x", "can"])), None);
        // A request that opens with its ask has no context, whatever follows.
        assert_eq!(
            start(codes(&[
                "can", "you", "check", "and", "can", "you", "merge"
            ])),
            None
        );
        assert_eq!(start(Vec::new()), None);
    }

    #[test]
    fn subjects_start_past_the_first_word_and_the_ask() {
        let marks = [false, true, false, true];
        assert_eq!(subject_start(4, None, |i| marks[i]), Some(1));
        assert_eq!(subject_start(4, Some(1), |i| marks[i]), Some(3));
        assert_eq!(subject_start(4, Some(3), |i| marks[i]), None);
        assert_eq!(subject_start(1, None, |_| true), None);
        assert_eq!(subject_start(0, None, |_| true), None);
    }
}
