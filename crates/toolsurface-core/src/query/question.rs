//! Whether a request asks rather than tells (docs/analysis.md §10): a question mark outside
//! its payload, or a question word first. The pure engine's twin is
//! `python/toolsurface/retrieval/analysis/questions.py`; both read the text as the analyser
//! does (class-I characters skipped) and classify and fold its characters through the shared
//! character table, so they agree whatever Unicode version either runtime has.

use rustc_hash::FxHashSet;

use crate::analysis::analyzer::{in_payload, Analyzer};
use crate::chars::Class;

/// A request is read for a question on its first characters only, as the pure engine's
/// `_MAX_CHARS`: what a model writes costs the host microseconds, whatever its length.
pub const QUESTION_MAX_CHARS: usize = 4096;

/// Question marks: ASCII, full-width, Arabic and Greek (the Greek one is U+037E).
fn is_question_mark(c: char) -> bool {
    matches!(c, '?' | '\u{ff1f}' | '\u{061f}' | '\u{037e}')
}

/// Whether `text` has a byte that starts a question mark ([`is_question_mark`]): `?`, or
/// the lead byte of the full-width (U+FF1F), Arabic (U+061F) or Greek (U+037E) one.
fn may_have_mark(text: &str) -> bool {
    // A fold, not `any`: without the early exit it runs over whole words of bytes at a
    // time, and a request rarely has one of these bytes to stop at early (2% of a Russian
    // request's instructions with `any`, docs/performance.md).
    text.bytes().fold(false, |seen, b| {
        seen | matches!(b, b'?' | 0xEF | 0xD8 | 0xCD)
    })
}

/// An apostrophe inside a word (`what's`, `who’s`); the typographic one reads as `'`.
fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}')
}

/// The words that make a request a question when it starts with one: question words and
/// imperatives of looking (`data/question_words.txt`), folded through the table.
#[derive(Clone, Debug, Default)]
pub struct QuestionWords {
    words: FxHashSet<String>,
}

impl QuestionWords {
    /// The words of `words` (blank ones left out), folded by `analyzer`'s table with `’`
    /// read as `'`, as a request's first word is.
    pub fn new<'a>(analyzer: &Analyzer, words: impl IntoIterator<Item = &'a str>) -> Self {
        let words = words
            .into_iter()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(|w| analyzer.fold(w).replace('\u{2019}', "'"))
            .collect();
        QuestionWords { words }
    }

    /// Whether there is no word (a request is then a question by its marks only).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

/// The first word of `text`, folded: a letter or number, then letters, numbers and marks,
/// and at most one apostrophe followed by more of them; class-I characters are skipped.
/// `None` when `text` has no letter or number.
fn first_word(analyzer: &Analyzer, text: &str) -> Option<String> {
    let table = analyzer.table();
    let mut chars = text
        .chars()
        .filter(|&c| table.class(c) != Class::Ignore)
        .peekable();
    while chars.next_if(|&c| !table.class(c).is_base()).is_some() {}
    let mut word = String::new();
    let in_word = |c: &char| {
        let class = table.class(*c);
        class.is_base() || class == Class::Mark
    };
    while let Some(c) = chars.next_if(in_word) {
        word.push(table.fold(c));
    }
    if word.is_empty() {
        return None;
    }
    if chars.next_if(|&c| is_apostrophe(c)).is_some() {
        if let Some(c) = chars.next_if(|&c| table.class(c).is_base()) {
            word.push('\'');
            word.push(table.fold(c));
            while let Some(c) = chars.next_if(in_word) {
                word.push(table.fold(c));
            }
        }
    }
    Some(word)
}

/// Whether `text` asks: a question mark outside its payload (a quoted "are you up?" asks
/// nothing), or a first word among `words`. Read on its first [`QUESTION_MAX_CHARS`]
/// characters; `spans` is a buffer for the payload's ranges.
pub fn is_question(
    analyzer: &Analyzer,
    text: &str,
    words: &QuestionWords,
    spans: &mut Vec<(usize, usize)>,
) -> bool {
    // A text of no more bytes than that has no more characters either.
    let text = if text.len() <= QUESTION_MAX_CHARS {
        text
    } else {
        match text.char_indices().nth(QUESTION_MAX_CHARS) {
            Some((end, _)) => &text[..end],
            None => text,
        }
    };
    let marked = may_have_mark(text) && {
        analyzer.payload_spans(text, spans);
        mark_outside(text, spans)
    };
    marked || opens_with_word(analyzer, text, words)
}

/// [`is_question`] of a request already analysed, whose payload ranges are `spans`
/// (`Analyzer::payload_spans` of the whole `text`): the same answer without finding them
/// again, when `text` is read whole (no more than [`QUESTION_MAX_CHARS`] bytes).
pub(crate) fn is_question_spanned(
    analyzer: &Analyzer,
    text: &str,
    words: &QuestionWords,
    spans: &[(usize, usize)],
) -> bool {
    if text.len() > QUESTION_MAX_CHARS {
        return is_question(analyzer, text, words, &mut Vec::new());
    }
    (may_have_mark(text) && mark_outside(text, spans)) || opens_with_word(analyzer, text, words)
}

/// Whether a question mark of `text` lies outside its payload ranges `spans`.
fn mark_outside(text: &str, spans: &[(usize, usize)]) -> bool {
    text.char_indices()
        .any(|(i, c)| is_question_mark(c) && !in_payload(spans, i))
}

/// Whether `text`'s first word is one of `words`.
fn opens_with_word(analyzer: &Analyzer, text: &str, words: &QuestionWords) -> bool {
    !words.is_empty()
        && first_word(analyzer, text).is_some_and(|w| words.words.contains(w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::analyzer;

    fn asks(text: &str) -> bool {
        let a = analyzer();
        let words = QuestionWords::new(&a, ["what's", "list", "какие", "show"]);
        is_question(&a, text, &words, &mut Vec::new())
    }

    #[test]
    fn marks_outside_the_payload_and_first_words_ask() {
        assert!(asks("what's running in docker"));
        assert!(asks("What’s running in docker"));
        assert!(asks("list the running containers"));
        assert!(asks("  «List» them"));
        assert!(asks("restart it?"));
        assert!(asks("какие инциденты сейчас открыты в pagerduty"));
        assert!(asks("перезапусти？"));
        assert!(!asks("restart the running containers"));
        assert!(!asks("post \"are you up?\" in #general"));
        assert!(!asks("whats up"));
        assert!(!asks("listing"));
        assert!(!asks(""));
        assert!(!asks("?!".repeat(0).as_str()));
    }

    #[test]
    fn only_the_first_characters_are_read() {
        let long = format!("{}?", "x ".repeat(QUESTION_MAX_CHARS));
        assert!(!asks(&long));
        let short = format!("{}?", "x ".repeat(10));
        assert!(asks(&short));
    }
}
