//! Query expansion lexicon: source phrases, as lexicon keys (`analysis/lexkey.rs`) -> analysed
//! target terms.

use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::analyzer::Analyzer;
use crate::analysis::language::{reads_as, Lang, FORMS_ALL, LANGUAGES};
pub use crate::consts::ISSUE_KEY_SHAPE;
use crate::error::{Error, LexiconProblem};
use crate::strtab::{str_hash, Arena, StrTable};

/// A word id no key contains ([`Lexicon::word_id`] of a word outside every key).
pub(crate) const NO_WORD: u32 = u32::MAX;

/// Source phrase (a sequence of lexicon keys, [`Analyzer::lexicon_keys`]) -> target terms
/// ([`Analyzer::tokens`]), both by one analyzer. A key is a word's stem told apart from the
/// other words that stem alike, so an entry fires on its own words' inflections only
/// (`activate` on `activated`, not on `activities`).
///
/// The words of the keys are interned, so that a key is a short slice of ids and matching a
/// query allocates nothing: each query token is looked up once (`Lexicon::word_id`) and
/// the longest-key scan hashes id slices.
#[derive(Debug, Default, Clone)]
pub struct Lexicon {
    /// Unique per lexicon built in the process (a clone shares it: same words, same ids);
    /// tags the query memo's word-id lookups.
    uid: u64,
    words: StrTable,
    /// Per word: the length of the longest key that starts with it.
    longest: Vec<u32>,
    /// Per word: its sources' forms (`FORM_*` of `analysis/language.rs`), what a request's
    /// lexicon word must be in to read as it ([`Lexicon::reads`]); [`FORMS_ALL`] for a word
    /// of no language's form (an English or Russian key, a shape).
    forms: Vec<u8>,
    /// Keys of up to [`SHORT_KEY`] words, padded with [`NO_WORD`] (stored inline: a lookup
    /// follows no pointer) -> entry.
    short: FxHashMap<[u32; SHORT_KEY], u32>,
    /// Longer keys -> entry.
    long: FxHashMap<Box<[u32]>, u32>,
    /// The targets of entry `e` are the slots `target_start[e]..target_start[e + 1]`:
    /// each entry's contiguous, so that a search's table of the targets' vocabulary ids
    /// (by slot) is read a line or two an entry, and the terms only when not known yet.
    target_start: Vec<u32>,
    /// Per slot: the analysed target term.
    target_terms: Arena,
    /// Per slot: the target term's [`str_hash`].
    target_hash: Vec<u64>,
    max_key_len: usize,
    /// The entry of the `<issue-key>` shape source, if the lexicon has one
    /// ([`Lexicon::issue_key_slots`]).
    issue_key: Option<u32>,
}

/// The shape `source` names, if it is written as one (`<` ASCII lower-case letters and
/// hyphens `>`): only [`ISSUE_KEY_SHAPE`] is known; any other such name is an error, so a
/// misspelt shape is never taken for the words it spells. `Ok(None)`: an ordinary source.
fn shape_of(source: &str) -> Result<Option<&'static str>, LexiconProblem> {
    let s = source.trim_matches(|c: char| c.is_ascii_whitespace());
    let inner = match s.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        Some(inner) if !inner.is_empty() => inner,
        _ => return Ok(None),
    };
    if !inner.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
        return Ok(None);
    }
    if s == ISSUE_KEY_SHAPE {
        Ok(Some(ISSUE_KEY_SHAPE))
    } else {
        Err(LexiconProblem::UnknownShape(s.to_string()))
    }
}

/// The language a source is tagged with (`<de> datei`: two ASCII lower-case letters in
/// angle brackets, then ASCII white space, then the source's words), and those words;
/// `Ok(None)` for an untagged source; an unknown language is an error (docs/analysis.md §4a).
fn language_of(source: &str) -> Result<Option<(Lang, &str)>, LexiconProblem> {
    let s = source.trim_matches(|c: char| c.is_ascii_whitespace());
    let b = s.as_bytes();
    if b.len() < 5
        || b[0] != b'<'
        || b[3] != b'>'
        || !b[1..3].iter().all(u8::is_ascii_lowercase)
        || !b[4].is_ascii_whitespace()
    {
        return Ok(None);
    }
    match Lang::from_code(&s[1..3]) {
        Some(lang) => Ok(Some((lang, &s[4..]))),
        None => Err(LexiconProblem::UnknownLanguage(
            s[..4].to_string(),
            &LANGUAGES,
        )),
    }
}

/// Keys of at most this many words are kept inline.
const SHORT_KEY: usize = 4;

fn short_key(ids: &[u32]) -> Option<[u32; SHORT_KEY]> {
    if ids.len() > SHORT_KEY {
        return None;
    }
    let mut key = [NO_WORD; SHORT_KEY];
    key[..ids.len()].copy_from_slice(ids);
    Some(key)
}

impl Lexicon {
    /// Build from `(source phrase, target text)` entries. A source or target without index
    /// terms is an error naming the entry; entries with the same key merge their targets
    /// (first-occurrence order).
    pub fn new(analyzer: &Analyzer, entries: &[(String, String)]) -> Result<Lexicon, Error> {
        let mut lex = Lexicon::default();
        // Per entry its distinct targets, laid out by entry at the end.
        let mut targets: Vec<Vec<String>> = Vec::new();
        // Beside each entry's targets, the set of them: one entry of many targets was
        // quadratic when each new one was looked for in its list.
        let mut seen: Vec<FxHashSet<String>> = Vec::new();
        let mut count = 0usize;
        for (i, (source, target)) in entries.iter().enumerate() {
            let fault = |problem| Error::Lexicon {
                entry: i,
                source: source.clone(),
                problem,
            };
            let shape = shape_of(source).map_err(fault)?;
            // A shape's key is its own name, a word no analysed text has (`<` separates).
            let key: Vec<(String, u8)> = match (shape, language_of(source).map_err(fault)?) {
                (Some(name), _) => vec![(name.to_string(), FORMS_ALL)],
                (None, Some((lang, words))) => analyzer.lexicon_key(words, lang),
                (None, None) => analyzer
                    .lexicon_keys(source)
                    .into_iter()
                    .map(|w| (w, FORMS_ALL))
                    .collect(),
            };
            if key.is_empty() {
                return Err(fault(LexiconProblem::NoSourceTerms));
            }
            let terms = analyzer.tokens(target);
            if terms.is_empty() {
                return Err(fault(LexiconProblem::NoTargetTerms(target.clone())));
            }
            if shape.is_none() {
                lex.max_key_len = lex.max_key_len.max(key.len());
            }
            let ids = key
                .iter()
                .map(|(w, _)| lex.words.insert(w, str_hash(w)).map(|(id, _)| id))
                .collect::<Result<Box<[u32]>, Error>>()?;
            lex.longest.resize(lex.words.len(), 0);
            lex.forms.resize(lex.words.len(), 0);
            for (&id, &(_, form)) in ids.iter().zip(&key) {
                lex.forms[id as usize] |= form;
            }
            let first = &mut lex.longest[ids[0] as usize];
            *first = (*first).max(ids.len() as u32);
            let next = targets.len() as u32;
            let entry = match short_key(&ids) {
                Some(k) => *lex.short.entry(k).or_insert(next),
                None => *lex.long.entry(ids).or_insert(next),
            };
            if entry == next {
                targets.push(Vec::new());
                seen.push(FxHashSet::default());
            }
            if shape.is_some() {
                lex.issue_key = Some(entry);
            }
            let known = &mut targets[entry as usize];
            let set = &mut seen[entry as usize];
            for t in terms {
                if set.insert(t.clone()) {
                    known.push(t);
                    count += 1;
                    if count > u32::MAX as usize {
                        return Err(Error::LexiconTargets { entry: i });
                    }
                }
            }
        }
        lex.target_start.reserve_exact(targets.len() + 1);
        lex.target_start.push(0);
        for terms in &targets {
            for t in terms {
                lex.target_terms.push(t).map_err(|_| Error::LexiconText)?;
                lex.target_hash.push(str_hash(t));
            }
            lex.target_start.push(lex.target_hash.len() as u32);
        }
        lex.target_terms.shrink_to_fit();
        lex.target_hash.shrink_to_fit();
        lex.words.shrink_to_fit();
        static NEXT_UID: AtomicU64 = AtomicU64::new(1);
        lex.uid = NEXT_UID.fetch_add(1, Ordering::Relaxed);
        Ok(lex)
    }

    /// A number no other lexicon built in the process has (0 for an empty default one).
    pub(crate) fn uid(&self) -> u64 {
        self.uid
    }

    /// Number of targets of all keys (each key's distinct targets, counted per key).
    pub(crate) fn target_count(&self) -> usize {
        self.target_hash.len()
    }

    /// The target term in `slot` (below [`Lexicon::target_count`]) and its [`str_hash`].
    #[inline]
    pub(crate) fn target(&self, slot: usize) -> (&str, u64) {
        (self.target_terms.get(slot), self.target_hash[slot])
    }

    /// The slots of entry `entry`'s targets.
    #[inline]
    fn slots(&self, entry: u32) -> std::ops::Range<usize> {
        let e = entry as usize;
        self.target_start[e] as usize..self.target_start[e + 1] as usize
    }

    /// The slots of the `<issue-key>` shape's targets, if the lexicon has that source.
    #[inline]
    pub(crate) fn issue_key_slots(&self) -> Option<std::ops::Range<usize>> {
        self.issue_key.map(|e| self.slots(e))
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.target_start.len().saturating_sub(1)
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of a key, if it is one.
    #[inline]
    fn entry(&self, ids: &[u32]) -> Option<u32> {
        match short_key(ids) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(ids).copied(),
        }
    }

    /// Length (in terms) of the longest key.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    /// Targets of the key `terms` (lexicon keys), if it is one.
    pub fn get<S: AsRef<str>>(&self, terms: &[S]) -> Option<Vec<&str>> {
        let ids: Vec<u32> = terms
            .iter()
            .map(|t| self.word_id(t.as_ref(), str_hash(t.as_ref())))
            .collect();
        let entry = self.entry(&ids)?;
        Some(
            self.slots(entry)
                .map(|slot| self.target_terms.get(slot))
                .collect(),
        )
    }

    /// The id of a key word (`hash` its [`str_hash`]), or [`NO_WORD`].
    #[inline]
    pub(crate) fn word_id(&self, word: &str, hash: u64) -> u32 {
        self.words.find(word, hash).unwrap_or(NO_WORD)
    }

    /// The id of the key word a request's lexicon word of `form` reads as
    /// ([`reads_as`] of its sources' forms; docs/analysis.md §4a), or [`NO_WORD`].
    #[inline]
    pub(crate) fn reading_id(&self, word: &str, hash: u64, form: u8) -> u32 {
        match self.word_id(word, hash) {
            NO_WORD => NO_WORD,
            id if reads_as(self.forms[id as usize], form) => id,
            _ => NO_WORD,
        }
    }

    /// Walk `toks` left to right taking the longest key at each position and call `add`
    /// with every target of each key found (the expansion of the query terms).
    pub fn expand<'a, S: AsRef<str>>(&'a self, toks: &[S], mut add: impl FnMut(&'a str)) {
        self.expand_keyed(toks, |t, _| add(t));
    }

    /// [`Lexicon::expand`], `add` also getting the positions in `toks` of the key found.
    pub fn expand_keyed<'a, S: AsRef<str>>(
        &'a self,
        toks: &[S],
        mut add: impl FnMut(&'a str, std::ops::Range<usize>),
    ) {
        let ids: Vec<u32> = toks
            .iter()
            .map(|t| self.word_id(t.as_ref(), str_hash(t.as_ref())))
            .collect();
        self.expand_ids(&ids, |slots, key| {
            for slot in slots {
                add(self.target_terms.get(slot), key.clone());
            }
        });
    }

    /// [`Lexicon::expand`] over the tokens' word ids ([`Lexicon::word_id`]): `add` gets, for
    /// each key found, the slots of its targets ([`Lexicon::target`]) and the positions of
    /// the key's tokens.
    pub(crate) fn expand_ids(
        &self,
        ids: &[u32],
        mut add: impl FnMut(std::ops::Range<usize>, std::ops::Range<usize>),
    ) {
        let mut i = 0;
        while i < ids.len() {
            // A key holds only key words: the longest candidate stops at the first other, and
            // at the longest key starting with the word at `i`.
            let longest = match ids[i] {
                NO_WORD => 0,
                w => ids[i..]
                    .iter()
                    .take(self.longest[w as usize] as usize)
                    .take_while(|&&w| w != NO_WORD)
                    .count(),
            };
            let found = (1..=longest)
                .rev()
                .find_map(|l| self.entry(&ids[i..i + l]).map(|e| (l, e)));
            match found {
                Some((l, entry)) => {
                    add(self.slots(entry), i..i + l);
                    i += l;
                }
                None => i += 1,
            }
        }
    }

    /// Approximate heap bytes.
    pub fn memory_bytes(&self) -> usize {
        let long: usize = self.long.keys().map(|k| k.len() * 4).sum();
        self.words.memory_bytes()
            + self.longest.capacity() * 4
            + self.forms.capacity()
            + self.short.capacity() * (std::mem::size_of::<([u32; SHORT_KEY], u32)>() + 1)
            + long
            + self.long.capacity() * (std::mem::size_of::<(Box<[u32]>, u32)>() + 1)
            + self.target_start.capacity() * 4
            + self.target_terms.memory_bytes()
            + self.target_hash.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chars::CharTable;
    use crate::test_support::{analyzer_with, Arc, Index, Searcher};

    fn analyzer() -> Analyzer {
        let table = CharTable::parse(include_str!("../../../python/toolsurface/data/chars.tsv"))
            .expect("table");
        Analyzer::new(
            table,
            include_str!("../../../python/toolsurface/data/stopwords_en.txt").lines(),
        )
    }

    fn e(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn builds_merges_and_expands() {
        let a = analyzer();
        let lex = Lexicon::new(
            &a,
            &[
                e("pr", "pull request"),
                e("pull request", "merge"),
                e("PR", "review pull"),
                e("repo", "repository"),
            ],
        )
        .unwrap();
        assert_eq!(lex.len(), 3);
        assert_eq!(lex.max_key_len(), 2);
        assert_eq!(lex.get(&["pr:pr"]).unwrap(), ["pull", "request", "review"]);
        assert!(lex.get(&["pull:pul"]).is_none());
        assert_eq!(lex.get(&["pull:pul", "request:request"]).unwrap(), ["merg"]);
        assert!(lex.memory_bytes() > 0);
        let toks = a.lexicon_keys("open pull requests in repos");
        let mut got = Vec::new();
        lex.expand(&toks, |t| got.push(t.to_string()));
        assert_eq!(got, ["merg", "repositori"]);
    }

    #[test]
    fn long_keys_and_longest_match() {
        let a = analyzer();
        let lex = Lexicon::new(
            &a,
            &[
                e("alpha beta gamma delta epsilon", "greek"),
                e("alpha beta", "pair"),
                e("beta", "second"),
                e("zeta eta theta", "three"),
            ],
        )
        .unwrap();
        assert_eq!(lex.max_key_len(), 5);
        let expand = |q: &str| {
            let mut got = Vec::new();
            lex.expand(&a.lexicon_keys(q), |t| got.push(t.to_string()));
            got
        };
        assert_eq!(
            expand("alpha beta gamma delta epsilon beta"),
            ["greek", "second"]
        );
        assert_eq!(expand("alpha beta gamma delta"), ["pair"]);
        assert_eq!(expand("x beta alpha"), ["second"]);
        assert_eq!(expand("zeta eta theta zeta eta"), ["three"]);
        assert_eq!(
            lex.get(&a.lexicon_keys("alpha beta gamma delta epsilon"))
                .unwrap(),
            ["greek"]
        );
        assert!(lex.get(&a.lexicon_keys("alpha beta gamma delta")).is_none());
    }

    #[test]
    fn issue_key_shape_source() {
        let a = analyzer();
        let lex = Lexicon::new(
            &a,
            &[
                e(" <issue-key> ", "issue"),
                e("<issue-key>", "ticket issue"),
                e("issue key", "jira"),
            ],
        )
        .unwrap();
        // The shape is a key of its own, never matched by words: "issue key" still is.
        assert_eq!(lex.len(), 2);
        assert_eq!(lex.max_key_len(), 2);
        let slots = lex.issue_key_slots().unwrap();
        let got: Vec<&str> = slots.map(|s| lex.target(s).0).collect();
        assert_eq!(got, ["issu", "ticket"]);
        assert_eq!(lex.get(&a.lexicon_keys("issue key")).unwrap(), ["jira"]);
        let mut seen = Vec::new();
        lex.expand(&a.lexicon_keys("<issue-key>"), |t| seen.push(t.to_string()));
        assert_eq!(seen, ["jira"]);
        assert!(Lexicon::new(&a, &[e("pr", "pull request")])
            .unwrap()
            .issue_key_slots()
            .is_none());
        let err = Lexicon::new(&a, &[e("pr", "pull"), e("<issue-id>", "issue")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("entry 1") && err.contains("unknown shape <issue-id>"),
            "{err}"
        );
        // Only `<` lower-case letters and hyphens `>` is a shape's form.
        let lex = Lexicon::new(&a, &[e("<Issue-Key>", "ticket"), e("<html5>", "markup")]).unwrap();
        assert!(lex.issue_key_slots().is_none());
        assert_eq!(lex.get(&a.lexicon_keys("html5")).unwrap(), ["markup"]);
    }

    /// An entry fires on its words' inflections, not on the words of other meaning that
    /// stem alike; a Russian entry on its cases.
    #[test]
    fn entries_match_whole_words_not_shared_stems() {
        let a = analyzer();
        let lex = Lexicon::new(
            &a,
            &[
                e("activate", "enable"),
                e("активный", "active"),
                e("look", "search"),
            ],
        )
        .unwrap();
        let expand = |q: &str| {
            let mut got = Vec::new();
            lex.expand(&a.lexicon_keys(q), |t| got.push(t.to_string()));
            got
        };
        for q in ["activate", "activates", "activated", "activating"] {
            assert_eq!(expand(q), ["enabl"], "{q}");
        }
        for q in ["activities", "actively", "activation", "active"] {
            assert!(expand(q).is_empty(), "{q}: {:?}", expand(q));
        }
        assert_eq!(expand("looking looked looks"), ["search"; 3]);
        assert_eq!(expand("активные активных"), ["activ"; 2]);
        assert!(expand("активность").is_empty());
    }

    /// A request's word reads as a language's key word only in a form its sources take: an
    /// agent noun is no form of its verb, a bare word none of an inflected one.
    #[test]
    fn foreign_words_read_in_their_sources_forms() {
        let a = analyzer_with(&["<de> den", "<de> die", "<de> zur"]);
        let idx = Index::build(
            Arc::clone(&a),
            vec!["t".to_string()],
            vec![std::array::from_fn(|f| {
                if f == 0 {
                    "restore pattern remind image"
                } else {
                    ""
                }
                .to_string()
            })],
        )
        .unwrap();
        let lex = Lexicon::new(
            &a,
            &[
                e("<de> herstellen", "restore"),
                e("<de> muster", "pattern"),
                e("<es> recordar", "remind"),
                e("<de> bild", "image"),
            ],
        )
        .unwrap();
        let terms = |q: &str| -> Vec<String> {
            Searcher::new(&idx)
                .query_terms(q, Some(&lex), 0.5)
                .into_iter()
                .map(|t| t.0)
                .collect()
        };
        let has = |q: &str, t: &str| terms(q).contains(&t.to_string());
        assert!(has("herstellen", "restor") && has("die Bilder", "imag"));
        assert!(has("stell die Verbindung zur Datenbank her", "restor"));
        assert!(has("die Muster", "pattern") && has("recordar", "remind"));
        for (q, t) in [
            ("zeig den Hersteller", "restor"),
            ("Hersteller", "restor"),
            ("must", "pattern"),
            ("record", "remind"),
        ] {
            assert!(!has(q, t), "{q}: {:?}", terms(q));
        }
    }

    #[test]
    fn empty_source_or_target_is_an_error() {
        let a = analyzer();
        let err = Lexicon::new(&a, &[e("x", "y"), e("the", "thing")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("entry 0"), "{err}");
        let err = Lexicon::new(&a, &[e("thing", "stuff"), e("pr", "a")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("entry 1") && err.contains("target"), "{err}");
    }
}
