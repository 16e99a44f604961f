//! Lexicon keys: what a word is matched by in a lexicon (docs/analysis.md §4), its stem
//! told apart from the other words that stem alike.
//!
//! Snowball conflates derivations as well as inflections (`activate`, `activities` and
//! `actively` all stem to `activ`), so a lexicon entry keyed by the stem fired on words of
//! other meaning. A word's lexicon key is its stem with, for an English word, its
//! inflectional base (the word less a plural, third-person, past or gerund ending): an
//! entry fires on its own words' inflections only. A Russian word's key is its stem, with
//! the derivational suffix Snowball strips (`ость`, `ейш`) kept: the stemmer otherwise
//! strips inflections only. Other words' key is their stem.

use std::borrow::Cow;

use crate::analysis::analyzer::{is_english_token, is_russian_token, Analyzer, TokenScratch};
use crate::analysis::language::{Lang, FORMS_ALL};

/// Separates a stem from what tells its words apart; no token holds it (a separator).
pub const KEY_SEPARATOR: char = ':';

/// The inflectional base of an English token (`^[a-z0-9]*[a-z][a-z0-9]*$`): the token less
/// its inflectional ending ([`strip_ending`]), and a second one under an `s`, then less a final `e`, then less one
/// letter of a final doubled letter. Inflections of a word share its base (`activate`, `activates`, `activated`,
/// `activating`: `activat`; `stop`, `stopped`: `stop`; `copy`, `copies`, `copied`: `copy`);
/// derivations keep their suffix (`activities`: `activity`, `actively`).
pub fn english_base(word: &str) -> String {
    let mut base = word.to_string();
    // A second ending only under a plural's or third person's `s` (`speeds` to `speed` to
    // `spee`, as `speed` itself): `browsing` to `brows`, as `browse`, and no further.
    if let Some(shorter) = strip_ending(&base) {
        let plural = base.ends_with('s');
        base = shorter;
        if plural {
            if let Some(shorter) = strip_ending(&base) {
                base = shorter;
            }
        }
    }
    if base.len() > 2 && base.ends_with('e') {
        base.pop();
    }
    let b = base.as_bytes();
    if b.len() > 2 && b[b.len() - 1] == b[b.len() - 2] {
        base.pop();
    }
    base
}

/// `word` less its inflectional ending, if it has one: the first of `ies`, `ied` (read as
/// `y`) past four letters; `es` after `ch`, `sh`, `ss`, `x` or `z`; `s` past two letters,
/// not after `s`, `u` or `i` (`status`, `analysis`); `ing` past five letters; the `d` of
/// `ed` past four. ASCII (an English token): byte offsets are character offsets.
fn strip_ending(word: &str) -> Option<String> {
    let n = word.len();
    if n > 4 && (word.ends_with("ies") || word.ends_with("ied")) {
        Some(format!("{}y", &word[..n - 3]))
    } else if word.ends_with("es")
        && ["ch", "sh", "ss", "x", "z"]
            .iter()
            .any(|e| word[..n - 2].ends_with(e))
    {
        Some(word[..n - 2].to_string())
    } else if n > 2 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e))
    {
        Some(word[..n - 1].to_string())
    } else if n > 5 && word.ends_with("ing") {
        Some(word[..n - 3].to_string())
    } else if n > 4 && word.ends_with("ed") {
        // Its `d` only: the `e` goes with a final `e` (`agreed` as `agree`).
        Some(word[..n - 1].to_string())
    } else {
        None
    }
}

/// The lexicon key of a folded `word` that passed the analyser's filters, `stem` its stem
/// ([`Analyzer::stem`]): `stem:base` for an English token ([`english_base`]); for a Russian
/// token, `stem:ост` or `stem:ейш` when the word goes on past its stem with that
/// derivational suffix, else the stem; any other token's stem.
pub fn lexicon_key<'a>(word: &str, stem: &'a str) -> Cow<'a, str> {
    if is_english_token(word) {
        Cow::Owned(format!("{stem}{KEY_SEPARATOR}{}", english_base(word)))
    } else if is_russian_token(word) {
        let rest = word.strip_prefix(stem).unwrap_or("");
        match ["ост", "ейш"].iter().find(|s| rest.starts_with(*s)) {
            Some(suffix) => Cow::Owned(format!("{stem}{KEY_SEPARATOR}{suffix}")),
            None => Cow::Borrowed(stem),
        }
    } else {
        Cow::Borrowed(stem)
    }
}

impl Analyzer {
    /// The lexicon keys of `text` ([`lexicon_key`]), one per index term of
    /// [`Analyzer::tokens`], in the same order.
    pub fn lexicon_keys(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut scratch = TokenScratch::default();
        self.for_each_identifier(text, |ident| {
            self.identifier_words(ident, &mut scratch, &mut |w| {
                let stem = self.stem(w);
                out.push(lexicon_key(w, &stem).into_owned());
            });
        });
        out
    }

    /// The key words of a lexicon source tagged with `lang` (docs/analysis.md §4a): the
    /// words of `text` as a request in `lang` reads them, its function words dropped, each
    /// its lexicon word in `lang` with its form ([`Analyzer::lexicon_form`]) or, when not of
    /// `lang`'s script or when `lang` is English or Russian, its lexicon key
    /// ([`lexicon_key`]), as a request's own-stem lookup reads it, of every form
    /// ([`FORMS_ALL`]).
    pub fn lexicon_key(&self, text: &str, lang: Lang) -> Vec<(String, u8)> {
        let mut out = Vec::new();
        let mut scratch = TokenScratch::default();
        self.for_each_identifier(text, |id| {
            self.identifier_words(id, &mut scratch, &mut |w| {
                if self.language_stop_mask(w) & lang.bit() != 0 {
                    return;
                }
                match self.lexicon_word(lang, w) {
                    Some(lw) => out.push((lw, self.lexicon_form(lang, w))),
                    None => out.push((lexicon_key(w, &self.stem(w)).into_owned(), FORMS_ALL)),
                }
            });
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::the_analyzer;

    #[test]
    fn inflections_share_a_base_and_derivations_do_not() {
        let same = [
            &["activate", "activates", "activated", "activating"][..],
            &["stop", "stops", "stopped", "stopping"],
            &["copy", "copies", "copied", "copying"],
            &["install", "installs", "installed", "installing"],
            &["branch", "branches"],
            &["status", "statuses"],
            &["process", "processes", "processed"],
            &["issue", "issues"],
            &["pr", "prs"],
            &["speed", "speeds"],
            &["agree", "agreed"],
            &["browse", "browsing", "browses"],
            &["compose", "composing", "composed"],
            &["build", "builds", "building", "buildings"],
        ];
        for words in same {
            let bases: Vec<String> = words.iter().map(|w| english_base(w)).collect();
            assert!(bases.iter().all(|b| *b == bases[0]), "{words:?}: {bases:?}");
        }
        for (a, b) in [
            ("activate", "activities"),
            ("activate", "actively"),
            ("activate", "activation"),
            ("review", "reviewer"),
        ] {
            assert_ne!(english_base(a), english_base(b), "{a} {b}");
        }
    }

    #[test]
    fn keys_tell_apart_words_that_stem_alike() {
        let a = the_analyzer();
        let keys = a.lexicon_keys("activate activities actively activated");
        assert_eq!(a.tokens("activate activities actively"), ["activ"; 3]);
        assert_eq!(keys[0], keys[3]);
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[1], keys[2]);
        // Russian: cases share the stem's key, the noun in -ость is a word of its own.
        let ru = a.lexicon_keys("активный активная активность активности");
        assert_eq!(ru[0], ru[1]);
        assert_eq!(ru[2], ru[3]);
        assert_ne!(ru[0], ru[2]);
        // Other scripts, and parts and joined forms, key as the tokens go.
        assert_eq!(a.lexicon_keys("日本"), a.tokens("日本"));
        assert_eq!(a.lexicon_keys("pull_requests").len(), 3);
    }
}
