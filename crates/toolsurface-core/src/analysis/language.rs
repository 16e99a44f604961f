//! The languages of requests (docs/analysis.md §4a): each request's language, detected from
//! its script and its function words, and the words its lexicon lookups use in that
//! language (a Snowball stem, the Ukrainian ending stripper below, or a Han bigram as it is).
//!
//! The index is analysed as English and Russian (§3); only the lexicon's tagged sources and
//! a request's lookups into them use these stems, so a language is its stopword list, its
//! stemmer and its lexicon entries.

use std::borrow::Cow;

use rust_stemmers::{Algorithm, Stemmer};

/// The languages a request is read in, by code, in the order of [`Lang`].
pub const LANGUAGES: [&str; 7] = ["en", "ru", "de", "es", "fr", "uk", "zh"];

/// Ukrainian inflectional endings the Ukrainian stemmer strips ([`uk_stem`]): noun and
/// adjective case endings, verb infinitive, personal, imperative and past endings. The
/// longest that fits is stripped, so order does not matter.
pub const UK_ENDINGS: [&str; 79] = [
    "ами", "ями", "ові", "еві", "єві", "ого", "ому", "ими", "іми", "ати", "яти", "ити", "іти",
    "ути", "уть", "ють", "ать", "ять", "ить", "іть", "ете", "єте", "ите", "іте", "емо", "ємо",
    "имо", "імо", "йте", "ала", "ало", "али", "ила", "ило", "или", "ах", "ях", "ам", "ям", "ом",
    "ем", "єм", "ою", "ею", "єю", "ий", "ій", "ої", "ів", "їв", "их", "іх", "им", "ім", "ти", "ть",
    "ав", "ив", "а", "я", "о", "е", "є", "и", "і", "ї", "у", "ю", "й", "ь", "ла", "ія", "ії", "ію",
    "ією", "ієм", "іям", "іях", "іями",
];

/// A language of requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Lang {
    /// English: the index's language (no lexicon words of its own).
    #[default]
    En = 0,
    /// Russian: analysed in the index too (no lexicon words of its own).
    Ru = 1,
    /// German (Snowball German).
    De = 2,
    /// Spanish (Snowball Spanish).
    Es = 3,
    /// French (Snowball French).
    Fr = 4,
    /// Ukrainian ([`uk_stem`]).
    Uk = 5,
    /// Chinese (Han bigrams, unstemmed).
    Zh = 6,
    /// A request in Latin letters whose votes have no one leader: English, German, Spanish
    /// or French, unknown which (no code of its own; no lexicon source is tagged with it).
    Latin = 7,
}

impl Lang {
    /// Every language, in [`LANGUAGES`] order.
    pub const ALL: [Lang; 7] = [
        Lang::En,
        Lang::Ru,
        Lang::De,
        Lang::Es,
        Lang::Fr,
        Lang::Uk,
        Lang::Zh,
    ];

    /// Its code (`de`); `latin` for [`Lang::Latin`], which no source is tagged with.
    pub fn code(self) -> &'static str {
        LANGUAGES.get(self as usize).copied().unwrap_or("latin")
    }

    /// The language of a code, if it is one.
    pub fn from_code(code: &str) -> Option<Lang> {
        LANGUAGES
            .iter()
            .position(|&c| c == code)
            .map(|i| Lang::ALL[i])
    }

    /// English and Russian: the languages the index itself is analysed in, whose lexicon
    /// entries are keyed by the index's own stems.
    pub fn is_base(self) -> bool {
        matches!(self, Lang::En | Lang::Ru)
    }

    /// What a token of a request in this language looks up in the lexicon, in order, the
    /// first that is a key word winning (docs/analysis.md §4a): `None` its index stem,
    /// `Some(l)` its lexicon word in `l`. English: the stem. Russian: the stem, then the
    /// Ukrainian word (a short Ukrainian request may show neither a letter nor a function
    /// word of its own). German, Spanish, French, Ukrainian, Chinese: the own word, then the
    /// stem. Latin: the stem, then the German, Spanish and French words.
    pub fn lookups(self) -> &'static [Option<Lang>] {
        match self {
            Lang::En => &[None],
            Lang::Ru => &[None, Some(Lang::Uk)],
            Lang::De => &[Some(Lang::De), None],
            Lang::Es => &[Some(Lang::Es), None],
            Lang::Fr => &[Some(Lang::Fr), None],
            Lang::Uk => &[Some(Lang::Uk), None],
            Lang::Zh => &[Some(Lang::Zh), None],
            Lang::Latin => &[None, Some(Lang::De), Some(Lang::Es), Some(Lang::Fr)],
        }
    }

    /// Whether a request in this language drops its function words: one of German,
    /// Spanish, French, Ukrainian and Chinese (English and Russian ones are every text's
    /// stopwords).
    pub fn drops_function_words(self) -> bool {
        matches!(self, Lang::De | Lang::Es | Lang::Fr | Lang::Uk | Lang::Zh)
    }

    /// This language's bit in a mask of languages.
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Whether `c` is a Han ideograph (CJK Unified Ideographs and their extensions, the
/// compatibility ideographs).
#[inline]
pub fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

/// Whether `c` is in the Cyrillic block (U+0400–U+04FF).
#[inline]
pub fn is_cyrillic(c: char) -> bool {
    ('\u{400}'..='\u{4FF}').contains(&c)
}

/// The language a folded letter marks, if it is one only some of the languages write:
/// `ä ö ü ß` German, `ñ á í ó ú` Spanish, `é ç œ è ê à ù â î ô û ë ï` French, `і ї є ґ`
/// Ukrainian, `ы э ъ` Russian.
pub fn letter_language(c: char) -> Option<Lang> {
    match c {
        'ä' | 'ö' | 'ü' | 'ß' => Some(Lang::De),
        'ñ' | 'á' | 'í' | 'ó' | 'ú' => Some(Lang::Es),
        'é' | 'ç' | 'œ' | 'è' | 'ê' | 'à' | 'ù' | 'â' | 'î' | 'ô' | 'û' | 'ë' | 'ï' => {
            Some(Lang::Fr)
        }
        'і' | 'ї' | 'є' | 'ґ' => Some(Lang::Uk),
        'ы' | 'э' | 'ъ' => Some(Lang::Ru),
        _ => None,
    }
}

/// What one identifier of a request says about its language: per language the number of
/// its parts that are that language's function words plus one when it holds a letter only
/// that language writes ([`letter_language`]), and whether it holds a Han or a Cyrillic
/// letter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// Per language, in [`Lang`] order.
    pub votes: [u16; 7],
    /// A Han ideograph.
    pub han: bool,
    /// A Cyrillic letter.
    pub cyrillic: bool,
}

impl Signals {
    /// Add another identifier's signals.
    pub fn add(&mut self, other: &Signals) {
        for (a, b) in self.votes.iter_mut().zip(other.votes) {
            *a = a.saturating_add(b);
        }
        self.han |= other.han;
        self.cyrillic |= other.cyrillic;
    }

    /// The request's language from the signals of its identifiers outside the payload:
    /// Chinese when one holds a Han ideograph; else, when one holds a Cyrillic letter,
    /// Ukrainian if its votes beat Russian's, else Russian; else the one of German, Spanish
    /// and French with the most votes when they beat English's, else English; but
    /// [`Lang::Latin`] when none of the four has a vote or when English, German, Spanish and
    /// French do not have one leader: a tie says only that the request shares function words
    /// ("in", "a") with English, and Latin tries its words as each language.
    pub fn language(&self) -> Lang {
        let v = |l: Lang| self.votes[l as usize];
        if self.han {
            return Lang::Zh;
        }
        if self.cyrillic {
            return if v(Lang::Uk) > v(Lang::Ru) {
                Lang::Uk
            } else {
                Lang::Ru
            };
        }
        let en = v(Lang::En);
        let others = [Lang::De, Lang::Es, Lang::Fr];
        let top = others.iter().map(|&l| v(l)).max().unwrap_or(0);
        if top == 0 {
            return if en > 0 { Lang::En } else { Lang::Latin };
        }
        if en > top {
            return Lang::En;
        }
        let mut leaders = others.into_iter().filter(|&l| v(l) == top);
        match (leaders.next(), leaders.next()) {
            (Some(l), None) if en < top => l,
            _ => Lang::Latin,
        }
    }
}

/// Whether every character of `token` is Latin (below U+0080 or in U+00C0–U+024F) and one
/// is a letter: what the German, Spanish and French stemmers take.
fn is_latin_word(token: &str) -> bool {
    token
        .chars()
        .all(|c| (c as u32) < 0x80 || ('\u{C0}'..='\u{24F}').contains(&c))
        && token.chars().any(char::is_alphabetic)
}

/// Ukrainian stemming: after the first vowel (the region the ending must lie in), strip a
/// final `ся` or `сь`, then the longest of [`UK_ENDINGS`] that leaves at least two
/// characters, then a final `ь`, then one `н` of a final `нн`.
pub fn uk_stem(word: &str) -> String {
    const VOWELS: &str = "аеиоуюяіїє";
    let mut chars: Vec<char> = word.chars().collect();
    let Some(first_vowel) = chars.iter().position(|&c| VOWELS.contains(c)) else {
        return word.to_string();
    };
    let rv = first_vowel + 1;
    let ends_with = |chars: &[char], end: &str| {
        let n = end.chars().count();
        chars.len() >= n && chars[chars.len() - n..].iter().copied().eq(end.chars())
    };
    for refl in ["ся", "сь"] {
        if ends_with(&chars, refl) && chars.len() - 2 >= rv.max(2) {
            chars.truncate(chars.len() - 2);
            break;
        }
    }
    let mut best = 0usize;
    for end in UK_ENDINGS {
        let n = end.chars().count();
        if n > best && ends_with(&chars, end) && chars.len() - n >= rv.max(2) {
            best = n;
        }
    }
    chars.truncate(chars.len() - best);
    if chars.len() > rv.max(2) && chars.last() == Some(&'ь') {
        chars.pop();
    }
    if chars.len() > rv.max(2) && ends_with(&chars, "нн") {
        chars.pop();
    }
    chars.into_iter().collect()
}

/// German verb particles and prefixes: a word's first part that is one of them makes a
/// prefixed verb (`versuchen`), not a compound, and yields no head ([`compound_heads`]).
pub const COMPOUND_PREFIXES: [&str; 22] = [
    "ver", "ent", "zer", "emp", "miss", "aus", "ein", "auf", "mit", "vor", "nach", "über", "unter",
    "wieder", "zurück", "weiter", "durch", "hinter", "hin", "her", "weg", "los",
];

/// German verb particles a separable verb leaves at the end of its clause (`trag den
/// Termin ein` is `eintragen`, `brich den Lauf ab` `abbrechen`): such a particle is joined
/// to the clause's words again (`query/tokens.rs`, docs/analysis.md §4a).
pub const SEPARABLE_PARTICLES: [&str; 35] = [
    "ab", "an", "auf", "aus", "bei", "ein", "fest", "her", "hin", "los", "mit", "nach", "vor",
    "weg", "zu", "zurück", "zusammen", "hoch", "runter", "rein", "raus", "um", "durch", "weiter",
    "fort", "hinzu", "herunter", "herauf", "heraus", "herein", "hinaus", "hinein", "frei", "rüber",
    "dazu",
];

/// The characters that end a clause after a word (white space between them aside).
pub const CLAUSE_ENDS: [char; 9] = [',', '.', ';', ':', '!', '?', '…', '–', '—'];

/// The white space between a word and what ends its clause: Unicode's White_Space, written
/// out so that both engines read one list whatever their Unicode version. A no-break space
/// (U+00A0, U+202F) or a thin one (U+2009) is as white as a space.
pub const CLAUSE_SPACES: [char; 25] = [
    '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}',
    '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}',
    '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
];

/// Closing brackets between a word and what ends its clause: they close an aside or a
/// bracketed request (`(trag den Termin ein)`), not the clause, and are read past as white
/// space is (`leg den Ordner (für Anna) an` joins `anleg`).
pub const CLOSING_BRACKETS: [char; 3] = [')', ']', '}'];

/// The endings of a German **-er word** ([`LangStemmers::form`]): an agent noun
/// (`Hersteller`), a plural in -er (`Felder`), an adjective's ending (`neuer`), an -ern
/// verb's form (`ändern`, `änder`), with their case endings.
pub const DE_ER_ENDINGS: [&str; 3] = ["er", "ers", "ern"];

/// A word's **form** in German, Spanish or French as its stemmer reads it, one bit each
/// ([`LangStemmers::form`]): other.
pub const FORM_OTHER: u8 = 1;
/// Bare: the stemmer strips nothing.
pub const FORM_BARE: u8 = 2;
/// German -en: an infinitive (`herstellen`).
pub const FORM_EN: u8 = 4;
/// German -er: an agent noun, an -er plural, an adjective's ending (`Hersteller`).
pub const FORM_ER: u8 = 8;
/// Every form: what a key word of no language's form (English, Russian, a shape) takes.
pub const FORMS_ALL: u8 = FORM_OTHER | FORM_BARE | FORM_EN | FORM_ER;

/// Whether a request's word of `form` reads as a key word whose sources have the forms
/// `sources` (docs/analysis.md §4a). A bare word only where a source is bare or a German
/// infinitive (whose imperative is its stem: `zeig`, `herstell` of `stell … her`): an
/// inflected word has no form without its ending (`record` is none of Spanish `recordar`,
/// `must` none of German `Muster`). A German -er word only where a source is no
/// infinitive: an agent noun is a derivation of its verb, not one of its forms
/// (`Hersteller` is not `herstellen`). Any other form anywhere.
pub fn reads_as(sources: u8, form: u8) -> bool {
    match form {
        FORM_ER => sources & !FORM_EN != 0,
        FORM_BARE => sources & (FORM_BARE | FORM_EN) != 0,
        _ => true,
    }
}

/// A word's `form` as a request in `lang` reads it: bare counts only in a Latin request.
/// Only there can a bare word be English ("must", "record"), which has no form in the
/// language; in a request read as the language a bare word is its own, and reads as a
/// source of any form that stems alike (`credencial` as `credenciales`, `conseil` as
/// `conseils`).
pub fn request_form(form: u8, lang: Lang) -> u8 {
    if form == FORM_BARE && lang != Lang::Latin {
        FORM_OTHER
    } else {
        form
    }
}

/// Spanish pronouns an imperative takes at its end (`ábrelo`, `pásamelo`), longest first.
pub const ES_CLITICS: [&str; 26] = [
    "noslos", "noslas", "selos", "selas", "melos", "melas", "telos", "telas", "noslo", "nosla",
    "selo", "sela", "melo", "mela", "telo", "tela", "nos", "les", "los", "las", "me", "te", "se",
    "le", "lo", "la",
];

/// The most letters a compound's head has. The longest German word of the lexicon has 19
/// and a stem keeps all but a few final letters, so a longer tail is never a key word; and
/// each head is stemmed and compared with the ones before, so without a bound one long word
/// of a request (a model may write thousands of letters) cost time in its length squared.
pub const COMPOUND_HEAD_MAX: usize = 32;

/// The tails of a German word that may be its compound's head, longest first: each has
/// four to [`COMPOUND_HEAD_MAX`] letters and leaves a first part of three or more that is
/// none of [`COMPOUND_PREFIXES`] (`ordnerstruktur`: `nerstruktur`, `erstruktur`, ...).
pub fn compound_heads(word: &str) -> Vec<&str> {
    let n = word.chars().count();
    // Cuts at letters `first..=n - 4`: a first part of three or more, a head of four to
    // COMPOUND_HEAD_MAX.
    let first = n.saturating_sub(COMPOUND_HEAD_MAX).max(3);
    word.char_indices()
        .skip(first)
        .take((n + 1).saturating_sub(4).saturating_sub(first))
        .map(|(cut, _)| cut)
        .filter(|&cut| !COMPOUND_PREFIXES.contains(&&word[..cut]))
        .map(|cut| &word[cut..])
        .collect()
}

/// A Spanish imperative without its attached pronouns, unaccented: each reading, one per
/// ending of [`ES_CLITICS`] (longest first) whose rest bears the written accent the
/// pronoun put on the verb and keeps two letters or more (`compártelo`: `compar`,
/// `comparte`; `ponme`: none). The lexicon decides which reading is a word.
pub fn es_without_clitic(word: &str) -> Vec<String> {
    let n = word.chars().count();
    ES_CLITICS
        .iter()
        .filter(|c| word.ends_with(*c) && n - c.chars().count() >= 2)
        .map(|c| &word[..word.len() - c.len()])
        .filter(|rest| rest.chars().any(|c| "áéíóú".contains(c)))
        .map(|rest| {
            rest.chars()
                .map(|c| match c {
                    'á' => 'a',
                    'é' => 'e',
                    'í' => 'i',
                    'ó' => 'o',
                    'ú' => 'u',
                    c => c,
                })
                .collect()
        })
        .collect()
}

/// The stemmers of the languages with lexicon words of their own.
pub struct LangStemmers {
    german: Stemmer,
    spanish: Stemmer,
    french: Stemmer,
}

impl std::fmt::Debug for LangStemmers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LangStemmers")
    }
}

impl Default for LangStemmers {
    fn default() -> Self {
        LangStemmers {
            german: Stemmer::create(Algorithm::German),
            spanish: Stemmer::create(Algorithm::Spanish),
            french: Stemmer::create(Algorithm::French),
        }
    }
}

impl LangStemmers {
    /// The lexicon word of a folded token in `lang` (not English nor Russian):
    /// `code:stem`, the stem by `lang`'s stemmer, or `None` when the token is not of
    /// `lang`'s script (Latin for German, Spanish and French, Cyrillic for Ukrainian,
    /// Han for Chinese), whose lookups use its index stem.
    pub fn lexicon_word(&self, lang: Lang, token: &str) -> Option<String> {
        let stem: Cow<'_, str> = match lang {
            Lang::En | Lang::Ru | Lang::Latin => return None,
            Lang::De | Lang::Es | Lang::Fr if !is_latin_word(token) => return None,
            Lang::De => self.german.stem(token),
            Lang::Es => self.spanish.stem(token),
            Lang::Fr => Cow::Owned(self.french.stem(&french_input(token)).into_owned()),
            Lang::Uk if token.chars().all(is_cyrillic) => Cow::Owned(uk_stem(token)),
            Lang::Zh if token.chars().all(is_han) => Cow::Borrowed(token),
            Lang::Uk | Lang::Zh => return None,
        };
        Some(format!("{}:{stem}", lang.code()))
    }

    /// What a folded token of a request in `lang` looks up when none of its lookups is a
    /// key word (docs/analysis.md §4a), each once (with the form of its first): German, the
    /// lexicon words of its compound heads ([`compound_heads`]), longest first; Spanish,
    /// those of the imperative without its pronouns ([`es_without_clitic`]); Latin, the
    /// German ones then the Spanish ones; else none. Each with its word's form
    /// ([`LangStemmers::form`]).
    pub fn fallbacks(&self, lang: Lang, token: &str) -> Vec<(String, u8)> {
        let mut found: Vec<(String, u8)> = Vec::new();
        if !is_latin_word(token) {
            return found;
        }
        let mut add = |w: String, form: u8| {
            if !found.iter().any(|(f, _)| *f == w) {
                found.push((w, form));
            }
        };
        if matches!(lang, Lang::De | Lang::Latin) {
            for head in compound_heads(token) {
                add(
                    format!("de:{}", self.german.stem(head)),
                    self.form(Lang::De, head),
                );
            }
        }
        if matches!(lang, Lang::Es | Lang::Latin) {
            for bare in es_without_clitic(token) {
                add(
                    format!("es:{}", self.spanish.stem(&bare)),
                    self.form(Lang::Es, &bare),
                );
            }
        }
        found
    }

    /// Whether German `word` ends in `ending` and Snowball German stems it as without it.
    fn de_strips(&self, word: &str, ending: &str) -> bool {
        word.len() > ending.len()
            && word
                .strip_suffix(ending)
                .is_some_and(|base| self.german.stem(word) == self.german.stem(base))
    }

    /// Whether German `word` is an -er word (see [`LangStemmers::form`]).
    fn is_er_word(&self, word: &str) -> bool {
        DE_ER_ENDINGS.iter().any(|e| {
            word.strip_suffix(e)
                .is_some_and(|base| !base.ends_with("en") && self.de_strips(word, e))
        })
    }

    /// The form of a folded token in `lang` (`FORM_*`), as its stemmer reads it. German:
    /// [`FORM_EN`] when it ends in `en` that the stemmer strips (it stems as the word
    /// without it) and the word without it is no -er word (an infinitive, `herstellen`;
    /// `aktualisieren` is the -er word `aktualisier` plus `en`); [`FORM_ER`] when it ends in
    /// one of [`DE_ER_ENDINGS`] that the stemmer strips, the word without it not ending in
    /// `en` (`Hersteller`, `Felder`, `neuer`, `ändern`; `offener` is `offen` inflected).
    /// German, Spanish, French: [`FORM_BARE`] when its stem is the word folded as the
    /// stemmer folds (German umlauts and `ß`, Spanish acute accents, French ë and ï, which
    /// it is given as e and i); else, and in any other language or for a token not of its
    /// script, [`FORM_OTHER`].
    pub fn form(&self, lang: Lang, token: &str) -> u8 {
        let stemmer = match lang {
            Lang::De => &self.german,
            Lang::Es => &self.spanish,
            Lang::Fr => &self.french,
            _ => return FORM_OTHER,
        };
        if !is_latin_word(token) {
            return FORM_OTHER;
        }
        if lang == Lang::De {
            if token
                .strip_suffix("en")
                .is_some_and(|base| self.de_strips(token, "en") && !self.is_er_word(base))
            {
                return FORM_EN;
            }
            if self.is_er_word(token) {
                return FORM_ER;
            }
        }
        let input = if lang == Lang::Fr {
            french_input(token)
        } else {
            Cow::Borrowed(token)
        };
        let stem = stemmer.stem(&input);
        let folded = token.chars().flat_map(|c| stemmer_fold(lang, c));
        if stem.chars().eq(folded) {
            FORM_BARE
        } else {
            FORM_OTHER
        }
    }
}

/// What the French stemmer is given for ë and ï: rust-stemmers and Python's Snowball read
/// a diaeresis differently (`égoïste`: `égoïst` and `égo`), and read the plain vowel alike,
/// so both engines stem the word without it.
fn french_input(token: &str) -> Cow<'_, str> {
    if token.contains(['ë', 'ï']) {
        Cow::Owned(token.replace('ë', "e").replace('ï', "i"))
    } else {
        Cow::Borrowed(token)
    }
}

/// What the stemmer of `lang` folds `c` to before it strips: German umlauts lose their
/// dots and `ß` is `ss`; Spanish acute accents go; French is given ë and ï as e and i
/// ([`french_input`]).
fn stemmer_fold(lang: Lang, c: char) -> impl Iterator<Item = char> {
    let (a, b) = match (lang, c) {
        (Lang::De, 'ä') => ('a', None),
        (Lang::De, 'ö') => ('o', None),
        (Lang::De, 'ü') => ('u', None),
        (Lang::De, 'ß') => ('s', Some('s')),
        (Lang::Es, 'á') => ('a', None),
        (Lang::Es, 'é') => ('e', None),
        (Lang::Es, 'í') => ('i', None),
        (Lang::Es, 'ó') => ('o', None),
        (Lang::Es, 'ú') => ('u', None),
        (Lang::Fr, 'ë') => ('e', None),
        (Lang::Fr, 'ï') => ('i', None),
        _ => (c, None),
    };
    std::iter::once(a).chain(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_heads_and_pronoun_free_imperatives() {
        assert_eq!(
            compound_heads("ordnerstruktur")[..3],
            ["nerstruktur", "erstruktur", "rstruktur"]
        );
        assert_eq!(compound_heads("versuchen"), ["uchen", "chen"]);
        // A long word's heads are its last COMPOUND_HEAD_MAX letters' tails.
        let long = format!("{}struktur", "x".repeat(5_000));
        let heads = compound_heads(&long);
        assert_eq!(heads.len(), COMPOUND_HEAD_MAX - 3);
        assert_eq!(heads[0].chars().count(), COMPOUND_HEAD_MAX);
        assert_eq!(heads.last(), Some(&"ktur"));
        assert_eq!(compound_heads("übersicht"), ["rsicht", "icht"]);
        assert_eq!(es_without_clitic("compártelo"), ["compar", "comparte"]);
        assert!(es_without_clitic("ponme").is_empty());
        let s = LangStemmers::default();
        // "liste" is no bare word: the stemmer strips its `e`.
        assert!(s
            .fallbacks(Lang::De, "projektliste")
            .contains(&("de:list".to_string(), FORM_OTHER)));
        assert!(s.fallbacks(Lang::Fr, "projektliste").is_empty());
    }

    #[test]
    fn ukrainian_inflections_share_a_stem() {
        for group in [
            &["задача", "задачі", "задачу", "задачами", "задачах", "задач"][..],
            &["файл", "файли", "файлів", "файлом", "файлі"],
            &["створи", "створіть", "створити"],
            &["повідомлення", "повідомлень", "повідомленням"],
            &["новий", "нова", "нові", "нового"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| uk_stem(w)).collect();
            assert!(stems.iter().all(|s| s == &stems[0]), "{group:?}: {stems:?}");
        }
        assert_eq!(uk_stem("бд"), "бд");
        assert_eq!(uk_stem("ці"), "ці");
    }

    #[test]
    fn detection_by_script_and_votes() {
        let mut s = Signals::default();
        assert_eq!(s.language(), Lang::Latin);
        s.votes[Lang::De as usize] = 1;
        assert_eq!(s.language(), Lang::De);
        // A tie with English ("aktuelle Uhrzeit in Tokio": "in" is both) says neither.
        s.votes[Lang::En as usize] = 1;
        assert_eq!(s.language(), Lang::Latin);
        s.votes[Lang::En as usize] = 2;
        assert_eq!(s.language(), Lang::En);
        s.votes[Lang::Es as usize] = 1;
        s.votes[Lang::De as usize] = 3;
        assert_eq!(s.language(), Lang::De);
        s.votes[Lang::Fr as usize] = 3;
        assert_eq!(s.language(), Lang::Latin);
        s.cyrillic = true;
        assert_eq!(s.language(), Lang::Ru);
        s.votes[Lang::Uk as usize] = 1;
        assert_eq!(s.language(), Lang::Uk);
        s.han = true;
        assert_eq!(s.language(), Lang::Zh);
    }

    /// An agent noun is no form of its verb, an inflected word has none without its ending:
    /// the forms tell them apart where the stems do not.
    #[test]
    fn forms_tell_apart_what_stems_alike() {
        let st = LangStemmers::default();
        let de = |w: &str| st.form(Lang::De, w);
        for w in ["herstellen", "prüfen", "offen", "schließen", "bilden"] {
            assert_eq!(de(w), FORM_EN, "{w}");
        }
        for w in [
            "hersteller",
            "herstellers",
            "herstellern",
            "felder",
            "neuer",
            "ändern",
            "änder",
            "aktualisier",
            "muster",
        ] {
            assert_eq!(de(w), FORM_ER, "{w}");
        }
        // The -ieren verb is its -er imperative plus `en`; `-ener` is an -en word inflected.
        for w in [
            "aktualisieren",
            "offener",
            "fehlgeschlagener",
            "liste",
            "einstellung",
        ] {
            assert_eq!(de(w), FORM_OTHER, "{w}");
        }
        for w in ["must", "herstell", "lösch", "datei", "termin", "schließ"] {
            assert_eq!(de(w), FORM_BARE, "{w}");
        }
        assert_eq!(st.form(Lang::Es, "record"), FORM_BARE);
        assert_eq!(st.form(Lang::Es, "canción"), FORM_BARE);
        assert_eq!(st.form(Lang::Es, "recordar"), FORM_OTHER);
        assert_eq!(st.form(Lang::Fr, "canal"), FORM_BARE);
        assert_eq!(st.form(Lang::Uk, "файл"), FORM_OTHER);
        assert_eq!(st.form(Lang::De, "файл"), FORM_OTHER);
        // What each form reads as.
        assert!(!reads_as(FORM_EN, FORM_ER));
        assert!(reads_as(FORM_EN | FORM_BARE, FORM_ER));
        assert!(reads_as(FORM_EN, FORM_BARE));
        assert!(!reads_as(FORM_ER | FORM_OTHER, FORM_BARE));
        assert!(reads_as(FORM_EN, FORM_OTHER) && reads_as(FORMS_ALL, FORM_ER));
    }

    #[test]
    fn lexicon_words_by_script() {
        let st = LangStemmers::default();
        assert_eq!(
            st.lexicon_word(Lang::De, "erstellen").as_deref(),
            Some("de:erstell")
        );
        assert_eq!(st.lexicon_word(Lang::De, "файл"), None);
        assert_eq!(st.lexicon_word(Lang::Uk, "pull"), None);
        assert_eq!(
            st.lexicon_word(Lang::Zh, "创建").as_deref(),
            Some("zh:创建")
        );
        assert_eq!(st.lexicon_word(Lang::En, "create"), None);
    }
}
