//! The per-thread memo of query identifiers' tokens, with their last vocabulary and lexicon
//! lookups.

use rustc_hash::FxHashMap;

use crate::analysis::analyzer::Analyzer;
use crate::analysis::language::{request_form, Lang, Signals};
use crate::lexicon::{Lexicon, NO_WORD};
use crate::query::ask;
use crate::strtab::StrTable;

/// Identifiers (and bytes of their tokens) the per-thread query memo holds before it starts
/// over.
pub(crate) const QUERY_MEMO_IDENTS: usize = 1 << 13;
pub(crate) const QUERY_MEMO_BYTES: usize = 1 << 18;

/// Tokens of recent query identifiers, per thread: an identifier seen before costs one hash
/// lookup instead of splitting, folding, stopword and stem lookups. Tokens carry their
/// [`str_hash`], so the vocabulary and the lexicon look them up without hashing again.
#[derive(Debug, Default)]
pub(crate) struct QueryMemo {
    /// The analyzer the tokens come from ([`Analyzer::id`]); 0 for none.
    pub(crate) owner: u64,
    /// Identifier -> range of `toks`, and what it says by itself ([`IdentFacts`]).
    pub(crate) map: FxHashMap<Box<str>, (usize, usize, IdentFacts)>,
    /// Token text, back to back.
    pub(crate) text: String,
    /// The tokens, in `text`.
    pub(crate) toks: Vec<MemoTok>,
    /// Bytes of the identifiers held as keys.
    pub(crate) key_bytes: usize,
    /// (token, language) -> the token's lexicon word in that language (`de:erstell`), in
    /// `text`, with its hash; `None` when the word is not of the language's script. Made
    /// for the languages a request's tokens look up ([`Lang::lookups`]), once each.
    pub(crate) lang_words: FxHashMap<(u32, u8), Option<LangWord>>,
    /// (token, language) -> what the token looks up when none of its lookups is a key word
    /// ([`Analyzer::lexicon_fallbacks`]), in `text`, in order; made once each for the
    /// request's language.
    pub(crate) lang_fallbacks: FxHashMap<(u32, u8), Vec<LangWord>>,
}

/// What a query identifier says by itself, whatever surrounds it: worked out with its
/// tokens, once per identifier the memo holds (the marker lists are walked, and the
/// identifier folded, per identifier, not per request).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IdentFacts {
    /// What it says about its request's language.
    pub(crate) signals: Signals,
    /// The code of the ask-marker word it folds to ([`crate::query::ask::word_code`]), 0
    /// for none.
    pub(crate) ask_code: u8,
    /// It folds to a subject marker ([`crate::query::ask::is_subject_marker`]).
    pub(crate) subject: bool,
    /// It is an issue key ([`Analyzer::is_issue_key`]).
    pub(crate) issue_key: bool,
    /// It is a number or a file name ([`Analyzer::is_number`], [`Analyzer::is_file_name`]):
    /// its tokens weigh as the payload's.
    pub(crate) payload_like: bool,
    /// The separable-verb particle it folds to ([`Analyzer::particle_code`]), 0 for none.
    pub(crate) particle: u8,
}

impl IdentFacts {
    /// The facts of `ident`, whose language signals are `signals`.
    pub(crate) fn of(analyzer: &Analyzer, ident: &str, signals: Signals) -> IdentFacts {
        IdentFacts {
            signals,
            ask_code: ask::word_code(analyzer, ident),
            subject: ask::is_subject_marker(analyzer, ident),
            issue_key: analyzer.is_issue_key(ident),
            payload_like: analyzer.is_number(ident) || analyzer.is_file_name(ident),
            particle: analyzer.particle_code(ident),
        }
    }
}

impl QueryMemo {
    pub(crate) fn reset(&mut self, owner: u64) {
        self.owner = owner;
        self.map.clear();
        self.text.clear();
        self.toks.clear();
        self.key_bytes = 0;
        self.lang_words.clear();
        self.lang_fallbacks.clear();
    }

    #[inline]
    pub(crate) fn token(&self, t: &MemoTok) -> &str {
        &self.text[t.start..t.end]
    }

    /// Token `i`'s id in `vocab`, the vocabulary of the index of uid `index`: looked up
    /// once per token and index.
    #[inline]
    pub(crate) fn vocab_id(&mut self, i: usize, index: u64, vocab: &StrTable) -> Option<u32> {
        let t = self.toks[i];
        if t.vocab_of == index {
            return t.vocab_id;
        }
        let id = vocab.find(self.token(&t), t.hash);
        self.toks[i].vocab_of = index;
        self.toks[i].vocab_id = id;
        id
    }

    /// Token `i`'s word id in `lex` ([`Lexicon::word_id`]) for a request in `lang`: of the
    /// words [`Lang::lookups`] lists (its lexicon key, `analysis/lexkey.rs`, for the own
    /// stem; its lexicon words in other languages, from `lang_words`, which the query's
    /// analysis fills), the first that is a key word its form reads as
    /// ([`Lexicon::reading_id`]), else the first of its fallbacks (`lang_fallbacks`) that
    /// is one (docs/analysis.md §4a). In a Latin request a function word looks up its
    /// lexicon key only: an English function word is English ("must" is no German
    /// "Muster"). Looked up once per token, lexicon and language.
    #[inline]
    pub(crate) fn lex_id(&mut self, i: usize, lex: &Lexicon, lang: Lang) -> u32 {
        let t = self.toks[i];
        if t.lex_of == lex.uid() && t.lex_lang == lang as u8 {
            return t.lex_id;
        }
        let english = lang == Lang::Latin && t.function;
        let steps = if english {
            Lang::En.lookups()
        } else {
            lang.lookups()
        };
        let mut id = NO_WORD;
        for step in steps {
            id = match step {
                None => lex.word_id(&self.text[t.key_start..t.key_end], t.key_hash),
                Some(l) => match self.lang_words.get(&(i as u32, *l as u8)) {
                    Some(&Some((a, b, h, form))) => {
                        lex.reading_id(&self.text[a..b], h, request_form(form, lang))
                    }
                    _ => NO_WORD,
                },
            };
            if id != NO_WORD {
                break;
            }
        }
        if id == NO_WORD && !english {
            if let Some(words) = self.lang_fallbacks.get(&(i as u32, lang as u8)) {
                for &(a, b, h, form) in words {
                    id = lex.reading_id(&self.text[a..b], h, request_form(form, lang));
                    if id != NO_WORD {
                        break;
                    }
                }
            }
        }
        self.toks[i].lex_of = lex.uid();
        self.toks[i].lex_lang = lang as u8;
        self.toks[i].lex_id = id;
        id
    }
}

/// A token's lexicon word in one language: its range in the memo's text, its hash, and
/// the word's form in that language (`FORM_*` of `analysis/language.rs`).
pub(crate) type LangWord = (usize, usize, u64, u8);

/// No index or lexicon has this uid (they count up from 0 and 1).
pub(crate) const NOT_LOOKED_UP: u64 = u64::MAX;

/// A token of the query memo: its text and [`str_hash`], its lexicon key's
/// (`analysis/lexkey.rs`), and its last vocabulary and lexicon lookups, each tagged with the uid of the index or lexicon it was made in
/// ([`NOT_LOOKED_UP`]: none yet), so that a word seen before costs no lookup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemoTok {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) hash: u64,
    pub(crate) key_start: usize,
    pub(crate) key_end: usize,
    pub(crate) key_hash: u64,
    /// Whether the token's word is a function word (`analysis/function_words.rs`).
    pub(crate) function: bool,
    pub(crate) vocab_of: u64,
    pub(crate) vocab_id: Option<u32>,
    pub(crate) lex_of: u64,
    pub(crate) lex_id: u32,
    /// The language `lex_id` was looked up for.
    pub(crate) lex_lang: u8,
    /// The folded word the token is the stem of, in `text`.
    pub(crate) word: (usize, usize),
    /// The [`Lang::bit`]s of the languages whose requests drop the word.
    pub(crate) stop: u8,
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;

    /// The query memo keeps each word's vocabulary and lexicon ids, and the scratch the
    /// lexicon targets' ids, per index and lexicon: alternating between indexes (same
    /// analyzer, other vocabularies) and lexicons on one thread gives what a fresh thread
    /// (empty memo) gives.
    #[test]
    fn the_query_memo_follows_the_index_and_lexicon() {
        let a = the_analyzer();
        let doc = |text: &str| {
            [
                text.to_string(),
                String::new(),
                text.to_string(),
                String::new(),
                String::new(),
                String::new(),
            ]
        };
        let names = |n: usize| (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>();
        let one = Index::build(
            Arc::clone(&a),
            names(3),
            vec![doc("alpha beta"), doc("gamma"), doc("beta delta")],
        )
        .unwrap();
        let two = Index::build(
            Arc::clone(&a),
            names(3),
            vec![doc("delta"), doc("gamma alpha"), doc("epsilon")],
        )
        .unwrap();
        let e = |x: &str, y: &str| (x.to_string(), y.to_string());
        let lex_a = Lexicon::new(&a, &[e("zeta", "gamma"), e("beta", "epsilon")]).unwrap();
        let lex_b = Lexicon::new(&a, &[e("gamma", "beta"), e("zeta", "delta")]).unwrap();
        let s = Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.5);
        let queries = ["alpha zeta", "beta gamma", "zeta", "delta epsilon zeta"];
        let fresh = |idx: &Index, q: &str, lex: Option<&Lexicon>| {
            std::thread::scope(|sc| {
                sc.spawn(|| Searcher::new(idx).search(q, 3, &s, lex, None).unwrap())
                    .join()
                    .unwrap()
            })
        };
        for _ in 0..3 {
            for q in queries {
                for idx in [&one, &two] {
                    for lex in [None, Some(&lex_a), Some(&lex_b)] {
                        let got = Searcher::new(idx).search(q, 3, &s, lex, None).unwrap();
                        assert_eq!(got, fresh(idx, q, lex), "{q}");
                    }
                }
                // One lexicon, the index alternating: the targets' ids are the index's.
                for lex in [Some(&lex_a), Some(&lex_b)] {
                    for idx in [&one, &two, &one] {
                        let got = Searcher::new(idx).search(q, 3, &s, lex, None).unwrap();
                        assert_eq!(got, fresh(idx, q, lex), "{q}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_query_memo_follows_the_analyzer() {
        // Same documents, analyzers that differ only in a stopword.
        let plain = analyzer_with(&["the"]);
        let picky = analyzer_with(&["the", "alpha"]);
        let docs = || {
            vec![
                [
                    "alpha_tool".to_string(),
                    String::new(),
                    "alpha beta".to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
                [
                    "beta_tool".to_string(),
                    String::new(),
                    "beta gamma".to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
            ]
        };
        let names = || vec!["alpha_tool".to_string(), "beta_tool".to_string()];
        let a = Index::build(plain, names(), docs()).unwrap();
        let b = Index::build(picky, names(), docs()).unwrap();
        let s = Settings::new([1.0; N_FIELDS], [0.5; N_FIELDS], 1.2, 0.0);
        for _ in 0..3 {
            for q in ["Alpha", "alpha beta", "ALPHA_beta", "alpha"] {
                let ra = Searcher::new(&a).search(q, 5, &s, None, None).unwrap();
                let rb = Searcher::new(&b).search(q, 5, &s, None, None).unwrap();
                let ta: Vec<String> = Searcher::new(&a)
                    .query_terms(q, None, 0.0)
                    .into_iter()
                    .map(|t| t.0)
                    .collect();
                let tb: Vec<String> = Searcher::new(&b)
                    .query_terms(q, None, 0.0)
                    .into_iter()
                    .map(|t| t.0)
                    .collect();
                assert!(ta.contains(&"alpha".to_string()), "{q}: {ta:?}");
                assert!(!tb.contains(&"alpha".to_string()), "{q}: {tb:?}");
                // "alpha" finds document 0 through the plain analyzer only.
                assert_eq!(ra.docs.first(), Some(&0), "{q}");
                if q == "alpha" || q == "Alpha" {
                    assert!(rb.fallback, "{q}: {rb:?}");
                } else {
                    // Only "beta" counts: both documents have it, the first in one field.
                    assert!(!rb.fallback && rb.docs == [1, 0], "{q}: {rb:?}");
                }
            }
        }
    }
}
