"""Text analysis of the pure engine: text in, index terms out (normative spec: docs/analysis.md).

The native engine implements the same steps in Rust; ``tests/data/analysis_vectors.jsonl``
holds the vectors both must pass. Character classes and case folding come from the shared
table ``data/chars.tsv`` rather than from ``unicodedata``, so both engines follow one Unicode
version whatever interpreter or Rust toolchain runs them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]
from snowballstemmer.russian_stemmer import RussianStemmer  # type: ignore[import-untyped]

from toolsurface.retrieval.analysis.function_words import FUNCTION_WORDS
from toolsurface.retrieval.analysis.language import (
    BASE_LANGUAGES,
    DROPS_FUNCTION_WORDS,
    FORM_OTHER,
    FORMS_ALL,
    LANGUAGES,
    LOOKUPS,
    LanguageStemmers,
    Signals,
    is_han,
    letter_language,
    request_form,
    separable_joins,
)
from toolsurface.retrieval.analysis.lexkey import lexicon_key
from toolsurface.retrieval.analysis.snowball import ThreadStemmer

__all__ = [
    "ASK_MARKERS",
    "CONNECTORS",
    "ER_ROOTS",
    "FILE_EXTENSIONS",
    "FUNCTION_WORDS",
    "ISSUE_KEY_SHAPE",
    "MIN_TOKEN_CHARS",
    "SUBJECT_MARKERS",
    "Analyzer",
    "CharTable",
    "payload_spans",
    "shape_of",
]

#: Tokens shorter than this (in code points, after folding) are dropped.
MIN_TOKEN_CHARS = 2
#: Characters that join the parts of one identifier (``create_pull-request.v2``).
CONNECTORS = "_-."
#: Words that open the ask of a request after its context (docs/analysis.md §4): what comes
#: before the first of them, past the request's first word, is what the user tells about,
#: not what they ask for. Each is a sequence of whole identifiers, compared folded.
ASK_MARKERS = ("can you", "could you", "would you", "go ahead and", "можешь", "сможешь")
_ASK_PHRASES = tuple(tuple(m.split(" ")) for m in ASK_MARKERS)
_ASK_WORDS = frozenset(w for p in _ASK_PHRASES for w in p)
_FUNCTION_WORDS = frozenset(FUNCTION_WORDS)


def ask_start(words: Sequence[str]) -> int | None:
    """The position of the first identifier, past the first, where an ask marker starts.

    ``words`` are the request's identifiers, folded ("" for one inside the payload, whose
    words are the message's); None when a marker opens the request.

    >>> ask_start(["green", "go", "ahead", "and", "merge", "it"]), ask_start(["can", "you"])
    (1, None)
    """

    def starts_at(i: int) -> bool:
        return words[i] in _ASK_WORDS and any(
            tuple(words[i : i + len(p)]) == p for p in _ASK_PHRASES
        )

    # A request that opens with its ask has no context, whatever follows.
    if words and starts_at(0):
        return None
    return next((i for i in range(1, len(words)) if starts_at(i)), None)


#: Words that open the subject of a search (docs/analysis.md §4): what follows the first of
#: them, past the request's first word and its ask, is what the items sought are about
#: ("find the notion page about our hiring process"), not the action or its tool. Each is
#: one identifier, compared folded (so ``насчёт`` is written ``насчет``).
SUBJECT_MARKERS = ("about", "mentioning", "regarding", "containing", "про", "насчет")
_SUBJECT_WORDS = frozenset(SUBJECT_MARKERS)


def subject_start(words: Sequence[str], ask: int | None) -> int | None:
    """The position of the first subject marker past the first identifier and the ask.

    ``words`` are the request's identifiers, folded ("" inside the payload); ``ask`` is
    ``ask_start``'s answer. The subject runs from there to the request's end.

    >>> subject_start(["find", "pages", "about", "hiring"], None)
    2
    >>> subject_start(["about", "that", "can", "you", "list", "them"], 2)
    """
    start = 1 if ask is None else ask + 1
    return next((i for i in range(start, len(words)) if words[i] in _SUBJECT_WORDS), None)


def is_path_part(text: str, start: int, end: int) -> bool:
    """Whether the identifier ``text[start:end]`` (class-I characters removed) is a path's part.

    It holds an ASCII lower-case letter, and a ``/`` stands right before it with an ASCII
    letter or digit right before that, or right after it with one right after. A path
    (``platform/api``, ``src/auth/session.ts``; not ``CI/CD``) names what an action is
    given, a repository, a branch or a folder, not the action.

    >>> t = "mrs in platform/api, not CI/CD"
    >>> is_path_part(t, 7, 15), is_path_part(t, 16, 19), is_path_part(t, 25, 27)
    (True, True, False)
    """
    if not any("a" <= c <= "z" for c in text[start:end]):
        return False

    def word(c: str) -> bool:
        return c.isascii() and c.isalnum()

    before = start >= 2 and text[start - 1] == "/" and word(text[start - 2])
    return before or (text[end : end + 1] == "/" and word(text[end + 1 : end + 2] or " "))


#: Endings of English verbs whose ``er`` belongs to the root (``consider``, ``deliver``,
#: ``register``, ``remember``): Snowball strips it as it strips an agent noun's, and their
#: inflections must keep matching them, so ``Analyzer.stem`` leaves them to Snowball.
ER_ROOTS = (
    "sider",
    "liver",
    "cover",
    "gister",
    "member",
    "minister",
    "counter",
    "wonder",
    "wander",
)
#: The extensions that make an identifier a file name (``is_file_name``): the common ones of
#: documents, data, configuration and code. Not ``js``: ``Node.js`` and ``Vue.js`` name
#: products.
FILE_EXTENSIONS = (
    "txt",
    "md",
    "rst",
    "json",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "csv",
    "tsv",
    "sql",
    "log",
    "py",
    "ts",
    "tsx",
    "jsx",
    "go",
    "rs",
    "java",
    "kt",
    "rb",
    "php",
    "c",
    "h",
    "cpp",
    "cs",
    "swift",
    "sh",
    "xml",
    "html",
    "css",
    "env",
    "lock",
    "pdf",
    "doc",
    "docx",
    "xls",
    "xlsx",
    "ppt",
    "pptx",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "zip",
    "gz",
    "tar",
    "tgz",
)

_UPPER, _LOWER, _OTHER, _MARK, _NUMBER, _IGNORE = "U", "L", "O", "M", "N", "I"
_LETTERS = frozenset((_UPPER, _LOWER, _OTHER))
_ENGLISH_TOKEN = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")
_RUSSIAN_TOKEN = re.compile(r"[а-я]+")
_MEMO_LIMIT = 1 << 17
#: The requests whose analysis is kept: the registry reads a request that finds nothing a
#: second time (``has_terms``), and one search may read it for mentions and for its terms.
_ANALYSES_KEPT = 8
#: White space that ends a URL (ASCII only, as in the native engine).
_URL_END = re.compile("[ \t\n\x0b\x0c\r]")


def _script(cp: int) -> int:
    """Return 1 for a Latin letter, 2 for a Cyrillic one, 3 for Han, 0 otherwise."""
    if cp < 0x80 or 0xC0 <= cp <= 0x24F:
        return 1
    if 0x400 <= cp <= 0x4FF:
        return 2
    if is_han(chr(cp)):
        return 3
    return 0


def _tagged(line: str) -> tuple[str, str] | None:
    """The language and word of a stopword line tagged ``<de> der``; None otherwise."""
    if not line.startswith("<") or ">" not in line:
        return None
    code, word = line[1:].split(">", 1)
    word = word.strip()
    return (code, word) if code in LANGUAGES and word else None


def _class_set(ranges: list[tuple[int, int]]) -> str:
    """Render code point ranges as the inside of a regular-expression character class."""
    return "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)


@dataclass(frozen=True)
class CharTable:
    """Character classes and lower-case folds parsed from the shared ``chars.tsv``."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    classes: tuple[str, ...]
    folds: dict[int, int] = field(hash=False)

    @classmethod
    def parse(cls, text: str) -> CharTable:
        """Parse the table's text; a malformed line raises ``ValueError`` naming it."""
        starts: list[int] = []
        ends: list[int] = []
        classes: list[str] = []
        folds: dict[int, int] = {}
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            try:
                if parts[0] == "C" and len(parts) == 4 and parts[3] in "ULOMNI":
                    first, last = int(parts[1], 16), int(parts[2], 16)
                    if first > last or (ends and first <= ends[-1]):
                        raise ValueError("ranges must ascend without overlap")
                    starts.append(first)
                    ends.append(last)
                    classes.append(parts[3])
                elif parts[0] == "F" and len(parts) == 3:
                    folds[int(parts[1], 16)] = int(parts[2], 16)
                else:
                    raise ValueError("expected 'C first last class' or 'F cp folded'")
            except (ValueError, IndexError) as exc:
                raise ValueError(f"chars.tsv line {lineno}: {exc}: {line!r}") from None
        return cls(tuple(starts), tuple(ends), tuple(classes), folds)

    def char_class(self, cp: int) -> str:
        """Class letter of a code point: U, L, O, M, N, I, or S for a separator."""
        i = bisect.bisect_right(self.starts, cp) - 1
        if i >= 0 and cp <= self.ends[i]:
            return self.classes[i]
        return "S"

    def ranges(self, wanted: str) -> list[tuple[int, int]]:
        """Merged code point ranges whose class is one of ``wanted``."""
        out: list[tuple[int, int]] = []
        for first, last, cls in zip(self.starts, self.ends, self.classes):
            if cls in wanted:
                if out and out[-1][1] == first - 1:
                    out[-1] = (out[-1][0], last)
                else:
                    out.append((first, last))
        return out


#: Quote pairs whose inside is a request's payload: opening mark -> closing mark.
_QUOTES = {'"': '"', "\u201c": "\u201d", "\u00ab": "\u00bb"}
_ASCII_SPACE = frozenset(" \t\n\x0b\x0c\r")
#: What can open a payload range: an opening quote or a colon.
_OPENS_PAYLOAD = re.compile('[":\u201c\u00ab]')
#: The characters of an emoji shortcode's name (``:eyes:``, ``:+1:``, ``:white_check_mark:``).
_SHORTCODE_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-")
#: An identifier that is a number (its terms weigh like the payload's).
_NUMBER_IDENT = re.compile(r"[0-9_.-]+")
#: An issue key (docs/analysis.md §4): ``ENG-1423``, ``K8S-7``; ASCII only.
_ISSUE_KEY = re.compile(r"[A-Z][A-Z0-9]{1,9}-[0-9]+")
#: The one shape a lexicon source can name: a query's issue keys expand to its targets.
ISSUE_KEY_SHAPE = "<issue-key>"
_SHAPE_FORM = re.compile(r"<[a-z-]+>")


_FILE_EXTENSIONS = frozenset(FILE_EXTENSIONS)


def is_file_name(ident: str) -> bool:
    """Whether an identifier (class-I characters removed) is a file name, ``notes.txt``.

    Its text after the last ``.`` is one of ``FILE_EXTENSIONS``, ASCII letters in any case.
    A file a request names is an argument's value, weighed like the payload.

    >>> is_file_name("notes.txt"), is_file_name("docker-compose.YML"), is_file_name("node.js")
    (True, True, False)
    """
    _, dot, ext = ident.rpartition(".")
    return bool(dot) and ext.isascii() and ext.lower() in _FILE_EXTENSIONS


def shape_of(source: str) -> str | None:
    """The shape a lexicon source names (``<issue-key>``), or None for an ordinary source.

    A source written ``<`` lower-case ASCII letters and hyphens ``>`` names a shape; only
    ``<issue-key>`` is known, and any other such name is refused, so that a misspelt shape
    is never taken for the words it spells.

    >>> shape_of(" <issue-key> "), shape_of("pull request"), shape_of("<html5>")
    ('<issue-key>', None, None)
    """
    s = source.strip(" \t\n\x0c\r")  # ASCII white space, as the native engine trims
    if not _SHAPE_FORM.fullmatch(s):
        return None
    if s != ISSUE_KEY_SHAPE:
        raise ValueError(f"unknown shape {s} (the known one is {ISSUE_KEY_SHAPE})")
    return s


def payload_spans(text: str) -> list[tuple[int, int]]:
    """Ranges of ``text`` (class-I characters removed) holding a request's payload.

    The inside of a pair of quotes (``"…"``, ``“…”``, ``«…»``; opened while no other is
    open, closed on the same line) and everything after the first colon followed by ASCII
    white space, unless that colon closes an emoji shortcode (``:eyes: on it``). An
    identifier starting strictly inside a range is payload.
    """
    if _OPENS_PAYLOAD.search(text) is None:  # most requests: no quote and no colon at all
        return []
    out: list[tuple[int, int]] = []
    close: str | None = None
    opened = 0
    colon = False
    # Length of the shortcode name read since an opening colon (at the start or after
    # white space), or -1 when no shortcode is open.
    code = -1
    n = len(text)
    for i, c in enumerate(text):
        closes_code = c == ":" and code > 0
        if c == ":" and not closes_code:
            code = 0 if i == 0 or text[i - 1] in _ASCII_SPACE else -1
        elif c in _SHORTCODE_NAME and code >= 0:
            code += 1
        else:
            code = -1
        if c == "\n":
            close = None
        elif (
            c == ":" and not colon and not closes_code and i + 1 < n and text[i + 1] in _ASCII_SPACE
        ):
            colon = True
            out.append((i, n))
        if close is not None:
            if c == close:
                out.append((opened, i))
                close = None
        else:
            close = _QUOTES.get(c)
            opened = i
    return _merge_spans(out)


def _merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, with ranges that overlap as open ranges merged (for a binary search)."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def in_payload(spans: list[tuple[int, int]], starts: list[int], start: int) -> bool:
    """Whether ``start`` is strictly inside one of the sorted, disjoint ``spans``."""
    i = bisect.bisect_left(starts, start)
    return i > 0 and start < spans[i - 1][1]


#: ``Analyzer.query_analysis``'s result: terms, their weights, issue keys' weights, lookups,
#: function-word flags.
_Analysis = tuple[
    list[str], list[float], list[float], list[tuple[tuple[str, int], ...]], list[bool]
]


class Analyzer:
    """Turns text into index terms: identifiers split, folded, filtered and stemmed."""

    def __init__(self, table: CharTable, stopwords: Iterable[str]) -> None:
        self.table = table
        self._fold_map = dict(table.folds)
        self._ignore_map: dict[int, None] = {
            cp: None for first, last in table.ranges(_IGNORE) for cp in range(first, last + 1)
        }
        base = _class_set(table.ranges("ULON"))
        marks = _class_set(table.ranges(_MARK))
        seg = f"[{base}][{base}{marks}]*"
        self._identifier = re.compile(f"{seg}(?:[{re.escape(CONNECTORS)}]+{seg})*")
        self._connector = re.compile(f"[{re.escape(CONNECTORS)}]+")
        stops: set[str] = set()
        #: Folded function word -> the languages whose stopword list has it (§4a).
        self.language_words: dict[str, frozenset[str]] = {}
        for w in stopwords:
            line = w.strip()
            if not line or w.startswith("#"):
                continue
            tag = _tagged(line)
            if tag is None:
                stops.add(self.fold(line))
                continue
            lang, word = tag
            folded = self.fold(word)
            self.language_words[folded] = self.language_words.get(folded, frozenset()) | {lang}
            if lang in BASE_LANGUAGES:
                stops.add(folded)
        self.stopwords = frozenset(stops)
        self._english = ThreadStemmer(EnglishStemmer)
        self._russian = ThreadStemmer(RussianStemmer)
        self._languages = LanguageStemmers()
        self._memo: dict[str, tuple[tuple[str, str], ...]] = {}
        self._signals: dict[str, Signals] = {}
        self._analyses: dict[tuple[str, float], _Analysis] = {}

    def fold(self, text: str) -> str:
        """Lower-case ``text`` code point by code point through the table (ё reads as е)."""
        return text.translate(self._fold_map)

    def tokens(self, text: str) -> list[str]:
        """Index terms of ``text`` in order: parts of each identifier, then its joined form."""
        out: list[str] = []
        for _, _, terms in self._identifiers(text.translate(self._ignore_map)):
            out.extend(stem for _, stem in terms)
        return out

    def lexicon_word(self, lang: str, token: str) -> str | None:
        """The lexicon word of a folded token in ``lang`` (``de:erstell``), or None."""
        return self._languages.lexicon_word(lang, token)

    def lexicon_key(self, text: str, lang: str) -> list[tuple[str, int]]:
        """The key words of a lexicon source tagged ``lang`` (docs/analysis.md §4a).

        Each with its word's form (``LanguageStemmers.form``). A word not of ``lang``'s
        script keys by its lexicon key (``lexkey.py``), as a request's own-stem lookup does,
        and takes every form (``FORMS_ALL``).
        """
        out: list[tuple[str, int]] = []
        for _, _, terms in self._identifiers(text.translate(self._ignore_map)):
            for word, stem in terms:
                if lang in self.language_words.get(word, ()):
                    continue
                lw = self.lexicon_word(lang, word)
                if lw is None:
                    out.append((lexicon_key(word, stem), FORMS_ALL))
                else:
                    out.append((lw, self._languages.form(lang, word)))
        return out

    def signals(self, ident: str) -> Signals:
        """What one identifier (class-I characters removed) says about the request's language."""
        sig = self._signals.get(ident)
        if sig is not None:
            return sig
        sig = Signals()
        letters: set[str] = set()
        for c in ident:
            sig.han |= is_han(c)
            sig.cyrillic |= 0x400 <= ord(c) <= 0x4FF and self.table.char_class(ord(c)) in _LETTERS
            lang = letter_language(self.fold(c))
            if lang is not None:
                letters.add(lang)
        for lang in letters:
            sig.votes[lang] += 1
        for part in self.parts(ident):
            for lang in self.language_words.get(self.fold(part), ()):
                sig.votes[lang] += 1
        if len(self._signals) >= _MEMO_LIMIT:
            self._signals.clear()
        self._signals[ident] = sig
        return sig

    def query_tokens(
        self, text: str, payload_weight: float
    ) -> tuple[list[str], list[float], list[float]]:
        """``query_analysis`` without the lookups and function words."""
        toks, weights, keys, _, _ = self.query_analysis(text, payload_weight)
        return toks, weights, keys

    def query_language(self, text: str) -> str:
        """The language ``text`` is read in, as :meth:`query_analysis` finds it.

        ``Signals.language`` of its identifiers outside the payload: ``en``, ``ru``, ``de``,
        ``es``, ``fr``, ``uk``, ``zh``, or ``latin`` (Latin letters, no one leader of the votes).
        """
        text = text.translate(self._ignore_map)
        spans = payload_spans(text)
        starts = [a for a, _ in spans]
        signals = Signals()
        for start, ident, _ in self._identifiers(text):
            if not in_payload(spans, starts, start):
                signals.add(self.signals(ident))
        return signals.language()

    def query_analysis(
        self, text: str, payload_weight: float
    ) -> tuple[list[str], list[float], list[float], list[tuple[tuple[str, int], ...]], list[bool]]:
        """Index terms of a request, their weights, its issue keys' weights, their lookups.

        ``payload_weight`` for the terms of an identifier starting inside the payload (see
        ``payload_spans``), of a number (ASCII digits and connectors only: ``231``,
        ``1.8.2``, ``2023-04-15``), of a file name (``notes.txt``) or of a path's part
        (``is_path_part``): an argument's value; 1 for the others; the identifiers before
        the request's ask (``ask_start``) and those of its subject (``subject_start``) weigh
        ``payload_weight`` at most. The third list
        has an identifier's weight for each that is an issue key (``ENG-1423``), in order:
        the lexicon's ``<issue-key>`` source expands each. The request's language is
        ``Signals.language`` of its identifiers outside the payload; a request in one of
        ``DROPS_FUNCTION_WORDS`` drops its function words. The fourth list has, per term,
        the words it looks up in the lexicon, in order (docs/analysis.md §4a), each with
        its form (``LanguageStemmers.form``; ``FORM_OTHER`` for a lexicon key): what
        ``LOOKUPS`` lists for the language, the own-stem step being the term's lexicon key
        (``lexkey.py``; a word not of a language's script has no lexicon word in it and
        looks up that key instead), then its fallbacks; in a ``latin`` request a function
        word looks up its lexicon key only, its English reading ("must" is no German
        ``Muster``). The fifth says whether each term's word is a function word
        (``function_words.py``).
        """
        key = (text, payload_weight)
        found = self._analyses.get(key)
        if found is None:
            found = self._analyse(text, payload_weight)
            if len(self._analyses) >= _ANALYSES_KEPT:
                self._analyses = {}
            self._analyses[key] = found
        toks, weights, keys, lookups, function = found
        # Copies: a caller's edit never reaches the next caller of the same request.
        return list(toks), list(weights), list(keys), list(lookups), list(function)

    def _analyse(self, text: str, payload_weight: float) -> _Analysis:
        """``query_analysis`` of a request not among the last ones analysed."""
        text = text.translate(self._ignore_map)
        spans = payload_spans(text)
        starts = [a for a, _ in spans]
        toks: list[str] = []
        words: list[str] = []
        weights: list[float] = []
        keys: list[float] = []
        signals = Signals()
        function: list[bool] = []
        # Per identifier: where its tokens start, the issue keys before it, its folded text.
        idents: list[tuple[int, int, str]] = []
        # Per identifier: its tokens, whether outside the payload, where it ends, its folded
        # text (what a German request's separable verbs are found by).
        clauses: list[tuple[int, int, bool, int, str]] = []
        for start, ident, terms in self._identifiers(text):
            inside = in_payload(spans, starts, start)
            value = (
                inside
                or _NUMBER_IDENT.fullmatch(ident)
                or is_file_name(ident)
                or is_path_part(text, start, start + len(ident))
            )
            w = payload_weight if value else 1.0
            idents.append((len(toks), len(keys), "" if inside else self.fold(ident)))
            end = start + len(ident)
            clauses.append((len(toks), len(toks) + len(terms), not inside, end, idents[-1][2]))
            if not inside:
                signals.add(self.signals(ident))
            toks.extend(stem for _, stem in terms)
            words.extend(word for word, _ in terms)
            function.extend(word in _FUNCTION_WORDS for word, _ in terms)
            weights.extend([w] * len(terms))
            if _ISSUE_KEY.fullmatch(ident):
                keys.append(w)
        # The context before the ask, and the subject after it, weigh as the payload does.
        folded_idents = [folded for _, _, folded in idents]
        ask = ask_start(folded_idents)
        if ask is not None:
            toks_before, keys_before, _ = idents[ask]
            weights[:toks_before] = [min(w, payload_weight) for w in weights[:toks_before]]
            keys[:keys_before] = [min(w, payload_weight) for w in keys[:keys_before]]
        subject = subject_start(folded_idents, ask)
        if subject is not None:
            toks_from, keys_from, _ = idents[subject]
            weights[toks_from:] = [min(w, payload_weight) for w in weights[toks_from:]]
            keys[keys_from:] = [min(w, payload_weight) for w in keys[keys_from:]]
        lang = signals.language()
        kept = list(range(len(toks)))
        if lang in DROPS_FUNCTION_WORDS:
            kept = [i for i, w in enumerate(words) if lang not in self.language_words.get(w, ())]
        steps = LOOKUPS[lang]
        lex_keys = [lexicon_key(w, t) for w, t in zip(words, toks)]
        # A German separable verb's word, made whole again, is looked up first.
        joined = {
            i: (word, request_form(self._languages.form("de", whole), lang))
            for i, whole in (separable_joins(text, words, clauses).items() if lang == "de" else ())
            if (word := self.lexicon_word("de", whole)) is not None
        }

        def lookups(i: int) -> tuple[tuple[str, int], ...]:
            own = (lex_keys[i], FORM_OTHER)
            if lang == "latin" and function[i]:
                # An English function word is English: "must" is no German "Muster".
                return (own,)
            return (
                *((joined[i],) if i in joined else ()),
                *(self._language_word(s, words[i], lang) or own if s else own for s in steps),
                *((w, request_form(f, lang)) for w, f in self._languages.fallbacks(lang, words[i])),
            )

        return (
            [toks[i] for i in kept],
            [weights[i] for i in kept],
            keys,
            [lookups(i) for i in kept],
            [function[i] for i in kept],
        )

    def _language_word(self, lang: str, word: str, request: str) -> tuple[str, int] | None:
        """A folded word's lexicon word in ``lang`` and its form as ``request`` reads it, or None.

        The form is ``request_form``'s: bare counts only in a latin request.
        """
        lw = self.lexicon_word(lang, word)
        return None if lw is None else (lw, request_form(self._languages.form(lang, word), request))

    def _identifiers(self, text: str) -> Iterator[tuple[int, str, tuple[tuple[str, str], ...]]]:
        """Each identifier of ``text`` (class-I characters removed): start, text, terms.

        The terms are (folded word, stem) pairs.
        """
        memo = self._memo
        url_end = -1
        for match in self._identifier.finditer(text):
            # Identifiers that name an argument rather than what is asked are skipped: a URL
            # (from its scheme to the next white space) and a mention or an address's domain.
            start = match.start()
            if start < url_end:
                continue
            if text.startswith("://", match.end()):
                space = _URL_END.search(text, match.end())
                url_end = space.start() if space else len(text)
                continue
            if start and text[start - 1] == "@":
                continue
            ident = match.group()
            terms = memo.get(ident)
            if terms is None:
                terms = self._analyse_identifier(ident)
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                memo[ident] = terms
            yield start, ident, terms

    def parts(self, identifier: str) -> list[str]:
        """Split one identifier at connectors, case changes, digits and script changes."""
        parts: list[str] = []
        for chunk in self._connector.split(identifier):
            if chunk:
                parts.extend(self._split_chunk(chunk))
        return parts

    def _split_chunk(self, chunk: str) -> list[str]:
        classes = [self.table.char_class(ord(c)) for c in chunk]
        bases = [i for i, c in enumerate(classes) if c != _MARK]
        cuts: list[int] = []
        for j in range(1, len(bases)):
            i, p = bases[j], bases[j - 1]
            prev, cur = classes[p], classes[i]
            cut = (prev == _LOWER and cur == _UPPER) or ((prev in _LETTERS) != (cur in _LETTERS))
            if not cut and prev == _UPPER and cur == _UPPER and j + 2 < len(bases):
                # HTTPServer -> HTTP|Server, but PRs and IDs stay whole (one lower-case letter).
                cut = classes[bases[j + 1]] == _LOWER and classes[bases[j + 2]] == _LOWER
            if not cut and prev in _LETTERS and cur in _LETTERS:
                sp, sc = _script(ord(chunk[p])), _script(ord(chunk[i]))
                cut = sp != sc and sp != 0 and sc != 0
            if cut:
                cuts.append(i)
        pieces: list[str] = []
        start = 0
        for cut_at in cuts:
            pieces.append(chunk[start:cut_at])
            start = cut_at
        pieces.append(chunk[start:])
        return pieces

    def _english_stem(self, token: str) -> str:
        """Snowball English, an agent noun keeping its ``er`` (analysis.md §3).

        When the stem has lost a final ``er`` or ``ers`` of ``token`` (longer than that
        ending plus two), the token without the ending stems the same, and its ``-er`` form
        ends with none of ``ER_ROOTS``, the stem is Snowball's plus ``er``: ``reviewers``
        stems to ``reviewer``, apart from ``review``.
        """
        stem = self._english.stem_word(token)
        if stem.endswith("er"):
            return stem
        ending = 3 if token.endswith("ers") else 2 if token.endswith("er") else 0
        if not ending or len(token) <= ending + 2:
            return stem
        er_form = token[: len(token) - ending + 2]
        if er_form.endswith(ER_ROOTS) or self._english.stem_word(token[:-ending]) != stem:
            return stem
        return stem + "er"

    def _analyse_identifier(self, identifier: str) -> tuple[tuple[str, str], ...]:
        raw: list[str] = []
        group: list[str] = []  # the parts since the last Han run
        for part in [*self.parts(identifier), None]:
            if part is not None and not all(is_han(c) for c in part):
                raw.append(part)
                group.append(part)
                continue
            if len(group) >= 2:
                raw.append("".join(group))
            group = []
            if part is not None:
                # A Han run reads as its overlapping pairs (a lone ideograph is too short).
                raw.extend(part[k : k + 2] for k in range(max(len(part) - 1, 1)))
        out: list[tuple[str, str]] = []
        for piece in raw:
            token = self.fold(piece)
            if len(token) < MIN_TOKEN_CHARS or token in self.stopwords:
                continue
            out.append((token, self.stem(token)))
        return tuple(out)

    def lexicon_keys(self, text: str) -> list[str]:
        """The lexicon keys (``lexkey.py``) of ``text``, one per index term of ``tokens``."""
        out: list[str] = []
        for _, _, terms in self._identifiers(text.translate(self._ignore_map)):
            out.extend(lexicon_key(word, stem) for word, stem in terms)
        return out

    def stem(self, token: str) -> str:
        """Stem a folded token by its script: English, Russian, or unchanged."""
        if _ENGLISH_TOKEN.fullmatch(token):
            return self._english_stem(token)
        if _RUSSIAN_TOKEN.fullmatch(token):
            return self._russian.stem_word(token)
        return token
