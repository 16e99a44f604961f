"""The languages of requests: detection per request and the lexicon's words in each.

The index is analysed as English and Russian (docs/analysis.md §3); a request in German,
Spanish, French, Ukrainian or Chinese is told apart by its script and function words, drops
its language's function words, and looks its words up in the lexicon's entries tagged with
its language (§4a). The native engine's twin is ``crates/toolsurface-core/src/analysis/
language.rs``; both must give the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from snowballstemmer.french_stemmer import FrenchStemmer  # type: ignore[import-untyped]
from snowballstemmer.german_stemmer import GermanStemmer  # type: ignore[import-untyped]
from snowballstemmer.spanish_stemmer import SpanishStemmer  # type: ignore[import-untyped]

from toolsurface.retrieval.analysis.snowball import ThreadStemmer

__all__ = [
    "BASE_LANGUAGES",
    "CLAUSE_ENDS",
    "CLAUSE_SPACES",
    "CLOSING_BRACKETS",
    "COMPOUND_HEAD_MAX",
    "COMPOUND_PREFIXES",
    "DE_ER_ENDINGS",
    "ES_CLITICS",
    "FORMS_ALL",
    "FORM_BARE",
    "FORM_EN",
    "FORM_ER",
    "FORM_OTHER",
    "LANGUAGES",
    "LOOKUPS",
    "SEPARABLE_PARTICLES",
    "UK_ENDINGS",
    "Signals",
    "compound_heads",
    "ends_clause",
    "es_without_clitic",
    "is_han",
    "language_of_source",
    "letter_language",
    "reads_as",
    "request_form",
    "separable_joins",
    "uk_stem",
]

#: The languages a request is read in, by code, in the native engine's order.
LANGUAGES = ("en", "ru", "de", "es", "fr", "uk", "zh")
#: The languages the index itself is analysed in: their lexicon entries use its stems.
BASE_LANGUAGES = frozenset(("en", "ru"))
#: Ukrainian inflectional endings ``uk_stem`` strips (the longest that fits).
UK_ENDINGS = (
    *("ами", "ями", "ові", "еві", "єві", "ого", "ому", "ими", "іми", "ати", "яти", "ити", "іти"),
    *("ути", "уть", "ють", "ать", "ять", "ить", "іть", "ете", "єте", "ите", "іте", "емо", "ємо"),
    *("имо", "імо", "йте", "ала", "ало", "али", "ила", "ило", "или", "ах", "ях", "ам", "ям", "ом"),
    *("ем", "єм", "ою", "ею", "єю", "ий", "ій", "ої", "ів", "їв", "их", "іх", "им", "ім", "ти"),
    *("ть", "ав", "ив", "а", "я", "о", "е", "є", "и", "і", "ї", "у", "ю", "й", "ь", "ла", "ія"),
    *("ії", "ію", "ією", "ієм", "іям", "іях", "іями"),
)
#: German verb particles and prefixes: a compound's first part that is one of them makes a
#: prefixed verb ("versuchen"), not a compound, and yields no head (``compound_heads``).
COMPOUND_PREFIXES = frozenset(
    (
        *("ver", "ent", "zer", "emp", "miss", "aus", "ein", "auf", "mit", "vor", "nach"),
        *("über", "unter", "wieder", "zurück", "weiter", "durch", "hinter", "hin", "her"),
        *("weg", "los"),
    )
)
#: German verb particles a separable verb leaves at the end of its clause ("trag den Termin
#: ein" is "eintragen", "brich den Lauf ab" "abbrechen"): such a particle is joined to the
#: clause's words again (``separable_joins``).
SEPARABLE_PARTICLES = frozenset(
    (
        *("ab", "an", "auf", "aus", "bei", "ein", "fest", "her", "hin", "los", "mit", "nach"),
        *("vor", "weg", "zu", "zurück", "zusammen", "hoch", "runter", "rein", "raus", "um"),
        *("durch", "weiter", "fort", "hinzu", "herunter", "herauf", "heraus", "herein"),
        *("hinaus", "hinein", "frei", "rüber", "dazu"),
    )
)
#: The characters that end a clause after a word (white space between them aside).
CLAUSE_ENDS = frozenset(",.;:!?…–—")
#: The white space between a word and what ends its clause: Unicode's White_Space, written
#: out (not ``str.isspace``, which holds U+001C–U+001F too) so both engines read one list.
#: A no-break space (U+00A0, U+202F) or a thin one (U+2009) is as white as a space.
CLAUSE_SPACES = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: Closing brackets between a word and what ends its clause: they close an aside or a
#: bracketed request ("(trag den Termin ein)"), not the clause, and are read past as white
#: space is ("leg den Ordner (für Anna) an" joins "anleg").
CLOSING_BRACKETS = frozenset(")]}")
#: The endings of a German **-er word**: an agent noun ("Hersteller"), a plural in -er
#: ("Felder"), an adjective's ending ("neuer"), an -ern verb's form ("ändern", "änder"),
#: with their case endings (``LanguageStemmers.form``).
DE_ER_ENDINGS = ("er", "ers", "ern")
#: A word's **form** in German, Spanish or French as its stemmer reads it, one bit each
#: (``LanguageStemmers.form``): other, bare (the stemmer strips nothing), German -en (an
#: infinitive), German -er (an agent noun, an -er plural, an adjective's ending). A lexicon
#: key word holds its sources' forms, and a request's word reads as it only in a form they
#: take (``reads_as``). A word of no form (English, Russian, a shape) takes them all.
FORM_OTHER, FORM_BARE, FORM_EN, FORM_ER = 1, 2, 4, 8
FORMS_ALL = FORM_OTHER | FORM_BARE | FORM_EN | FORM_ER
#: What the stemmers fold before they strip: a word is bare when its stem is the word so
#: folded (German umlauts and ß, Spanish acute accents; French is given ë and ï as e and i).
_STEMMER_FOLDS: dict[str, dict[int, str]] = {
    "de": {ord("ä"): "a", ord("ö"): "o", ord("ü"): "u", ord("ß"): "ss"},
    "es": {ord(a): b for a, b in zip("áéíóú", "aeiou")},
    "fr": {ord("ë"): "e", ord("ï"): "i"},
}
#: What the French stemmer is given for ë and ï: Python's Snowball and rust-stemmers read
#: a diaeresis differently (``égoïste``: ``égo`` and ``égoïst``), and read the plain vowel
#: alike, so both engines stem the word without it.
_FRENCH_INPUT = str.maketrans(_STEMMER_FOLDS["fr"])
#: Spanish pronouns an imperative takes at its end ("ábrelo", "pásamelo"), longest first.
ES_CLITICS = (
    *("noslos", "noslas", "selos", "selas", "melos", "melas", "telos", "telas", "noslo"),
    *("nosla", "selo", "sela", "melo", "mela", "telo", "tela", "nos", "les", "los", "las"),
    *("me", "te", "se", "le", "lo", "la"),
)
_ES_ACCENTS = str.maketrans("áéíóú", "aeiou")
_COMPOUND_MIN = 4
_COMPOUND_PREFIX_MIN = 3
#: The most letters a compound's head has (the native ``COMPOUND_HEAD_MAX``): no key word
#: is longer, and a request's long word would otherwise cost its length squared.
COMPOUND_HEAD_MAX = 32
#: What a token of a request in each language looks up in the lexicon, in order, the first
#: that is a key word winning: ``None`` its index stem, a code its lexicon word in that
#: language (docs/analysis.md §4a). ``latin``: Latin letters, no one leader of the votes.
LOOKUPS: dict[str, tuple[str | None, ...]] = {
    "en": (None,),
    "ru": (None, "uk"),
    "de": ("de", None),
    "es": ("es", None),
    "fr": ("fr", None),
    "uk": ("uk", None),
    "zh": ("zh", None),
    "latin": (None, "de", "es", "fr"),
}
#: The languages whose requests drop their function words (English and Russian ones are
#: stopwords of every text).
DROPS_FUNCTION_WORDS = frozenset(("de", "es", "fr", "uk", "zh"))
_VOWELS = frozenset("аеиоуюяіїє")
_LETTER_LANGUAGE = {
    **dict.fromkeys("äöüß", "de"),
    **dict.fromkeys("ñáíóú", "es"),
    **dict.fromkeys("éçœèêàùâîôûëï", "fr"),
    **dict.fromkeys("іїєґ", "uk"),
    **dict.fromkeys("ыэъ", "ru"),
}


def is_han(c: str) -> bool:
    """Whether the character ``c`` is a Han ideograph (CJK Unified and compatibility)."""
    cp = ord(c)
    return (
        0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
    )


def letter_language(c: str) -> str | None:
    """The language a folded letter marks when only it writes it (``ß``: ``de``)."""
    return _LETTER_LANGUAGE.get(c)


def uk_stem(word: str) -> str:
    """Ukrainian stemming: strip a reflexive ``ся``/``сь``, the longest ending, ``ь``, ``нн``.

    Every strip stays past the first vowel and leaves at least two characters.

    >>> [uk_stem(w) for w in ("задачами", "файлів", "створіть", "повідомлень")]
    ['задач', 'файл', 'створ', 'повідомлен']
    """
    first = next((i for i, c in enumerate(word) if c in _VOWELS), None)
    if first is None:
        return word
    keep = max(first + 1, 2)
    w = word
    for refl in ("ся", "сь"):
        if w.endswith(refl) and len(w) - 2 >= keep:
            w = w[:-2]
            break
    best = 0
    for end in UK_ENDINGS:
        if len(end) > best and w.endswith(end) and len(w) - len(end) >= keep:
            best = len(end)
    w = w[: len(w) - best]
    if len(w) > keep and w.endswith("ь"):
        w = w[:-1]
    if len(w) > keep and w.endswith("нн"):
        w = w[:-1]
    return w


def _is_latin_word(token: str) -> bool:
    return all(ord(c) < 0x80 or 0xC0 <= ord(c) <= 0x24F for c in token) and any(
        c.isalpha() for c in token
    )


class LanguageStemmers:
    """The lexicon words of tokens in the languages with entries of their own."""

    def __init__(self) -> None:
        self._snowball = {
            "de": ThreadStemmer(GermanStemmer),
            "es": ThreadStemmer(SpanishStemmer),
            "fr": ThreadStemmer(FrenchStemmer),
        }

    def _stem(self, lang: str, token: str) -> str:
        """``token``'s stem by ``lang``'s Snowball stemmer (French: ë and ï as e and i)."""
        if lang == "fr":
            token = token.translate(_FRENCH_INPUT)
        return self._snowball[lang].stem_word(token)

    def lexicon_word(self, lang: str, token: str) -> str | None:
        """``code:stem`` of a folded token, or None when not of ``lang``'s script (or base)."""
        if lang in self._snowball:
            if not _is_latin_word(token):
                return None
            stem = self._stem(lang, token)
        elif lang == "uk" and all(0x400 <= ord(c) <= 0x4FF for c in token):
            stem = uk_stem(token)
        elif lang == "zh" and all(is_han(c) for c in token):
            stem = token
        else:
            return None
        return f"{lang}:{stem}"

    def _de_strips(self, word: str, ending: str) -> bool:
        """Whether ``word`` ends in ``ending`` and German Snowball stems it as without it."""
        german = self._snowball["de"]
        return (
            len(word) > len(ending)
            and word.endswith(ending)
            and german.stem_word(word) == german.stem_word(word[: -len(ending)])
        )

    def _is_er_word(self, word: str) -> bool:
        """Whether a folded German word is an -er word (``form``'s ``FORM_ER``)."""
        return any(
            not word[: -len(e)].endswith("en") and self._de_strips(word, e) for e in DE_ER_ENDINGS
        )

    def form(self, lang: str, token: str) -> int:
        """The form of a folded token in ``lang`` (``FORM_*``), as its stemmer reads it.

        German: ``FORM_EN`` when it ends in ``en`` that the stemmer strips (it stems as the
        word without it) and the word without it is no -er word (an infinitive,
        ``herstellen``; ``aktualisieren`` is the -er word ``aktualisier`` plus ``en``);
        ``FORM_ER`` when it ends in one of ``DE_ER_ENDINGS`` that the stemmer strips, the
        word without it not ending in ``en`` (``Hersteller``, ``Felder``, ``neuer``,
        ``ändern``; ``offener`` is ``offen`` inflected). German, Spanish, French:
        ``FORM_BARE`` when its stem is the word, folded as the stemmer folds; else (and in
        any other language, or for a token not of its script) ``FORM_OTHER``.

        >>> s = LanguageStemmers()
        >>> [s.form("de", w) for w in ("herstellen", "hersteller", "herstell", "offener")]
        [4, 8, 2, 1]
        """
        if lang not in self._snowball or not _is_latin_word(token):
            return FORM_OTHER
        if lang == "de":
            if self._de_strips(token, "en") and not self._is_er_word(token[:-2]):
                return FORM_EN
            if self._is_er_word(token):
                return FORM_ER
        bare = self._stem(lang, token) == token.translate(_STEMMER_FOLDS[lang])
        return FORM_BARE if bare else FORM_OTHER

    def fallbacks(self, lang: str, token: str) -> list[tuple[str, int]]:
        """What a token of a request in ``lang`` looks up when none of its lookups is a key.

        German: the lexicon words of the compound's heads (``compound_heads``), longest
        first; Spanish: those of the imperative without its pronouns (``es_without_clitic``);
        ``latin``: the German ones, then the Spanish ones. Each with its word's form
        (``form``), once (its first).
        """
        found: dict[str, int] = {}
        if not _is_latin_word(token):
            return []
        if lang in ("de", "latin"):
            for h in compound_heads(token):
                found.setdefault(f"de:{self._snowball['de'].stem_word(h)}", self.form("de", h))
        if lang in ("es", "latin"):
            for b in es_without_clitic(token):
                found.setdefault(f"es:{self._snowball['es'].stem_word(b)}", self.form("es", b))
        return list(found.items())


def reads_as(sources: int, form: int) -> bool:
    """Whether a request's word of ``form`` reads as a key word whose sources have ``sources``.

    A bare word only where a source is bare or a German infinitive (whose imperative is its
    stem: ``zeig``, ``herstell`` of "stell … her"): an inflected word has no form without its
    ending ("record" is none of Spanish ``recordar``, "must" none of German ``Muster``). A
    German -er word only where a source is no infinitive: an agent noun is a derivation of
    its verb, not one of its forms (``Hersteller`` is not ``herstellen``). Any other form
    anywhere.

    >>> reads_as(FORM_EN, FORM_ER), reads_as(FORM_EN | FORM_ER, FORM_ER)
    (False, True)
    >>> reads_as(FORM_EN, FORM_BARE), reads_as(FORM_ER, FORM_BARE)
    (True, False)
    """
    if form == FORM_ER:
        return bool(sources & ~FORM_EN)
    if form == FORM_BARE:
        return bool(sources & (FORM_BARE | FORM_EN))
    return True


def request_form(form: int, lang: str) -> int:
    """A word's ``form`` as a request in ``lang`` reads it: bare counts only in a latin one.

    Only there can a bare word be English ("must", "record"), which has no form in the
    language; in a request read as the language a bare word is its own, and reads as a
    source of any form that stems alike (``credencial`` as ``credenciales``).

    >>> request_form(FORM_BARE, "latin") == FORM_BARE, request_form(FORM_BARE, "es") == FORM_OTHER
    (True, True)
    """
    return FORM_OTHER if form == FORM_BARE and lang != "latin" else form


def ends_clause(text: str, end: int) -> bool:
    r"""Whether the word ending at ``end`` of ``text`` ends a clause.

    It does when the next character that is neither white space (``CLAUSE_SPACES``) nor a
    closing bracket (``CLOSING_BRACKETS``) is one of ``CLAUSE_ENDS``, or there is none.
    ``text`` has its class-I characters removed, as a request's analysis has it (the native
    engine skips them instead).

    >>> ends_clause("trag ihn ein, bitte", 12), ends_clause("ein Termin", 3)
    (True, False)
    >>> ends_clause("(trag ihn ein)", 13), ends_clause("trag ihn ein\xa0.", 12)
    (True, True)
    """
    i = end
    while i < len(text) and (text[i] in CLAUSE_SPACES or text[i] in CLOSING_BRACKETS):
        i += 1
    return i == len(text) or text[i] in CLAUSE_ENDS


def separable_joins(
    text: str, words: Sequence[str], idents: Sequence[tuple[int, int, bool, int, str]]
) -> dict[int, str]:
    """The words a German request's separable verbs make: word index -> particle + word.

    ``text`` is the request (class-I characters removed), ``words`` its folded words;
    ``idents`` its identifiers in order, each (first word, end of its words, outside the
    payload, where it ends in ``text``, folded text). A clause runs from the identifier
    after the last one that ended a clause to one that ends it (``ends_clause``); when
    that one is one of ``SEPARABLE_PARTICLES`` outside the payload ("an" among them, a
    stopword with no word of its own), each word of the clause's first two
    identifiers outside the payload (where its verb stands: first in an imperative or a
    question, second in a statement) gets the particle before it: "trag den Termin ein"
    joins "eintrag" and "einden", not "eintermin", and the lexicon says which is a word.

    >>> separable_joins("trag den termin ein", ["trag", "den", "termin", "ein"],
    ...     [(0, 1, True, 4, "trag"), (1, 2, True, 8, "den"), (2, 3, True, 15, "termin"),
    ...      (3, 4, True, 19, "ein")])
    {0: 'eintrag', 1: 'einden'}
    """
    joins: dict[int, str] = {}
    first = 0
    for n, (_, _, outside, end, folded) in enumerate(idents):
        if not ends_clause(text, end):
            continue
        if outside and folded in SEPARABLE_PARTICLES:
            for a, b, out, _, _ in idents[first : min(n, first + 2)]:
                if out:
                    joins.update((i, folded + words[i]) for i in range(a, b))
        first = n + 1
    return joins


def compound_heads(word: str) -> list[str]:
    """The tails of a German word that may be its compound's head, longest first.

    Each leaves a first part of three letters or more that is no verb prefix
    (``COMPOUND_PREFIXES``), and has four to ``COMPOUND_HEAD_MAX`` letters.

    >>> compound_heads("ordnerstruktur")[:2], compound_heads("versuchen")
    (['nerstruktur', 'erstruktur'], ['uchen', 'chen'])
    """
    return [
        word[i:]
        for i in range(
            max(_COMPOUND_PREFIX_MIN, len(word) - COMPOUND_HEAD_MAX), len(word) - _COMPOUND_MIN + 1
        )
        if word[:i] not in COMPOUND_PREFIXES
    ]


def es_without_clitic(word: str) -> list[str]:
    """A Spanish imperative without its attached pronouns, unaccented: each reading.

    One per ending of ``ES_CLITICS`` (longest first) whose rest bears the written accent
    the pronoun put on the verb and keeps two letters or more: ``compártelo`` is
    ``compar`` + ``telo`` or ``comparte`` + ``lo``; the lexicon decides.

    >>> es_without_clitic("compártelo"), es_without_clitic("ponme"), es_without_clitic("male")
    (['compar', 'comparte'], [], [])
    """
    return [
        word[: -len(clitic)].translate(_ES_ACCENTS)
        for clitic in ES_CLITICS
        if word.endswith(clitic)
        and len(word) - len(clitic) >= 2
        and any(c in "áéíóú" for c in word[: -len(clitic)])
    ]


@dataclass
class Signals:
    """What a request's identifiers say about its language: votes, Han, Cyrillic."""

    votes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LANGUAGES, 0))
    han: bool = False
    cyrillic: bool = False

    def add(self, other: Signals) -> None:
        """Add another identifier's signals."""
        for lang, n in other.votes.items():
            self.votes[lang] += n
        self.han |= other.han
        self.cyrillic |= other.cyrillic

    def language(self) -> str:
        """Chinese with Han; Cyrillic: Ukrainian over Russian on votes; else de/es/fr over en.

        ``latin`` when none of en, de, es and fr has a vote, or they have no one leader: a
        tie with English says only that the request shares function words with it ("in",
        "a"), and a request read as ``latin`` tries its words as each language.

        >>> s = Signals(); s.votes["de"] = 1; s.language()
        'de'
        >>> s.votes["en"] = 1; s.language()
        'latin'
        """
        if self.han:
            return "zh"
        if self.cyrillic:
            return "uk" if self.votes["uk"] > self.votes["ru"] else "ru"
        en = self.votes["en"]
        top = max(self.votes[lang] for lang in ("de", "es", "fr"))
        if top == 0:
            return "en" if en else "latin"
        if en > top:
            return "en"
        leaders = [lang for lang in ("de", "es", "fr") if self.votes[lang] == top]
        return leaders[0] if en < top and len(leaders) == 1 else "latin"


def language_of_source(source: str) -> tuple[str, str] | None:
    """The language a lexicon source is tagged with (``<de> datei``) and its words.

    None for an untagged source; an unknown language raises ``ValueError``.

    >>> language_of_source("<de> neue datei"), language_of_source("pull request")
    (('de', ' neue datei'), None)
    """
    s = source.strip(" \t\n\x0c\r")  # ASCII white space, as the native engine trims
    if (
        len(s) < 5
        or s[0] != "<"
        or s[3] != ">"
        or not all("a" <= c <= "z" for c in s[1:3])
        or s[4] not in " \t\n\x0c\r"
    ):
        return None
    if s[1:3] not in LANGUAGES:
        raise ValueError(f"unknown language {s[:4]} (the known ones are {' '.join(LANGUAGES)})")
    return s[1:3], s[4:]
