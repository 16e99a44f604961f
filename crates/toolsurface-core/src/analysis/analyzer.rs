//! Text -> index terms, mirroring `Analyzer` of `python/toolsurface/retrieval/analysis.py`.
//!
//! 1. Characters of class I are removed.
//! 2. Identifiers are found: `seg ([_.-]+ seg)*` with `seg = base (base|mark)*`, leftmost and
//!    maximal; every other character separates.
//! 3. An identifier is split at connector runs into chunks and each chunk at case changes,
//!    letter/number changes, `HTTPServer`-style acronym ends (not `PRs`) and Latin/Cyrillic
//!    changes.
//! 4. Its tokens are the parts, then the joined parts when there are two or more.
//! 5. Each token is folded, dropped when shorter than two code points or a stopword, and
//!    stemmed by its script (Snowball English, Snowball Russian, or unchanged).

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::language::{
    is_cyrillic, is_han, letter_language, Lang, LangStemmers, Signals,
};
use crate::chars::{CharTable, Class};
use crate::pystr::py_strip;

/// Tokens shorter than this (in code points, after folding) are dropped.
pub const MIN_TOKEN_CHARS: usize = 2;
/// Characters that join the parts of one identifier.
pub const CONNECTORS: [char; 3] = ['_', '-', '.'];
/// Endings of English verbs whose `er` belongs to the root (`consider`, `deliver`,
/// `discover`, `register`, `remember`, `administer`, `encounter`): Snowball strips it as it
/// strips an agent noun's, and their inflections (`considered`) must keep matching them, so
/// [`Analyzer::stem`] leaves them to Snowball.
pub const ER_ROOTS: [&str; 9] = [
    "sider", "liver", "cover", "gister", "member", "minister", "counter", "wonder", "wander",
];

const MEMO_LIMIT: usize = 1 << 17;
/// Stems remembered per thread (the query path's memo); emptied when full.
const STEM_MEMO_LIMIT: usize = 1 << 14;

thread_local! {
    /// Per-thread memo of stems (folded token -> stem). A stem depends on the token alone
    /// (the Snowball algorithms are fixed), so every analyzer on the thread shares it.
    static STEMS: RefCell<FxHashMap<Box<str>, Box<str>>> = RefCell::new(FxHashMap::default());
}

const ASCII_BASE: u8 = 0;
const ASCII_CONNECTOR: u8 = 1;
const ASCII_SEP: u8 = 2;
const ASCII_SLOW: u8 = 3;

#[inline]
/// White space that ends a URL: ASCII space, tab, line feed, vertical tab, form feed, return.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Whether `c` may be part of an emoji shortcode's name (`:eyes:`, `:+1:`, `:white_check_mark:`).
fn is_shortcode_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-')
}

/// Whether `text` has a byte that can open a payload range: `"` or `:`, or the lead byte
/// of `“` (U+201C) or `«` (U+AB). Without one [`Analyzer::payload_spans`] finds none, so
/// a request without quotes or colons skips its walk over every character.
fn may_open_payload(text: &str) -> bool {
    // A fold, not `any`, as `question::may_have_mark`: most requests have none of these.
    text.bytes().fold(false, |seen, b| {
        seen | matches!(b, b'"' | b':' | 0xE2 | 0xC2)
    })
}

/// Whether an identifier starting at byte `start` lies inside one of the payload ranges
/// of [`Analyzer::payload_spans`].
pub fn in_payload(spans: &[(usize, usize)], start: usize) -> bool {
    // The spans are sorted and disjoint: only the last one opening before `start` can
    // hold it (a binary search, so a request of many quotes stays linear overall).
    let i = spans.partition_point(|&(a, _)| a < start);
    i > 0 && start < spans[i - 1].1
}

/// Sorts `spans` and merges, in place, those that overlap as open ranges, for
/// [`in_payload`] (the query's scratch buffer is reused: no allocation per query).
fn merge_spans(spans: &mut Vec<(usize, usize)>) {
    if spans.len() < 2 {
        return;
    }
    spans.sort_unstable();
    let mut last = 0;
    for i in 1..spans.len() {
        let (a, b) = spans[i];
        if a < spans[last].1 {
            spans[last].1 = spans[last].1.max(b);
        } else {
            last += 1;
            spans[last] = (a, b);
        }
    }
    spans.truncate(last + 1);
}

fn is_connector(c: char) -> bool {
    matches!(c, '_' | '-' | '.')
}

/// 1 for a Latin letter, 2 for a Cyrillic one, 3 for a Han ideograph, 0 otherwise.
#[inline]
fn script(c: char) -> u8 {
    let cp = c as u32;
    if cp < 0x80 || (0xC0..=0x24F).contains(&cp) {
        1
    } else if (0x400..=0x4FF).contains(&cp) {
        2
    } else if is_han(c) {
        3
    } else {
        0
    }
}

/// The language a stopword line is tagged with (`<de> der`: German) and its word, or
/// `None` for an untagged line or an unknown tag (docs/analysis.md §4a).
fn tagged(line: &str) -> Option<(Lang, &str)> {
    let rest = line.strip_prefix('<')?;
    let (code, word) = rest.split_once('>')?;
    let lang = Lang::from_code(code)?;
    let word = py_strip(word);
    (!word.is_empty()).then_some((lang, word))
}

/// `^[a-z0-9]*[a-z][a-z0-9]*$`
#[inline]
pub(crate) fn is_english_token(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter()
        .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter().any(|c| c.is_ascii_lowercase())
}

/// `^[а-я]+$` (U+0430..=U+044F).
#[inline]
pub(crate) fn is_russian_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| ('\u{430}'..='\u{44F}').contains(&c))
}

/// Reusable buffers of the tokeniser; keep one per thread to analyse without allocating.
#[derive(Default, Debug)]
pub struct TokenScratch {
    ident: Vec<(char, Class)>,
    pieces: Vec<(usize, usize)>,
    bases: Vec<usize>,
    word: String,
    memo_tokens: Vec<Box<str>>,
}

/// Memo of analysed identifiers (identifier text -> its tokens), for index builds.
#[derive(Default, Debug)]
pub struct Memo {
    map: FxHashMap<Box<str>, Box<[Box<str>]>>,
}

/// A vector of strings whose buffers are reused from call to call.
#[derive(Default, Debug)]
pub struct TokenBuf {
    strs: Vec<String>,
    len: usize,
}

impl TokenBuf {
    /// Empty the buffer, keeping its allocations.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Append a token.
    pub fn push(&mut self, s: &str) {
        if self.len < self.strs.len() {
            let slot = &mut self.strs[self.len];
            slot.clear();
            slot.push_str(s);
        } else {
            self.strs.push(s.to_string());
        }
        self.len += 1;
    }

    /// The tokens pushed since the last clear.
    pub fn as_slice(&self) -> &[String] {
        &self.strs[..self.len]
    }
}

/// Turns text into index terms: identifiers split, folded, filtered and stemmed.
pub struct Analyzer {
    /// Unique per analyzer in the process: tags memos that depend on the table and stopwords.
    id: u64,
    table: CharTable,
    /// Per ASCII byte: [`ASCII_BASE`], [`ASCII_CONNECTOR`], [`ASCII_SEP`] or [`ASCII_SLOW`]
    /// (classified through the table), from the table's classes.
    ascii: [u8; 128],
    stopwords: FxHashSet<Box<str>>,
    /// Folded function word -> the [`Lang::bit`]s of the languages whose stopword list has
    /// it: the votes of language detection, and the words a request in one of the
    /// languages other than English and Russian drops.
    lang_words: FxHashMap<Box<str>, u8>,
    english: Stemmer,
    russian: Stemmer,
    langs: LangStemmers,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("stopwords", &self.stopwords.len())
            .finish_non_exhaustive()
    }
}

impl Analyzer {
    /// An analyzer over `table`. Stopwords are lines: stripped, skipped when empty or when
    /// the line starts with `#`, folded through the table. A line tagged with a language
    /// (`<de> der`, docs/analysis.md §4a) is that language's function word: a stopword of
    /// every text when the language is English or Russian, else only of a request in that
    /// language; either way a vote for it.
    pub fn new<'a>(table: CharTable, stopwords: impl IntoIterator<Item = &'a str>) -> Analyzer {
        let mut lang_words: FxHashMap<Box<str>, u8> = FxHashMap::default();
        let stopwords = stopwords
            .into_iter()
            .filter_map(|w| {
                let s = py_strip(w);
                if s.is_empty() || w.starts_with('#') {
                    return None;
                }
                match tagged(s) {
                    Some((lang, word)) => {
                        let word = table.fold_str(word).into_boxed_str();
                        *lang_words.entry(word.clone()).or_default() |= lang.bit();
                        lang.is_base().then_some(word)
                    }
                    None => Some(table.fold_str(s).into_boxed_str()),
                }
            })
            .collect();
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let ascii = std::array::from_fn(|b| {
            let c = char::from(b as u8);
            match table.class(c) {
                Class::Upper | Class::Lower | Class::Other | Class::Number => ASCII_BASE,
                Class::Sep if is_connector(c) => ASCII_CONNECTOR,
                Class::Sep => ASCII_SEP,
                Class::Mark | Class::Ignore => ASCII_SLOW,
            }
        });
        Analyzer {
            ascii,
            id: NEXT_ID.fetch_add(1, AtomicOrdering::Relaxed),
            table,
            stopwords,
            lang_words,
            english: Stemmer::create(Algorithm::English),
            russian: Stemmer::create(Algorithm::Russian),
            langs: LangStemmers::default(),
        }
    }

    /// Whether `word` (folded) is a function word of `lang` (a stopword line tagged with
    /// it).
    pub fn is_language_stopword(&self, word: &str, lang: Lang) -> bool {
        self.lang_words
            .get(word)
            .is_some_and(|&m| m & lang.bit() != 0)
    }

    /// The [`Lang::bit`]s of the languages other than English and Russian whose function
    /// word `word` (folded) is: a request in one of them drops it.
    pub(crate) fn language_stop_mask(&self, word: &str) -> u8 {
        self.lang_words
            .get(word)
            .map_or(0, |&m| m & !(Lang::En.bit() | Lang::Ru.bit()))
    }

    /// The lexicon word of a folded token in `lang` (`de:erstell`), or `None` when `lang`
    /// is English or Russian or the token is not of its script (docs/analysis.md §4a).
    pub fn lexicon_word(&self, lang: Lang, token: &str) -> Option<String> {
        self.langs.lexicon_word(lang, token)
    }

    /// What a folded token of a request in `lang` looks up when none of its lookups is a
    /// key word: its compound heads' lexicon words (German), its imperative's without the
    /// pronouns (Spanish), each with its form; docs/analysis.md §4a.
    pub fn lexicon_fallbacks(&self, lang: Lang, token: &str) -> Vec<(String, u8)> {
        self.langs.fallbacks(lang, token)
    }

    /// The form of a folded token in `lang` (`FORM_*` of `analysis/language.rs`): how its
    /// lexicon word reads as a key word's ([`crate::analysis::language::reads_as`]).
    pub fn lexicon_form(&self, lang: Lang, token: &str) -> u8 {
        self.langs.form(lang, token)
    }

    /// What one identifier says about its request's language ([`Signals`]): a vote per part
    /// that is a language's function word, a vote for the language of a letter only it
    /// writes, and whether it holds a Han or Cyrillic letter.
    pub fn identifier_signals(&self, ident: &str, scratch: &mut TokenScratch) -> Signals {
        let mut out = Signals::default();
        let TokenScratch {
            ident: chars,
            pieces,
            bases,
            word,
            ..
        } = scratch;
        chars.clear();
        let mut letters = 0u8;
        for c in ident.chars() {
            let cl = self.table.class(c);
            if cl == Class::Ignore {
                continue;
            }
            chars.push((c, cl));
            out.han |= is_han(c);
            out.cyrillic |= cl.is_letter() && is_cyrillic(c);
            if let Some(l) = letter_language(self.table.fold(c)) {
                letters |= l.bit();
            }
        }
        for l in Lang::ALL {
            if letters & l.bit() != 0 {
                out.votes[l as usize] += 1;
            }
        }
        self.split_parts(chars, pieces, bases);
        for &(a, b) in pieces.iter() {
            word.clear();
            word.extend(chars[a..b].iter().map(|&(c, _)| self.table.fold(c)));
            if let Some(&mask) = self.lang_words.get(word.as_str()) {
                for l in Lang::ALL {
                    if mask & l.bit() != 0 {
                        out.votes[l as usize] += 1;
                    }
                }
            }
        }
        out
    }

    /// A number no other analyzer of the process has.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The character table.
    pub fn table(&self) -> &CharTable {
        &self.table
    }

    /// Whether `word` (already folded) is a stopword.
    pub fn is_stopword(&self, word: &str) -> bool {
        self.stopwords.contains(word)
    }

    /// Number of distinct stopwords.
    pub fn stopword_count(&self) -> usize {
        self.stopwords.len()
    }

    /// Lower-case `text` code point by code point through the table.
    pub fn fold(&self, text: &str) -> String {
        self.table.fold_str(text)
    }

    /// Stem a folded token by its script: English (with agent nouns kept, see
    /// [`Analyzer::english_stem`]), Russian, or unchanged.
    pub fn stem<'a>(&self, token: &'a str) -> Cow<'a, str> {
        if is_english_token(token) {
            self.english_stem(token)
        } else if is_russian_token(token) {
            self.russian.stem(token)
        } else {
            Cow::Borrowed(token)
        }
    }

    /// Snowball English, except that an agent noun keeps its `er` (docs/analysis.md §3):
    /// when the stem has lost a final `er` or `ers` of `token` (longer than that ending plus
    /// two), the token without the ending stems the same, and its `-er` form ends with none
    /// of [`ER_ROOTS`], the stem is Snowball's plus `er`. So `reviewers` and `reviewer` stem
    /// to `reviewer`, apart from `review`; `containers` to `container`, apart from `contain`.
    fn english_stem<'a>(&self, token: &'a str) -> Cow<'a, str> {
        let stem = self.english.stem(token);
        if stem.ends_with("er") {
            return stem;
        }
        // `token` is ASCII (an English token): byte offsets are character offsets.
        let ending = if token.ends_with("ers") {
            3
        } else if token.ends_with("er") {
            2
        } else {
            return stem;
        };
        if token.len() <= ending + 2 {
            return stem;
        }
        let er_form = &token[..token.len() - ending + 2];
        if ER_ROOTS.iter().any(|root| er_form.ends_with(root))
            || self.english.stem(&token[..token.len() - ending]) != stem
        {
            return stem;
        }
        Cow::Owned(format!("{stem}er"))
    }

    /// Index terms of `text` in order: parts of each identifier, then its joined form.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.tokens_into(text, &mut out);
        out
    }

    /// Append the index terms of `text` to `out`.
    pub fn tokens_into(&self, text: &str, out: &mut Vec<String>) {
        let mut scratch = TokenScratch::default();
        self.for_each_token(text, &mut scratch, |t| out.push(t.to_string()));
    }

    /// Append the index terms of `text` to a reusable buffer (no allocation once warm).
    pub fn tokens_buf(&self, text: &str, scratch: &mut TokenScratch, out: &mut TokenBuf) {
        self.for_each_token(text, scratch, |t| out.push(t));
    }

    /// Call `emit` with each index term of `text`, in order.
    pub fn for_each_token(
        &self,
        text: &str,
        scratch: &mut TokenScratch,
        mut emit: impl FnMut(&str),
    ) {
        self.for_each_identifier(text, |id| self.identifier_tokens(id, scratch, &mut emit));
    }

    /// Like [`Analyzer::for_each_token`], remembering each identifier's tokens in `memo`.
    pub fn for_each_token_memo(
        &self,
        text: &str,
        scratch: &mut TokenScratch,
        memo: &mut Memo,
        mut emit: impl FnMut(&str),
    ) {
        self.for_each_identifier(text, |id| {
            if let Some(toks) = memo.map.get(id) {
                for t in toks.iter() {
                    emit(t);
                }
                return;
            }
            let mut toks = std::mem::take(&mut scratch.memo_tokens);
            toks.clear();
            self.identifier_tokens(id, scratch, &mut |t: &str| toks.push(t.into()));
            for t in toks.iter() {
                emit(t);
            }
            if memo.map.len() >= MEMO_LIMIT {
                memo.map.clear();
            }
            memo.map.insert(id.into(), toks.as_slice().into());
            scratch.memo_tokens = toks;
        });
    }

    /// The index terms of one identifier (a slice [`Analyzer::for_each_identifier`] gave),
    /// stemmed through the per-thread memo of stems.
    pub(crate) fn identifier_tokens(
        &self,
        ident: &str,
        scratch: &mut TokenScratch,
        emit: &mut impl FnMut(&str),
    ) {
        self.identifier_words(ident, scratch, &mut |w| self.stem_memo(w, emit));
    }

    /// Call `f` with each identifier of `text` as the slice of `text` it spans: from its
    /// first base character to its last base character or mark, inner connector runs and
    /// class-I characters included (analysis drops the latter). The slice alone determines
    /// the identifier's tokens, so it can key a memo. Identifiers that name an argument of
    /// a request rather than what it asks for are skipped (class-I characters aside): one
    /// whose first character directly follows `@` (a mention, an address's domain), and a
    /// URL: an identifier directly followed by `://` and every identifier that begins
    /// before the next ASCII white space.
    pub(crate) fn for_each_identifier<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        const OUT: u8 = 0;
        const SEG: u8 = 1;
        const CONN: u8 = 2;
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut state = OUT;
        let (mut start, mut end) = (0usize, 0usize);
        // `at`: the last character outside an identifier (class I aside) was `@`;
        // `skip`: the current identifier began right after one; `url`: inside a URL.
        let (mut at, mut skip, mut url) = (false, false, false);
        macro_rules! emit {
            () => {
                if !url {
                    if self.url_follows(&text[end..]) {
                        url = true;
                    } else if !skip {
                        f(&text[start..end]);
                    }
                }
            };
        }
        let mut i = 0;
        while i < n {
            let byte = bytes[i];
            // ASCII (most of any catalogue) goes by its byte class; a run of ASCII letters
            // and digits is taken in one tight loop.
            if byte < 0x80 {
                match self.ascii[usize::from(byte)] {
                    ASCII_BASE => {
                        if state == OUT {
                            start = i;
                            skip = at;
                        }
                        at = false;
                        i += 1;
                        while i < n
                            && bytes[i] < 0x80
                            && self.ascii[usize::from(bytes[i])] == ASCII_BASE
                        {
                            i += 1;
                        }
                        end = i;
                        state = SEG;
                        continue;
                    }
                    ASCII_CONNECTOR => {
                        if state != OUT {
                            state = CONN;
                        }
                        at = false;
                        i += 1;
                        continue;
                    }
                    ASCII_SEP => {
                        if state != OUT {
                            emit!();
                        }
                        at = byte == b'@';
                        if is_ascii_space(byte) {
                            url = false;
                        }
                        state = OUT;
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            let (c, len) = match text[i..].chars().next() {
                Some(c) => (c, c.len_utf8()),
                None => break,
            };
            match self.table.class(c) {
                Class::Ignore => {}
                Class::Upper | Class::Lower | Class::Other | Class::Number => {
                    if state == OUT {
                        start = i;
                        skip = at;
                    }
                    end = i + len;
                    state = SEG;
                    at = false;
                }
                Class::Mark => {
                    if state == SEG {
                        end = i + len;
                    } else if state == CONN {
                        emit!();
                        state = OUT;
                    }
                    at = false;
                }
                Class::Sep => {
                    if is_connector(c) {
                        if state != OUT {
                            state = CONN;
                        }
                    } else {
                        if state != OUT {
                            emit!();
                        }
                        state = OUT;
                    }
                    at = c == '@';
                }
            }
            i += len;
        }
        if state != OUT && !url && !skip && !self.url_follows(&text[end..]) {
            f(&text[start..end]);
        }
    }

    /// Append to `out` the byte ranges of `text` that hold a request's payload rather than
    /// what it asks for: the text inside a pair of quotes (`"…"`, `“…”`, `«…»`, opened
    /// while no other is open and closed on the same line), and everything after the
    /// first colon followed (class-I characters aside) by ASCII white space ("create an
    /// issue: search page crashes"), unless that colon closes an emoji shortcode (":eyes:
    /// on it"). An identifier starting strictly inside a range is payload (see
    /// [`in_payload`]).
    pub fn payload_spans(&self, text: &str, out: &mut Vec<(usize, usize)>) {
        out.clear();
        if !may_open_payload(text) {
            return;
        }
        let mut open: Option<(char, usize)> = None;
        let mut colon = false;
        // Length of the shortcode name read since an opening colon (at the start or after
        // white space), or None when no shortcode is open; class-I characters are skipped,
        // as the pure engine sees the text without them.
        let mut code: Option<usize> = None;
        let mut after_space = true;
        let mut chars = text.char_indices();
        while let Some((i, c)) = chars.next() {
            if self.table.class(c) == Class::Ignore {
                continue;
            }
            let closes_code = c == ':' && code.is_some_and(|n| n > 0);
            code = match (c, code) {
                (':', _) if !closes_code => after_space.then_some(0),
                (c, Some(n)) if is_shortcode_name(c) => Some(n + 1),
                _ => None,
            };
            after_space = c.is_ascii() && is_ascii_space(c as u8);
            match c {
                '\n' => open = None,
                ':' if !colon && !closes_code => {
                    let next = chars
                        .clone()
                        .map(|(_, c)| c)
                        .find(|&c| self.table.class(c) != Class::Ignore);
                    if next.is_some_and(|c| c.is_ascii() && is_ascii_space(c as u8)) {
                        colon = true;
                        out.push((i, text.len()));
                    }
                }
                _ => {}
            }
            match open {
                Some((close, start)) if c == close => {
                    out.push((start, i));
                    open = None;
                }
                Some(_) => {}
                None => {
                    open = match c {
                        '"' => Some(('"', i)),
                        '\u{201c}' => Some(('\u{201d}', i)),
                        '\u{ab}' => Some(('\u{bb}', i)),
                        _ => None,
                    };
                }
            }
        }
        merge_spans(out);
    }

    /// Whether an identifier is a number: ASCII digits and connectors only, class-I
    /// characters aside (`231`, `1.8.2`, `2023-04-15`; not `v2`, `k8s`, `٣`). In a request
    /// it is an argument's value, weighed like the payload.
    pub fn is_number(&self, ident: &str) -> bool {
        ident
            .chars()
            .all(|c| c.is_ascii_digit() || is_connector(c) || self.table.class(c) == Class::Ignore)
    }

    /// Whether `rest` (the text after an identifier) starts with `://`, class-I characters
    /// aside.
    fn url_follows(&self, rest: &str) -> bool {
        // Fast path: only `:` or a non-ASCII character (maybe class I) can start one.
        match rest.as_bytes().first() {
            Some(b':') => {}
            Some(&b) if b >= 0x80 => {}
            _ => return false,
        }
        let mut want = [':', '/', '/'].into_iter().peekable();
        for c in rest.chars() {
            let Some(&w) = want.peek() else {
                return true;
            };
            if c == w {
                want.next();
            } else if self.table.class(c) != Class::Ignore {
                return false;
            }
        }
        want.peek().is_none()
    }

    /// Call `on_word` with each folded token of one identifier that survives the length and
    /// stopword filters, in order (parts, then the joined form), before stemming.
    pub(crate) fn identifier_words(
        &self,
        ident: &str,
        scratch: &mut TokenScratch,
        on_word: &mut impl FnMut(&str),
    ) {
        let TokenScratch {
            ident: chars,
            pieces,
            bases,
            word,
            ..
        } = scratch;
        chars.clear();
        for c in ident.chars() {
            let cl = self.table.class(c);
            if cl != Class::Ignore {
                chars.push((c, cl));
            }
        }
        self.split_parts(chars, pieces, bases);
        let is_han_piece = |&(a, b): &(usize, usize)| chars[a..b].iter().all(|&(c, _)| is_han(c));
        let mut k = 0;
        while k < pieces.len() {
            let (a, b) = pieces[k];
            if is_han_piece(&pieces[k]) {
                // A run of Han ideographs is read as its overlapping pairs (a lone one is
                // too short): Chinese writes no spaces, and a pair is the commonest length
                // of a word (docs/analysis.md §3).
                for j in a..b.saturating_sub(1).max(a + 1) {
                    let end = (j + 2).min(b);
                    self.finish_word(chars[j..end].iter().map(|&(c, _)| c), word, on_word);
                }
                k += 1;
                continue;
            }
            // The parts between two Han runs (all of them in an identifier without Han),
            // then their joined form when there are two or more.
            let first = k;
            while k < pieces.len() && !is_han_piece(&pieces[k]) {
                let (a, b) = pieces[k];
                self.finish_word(chars[a..b].iter().map(|&(c, _)| c), word, on_word);
                k += 1;
            }
            if k - first >= 2 {
                let joined = pieces[first..k]
                    .iter()
                    .flat_map(|&(a, b)| chars[a..b].iter().map(|&(c, _)| c));
                self.finish_word(joined, word, on_word);
            }
        }
    }

    /// Split one identifier into parts: ranges of `ident` (connectors excluded).
    fn split_parts(
        &self,
        ident: &[(char, Class)],
        pieces: &mut Vec<(usize, usize)>,
        bases: &mut Vec<usize>,
    ) {
        pieces.clear();
        let mut i = 0;
        while i < ident.len() {
            if is_connector(ident[i].0) {
                i += 1;
                continue;
            }
            let start = i;
            while i < ident.len() && !is_connector(ident[i].0) {
                i += 1;
            }
            split_chunk(ident, start, i, pieces, bases);
        }
    }

    /// Fold `chars` into `word`; pass it on unless too short or a stopword.
    #[inline]
    fn finish_word(
        &self,
        chars: impl Iterator<Item = char>,
        word: &mut String,
        on_word: &mut impl FnMut(&str),
    ) {
        word.clear();
        let mut n = 0usize;
        for c in chars {
            word.push(self.table.fold(c));
            n += 1;
        }
        if n < MIN_TOKEN_CHARS || self.stopwords.contains(word.as_str()) {
            return;
        }
        on_word(word);
    }

    /// Stem a word that passed the filters, through the per-thread memo of stems.
    pub(crate) fn stem_memo(&self, word: &str, emit: &mut impl FnMut(&str)) {
        if !is_english_token(word) && !is_russian_token(word) {
            emit(word);
            return;
        }
        // Snowball costs about a microsecond a word: remember stems per thread.
        let done = STEMS
            .try_with(|cell| {
                let Ok(mut memo) = cell.try_borrow_mut() else {
                    return false;
                };
                if let Some(stem) = memo.get(word) {
                    emit(stem);
                    return true;
                }
                let stem = self.stem(word);
                emit(&stem);
                if memo.len() >= STEM_MEMO_LIMIT {
                    memo.clear();
                }
                memo.insert(word.into(), stem.as_ref().into());
                true
            })
            .unwrap_or(false);
        if !done {
            let stemmed = self.stem(word);
            emit(&stemmed);
        }
    }
}

/// Split the chunk `ident[start..end]` (no connectors) at boundaries between consecutive
/// base characters, pushing its pieces.
fn split_chunk(
    ident: &[(char, Class)],
    start: usize,
    end: usize,
    pieces: &mut Vec<(usize, usize)>,
    bases: &mut Vec<usize>,
) {
    bases.clear();
    bases.extend((start..end).filter(|&i| ident[i].1 != Class::Mark));
    let mut piece_start = start;
    for j in 1..bases.len() {
        let (i, p) = (bases[j], bases[j - 1]);
        let (prev, cur) = (ident[p].1, ident[i].1);
        let mut cut =
            (prev == Class::Lower && cur == Class::Upper) || (prev.is_letter() != cur.is_letter());
        if !cut && prev == Class::Upper && cur == Class::Upper && j + 2 < bases.len() {
            // HTTPServer -> HTTP|Server, but PRs and IDs stay whole (one lower-case letter).
            cut = ident[bases[j + 1]].1 == Class::Lower && ident[bases[j + 2]].1 == Class::Lower;
        }
        if !cut && prev.is_letter() && cur.is_letter() {
            let (sp, sc) = (script(ident[p].0), script(ident[i].0));
            cut = sp != sc && sp != 0 && sc != 0;
        }
        if cut {
            pieces.push((piece_start, i));
            piece_start = i;
        }
    }
    pieces.push((piece_start, end));
}

impl Memo {
    /// An empty memo.
    pub fn new() -> Memo {
        Memo::default()
    }

    /// Number of remembered identifiers.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzer() -> Analyzer {
        let table = CharTable::parse(include_str!(
            "../../../../python/toolsurface/data/chars.tsv"
        ))
        .expect("table");
        let en = include_str!("../../../../python/toolsurface/data/stopwords_en.txt");
        let ru = include_str!("../../../../python/toolsurface/data/stopwords_ru.txt");
        Analyzer::new(table, en.lines().chain(ru.lines()))
    }

    fn toks(a: &Analyzer, s: &str) -> Vec<String> {
        a.tokens(s)
    }

    #[test]
    fn payload_is_quoted_text_and_text_after_a_colon() {
        let a = analyzer();
        let spans = |s: &str| {
            let mut out = Vec::new();
            a.payload_spans(s, &mut out);
            out
        };
        assert_eq!(spans("create an issue: search crashes"), [(15, 31)]);
        assert_eq!(spans("post \"deploy done\" in #releases"), [(5, 17)]);
        assert_eq!(spans("«a» b “c” \"d"), [(0, 3), (8, 12)]);
        // A colon needs white space after it (class I aside); a quote closes on its line.
        assert!(spans("run redis:7 at 14:05 via https://x.io").is_empty());
        assert_eq!(spans("note:\u{200b} x"), [(4, 10)]);
        assert!(spans("say \"a\nb\" c").is_empty());
        // A quote opened before the colon still closes after it.
        assert_eq!(spans("a \"b: c\" d"), [(2, 10)]);
        // The closing colon of an emoji shortcode marks no payload; a later colon does.
        assert!(spans("put an :eyes: on it").is_empty());
        assert!(spans("react :+1:\u{200b} now").is_empty());
        assert_eq!(spans(":tada: deploy: done"), [(13, 19)]);
        assert_eq!(spans("fix:eyes: bug"), [(8, 13)]);
        assert!(in_payload(&[(2, 8)], 3) && !in_payload(&[(2, 8)], 2));
        let many: Vec<(usize, usize)> = (0..50).map(|i| (4 * i, 4 * i + 2)).collect();
        for start in 0..210 {
            let naive = many.iter().any(|&(a, b)| a < start && start < b);
            assert_eq!(in_payload(&many, start), naive, "{start}");
        }
        for n in ["231", "1.8.2", "2023-04-15", "1\u{200b}2"] {
            assert!(a.is_number(n), "{n}");
        }
        for n in ["v2", "k8s", "s3", "\u{663}"] {
            assert!(!a.is_number(n), "{n}");
        }
    }

    #[test]
    fn agent_nouns_keep_their_er() {
        let a = analyzer();
        let stems = |words: &[&str]| {
            words
                .iter()
                .map(|w| a.stem(w).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            stems(&["reviewers", "reviewer", "review", "reviews"]),
            ["reviewer", "reviewer", "review", "review"]
        );
        assert_eq!(
            stems(&[
                "containers",
                "contain",
                "contains",
                "users",
                "servers",
                "order"
            ]),
            ["container", "contain", "contain", "user", "server", "order"]
        );
        // Verbs whose `er` is the root's keep Snowball's stem, their inflections with them.
        assert_eq!(
            stems(&[
                "consider",
                "considered",
                "registers",
                "registered",
                "remember"
            ]),
            ["consid", "consid", "regist", "regist", "rememb"]
        );
        assert_eq!(stems(&["ers", "aer", "другие"]), ["er", "aer", "друг"]);
    }

    #[test]
    fn identifiers_split() {
        let a = analyzer();
        assert_eq!(toks(&a, "BrowserOpen"), ["browser", "open", "browseropen"]);
        assert_eq!(toks(&a, "HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(
            toks(&a, "create_pull_request"),
            ["creat", "pull", "request", "createpullrequest"]
        );
        assert_eq!(toks(&a, "list-issues"), ["list", "issu", "listissu"]);
        assert_eq!(toks(&a, "v2Api"), ["api", "v2api"]);
        assert_eq!(toks(&a, "listPRs"), ["list", "prs", "listpr"]);
        assert_eq!(toks(&a, "HTTPSe"), ["httpse"]);
    }

    #[test]
    fn russian_sentence() {
        let a = analyzer();
        assert_eq!(
            toks(&a, "Покажи открытые пулреквесты, пожалуйста!"),
            ["покаж", "открыт", "пулреквест"]
        );
    }

    #[test]
    fn mentions_are_skipped() {
        let a = analyzer();
        assert_eq!(toks(&a, "ask @maria and @oncall-team"), ["ask"]);
        assert_eq!(toks(&a, "mail olga@acme.io now"), ["mail", "olga", "now"]);
        // Class-I characters are removed first; a connector or a mark after `@` ends it.
        assert_eq!(
            toks(&a, "@\u{200B}bob @-carol @\u{301}dave"),
            ["carol", "dave"]
        );
    }

    #[test]
    fn urls_are_skipped() {
        let a = analyzer();
        assert_eq!(
            toks(&a, "grab https://blog.example.com/post/42 as markdown"),
            ["grab", "markdown"]
        );
        // Class-I characters aside; only ASCII white space ends the URL.
        assert_eq!(toks(&a, "https\u{200B}://x.io/a\tthen close"), ["close"]);
        assert_eq!(toks(&a, "see https://x.io\u{A0}next word"), ["see", "word"]);
        assert_eq!(toks(&a, "see ftp:/ /x.y now"), ["see", "ftp", "xy", "now"]);
        assert_eq!(toks(&a, "trailing http://"), ["trail"]);
    }

    #[test]
    fn connectors_and_marks() {
        let a = analyzer();
        // A trailing connector run is not part of the identifier.
        assert_eq!(toks(&a, "foo__ bar"), ["foo", "bar"]);
        // Ignorable characters are removed before identifiers are found.
        assert_eq!(toks(&a, "fo\u{200B}obar"), ["foobar"]);
        // A mark after a connector ends the identifier.
        assert_eq!(toks(&a, "ab_\u{301}cd"), ["ab", "cd"]);
        // Script change splits.
        assert_eq!(toks(&a, "apiключ"), ["api", "ключ", "apiключ"]);
        assert!(toks(&a, "").is_empty());
        assert!(toks(&a, "a b c _ - .").is_empty());
    }

    #[test]
    fn memo_matches_plain() {
        let a = analyzer();
        let text = "getUser get_user getUser HTTPServer Ёлка ёлка";
        let mut sc = TokenScratch::default();
        let mut memo = Memo::new();
        let mut got = Vec::new();
        for _ in 0..2 {
            got.clear();
            a.for_each_token_memo(text, &mut sc, &mut memo, |t| got.push(t.to_string()));
            assert_eq!(got, a.tokens(text));
        }
        let mut buf = TokenBuf::default();
        a.tokens_buf(text, &mut sc, &mut buf);
        assert_eq!(buf.as_slice(), a.tokens(text).as_slice());
        buf.clear();
        a.tokens_buf("one", &mut sc, &mut buf);
        assert_eq!(buf.as_slice(), ["one"]);
    }
}
