"""Russian word forms of a lexicon's sources, derived with pymorphy3's dictionary.

A lexicon lists a Russian source in its dictionary form ("архивировать", "тикет") and relies
on stemming for the rest, but Snowball does not give a word's forms one stem: imperatives
("архивируй"), first persons ("архивирую"), the other aspect ("заархивировать") and many
case forms of loanwords ("графане" beside "графана") stem apart and would find nothing.
This module derives them from pymorphy3's dictionary (OpenCorpora, with guessed paradigms
for words it does not know) once, when a lexicon is built, so no query pays for it and both
engines see the same entries:

- a noun's or an adjective's forms of every case and number;
- a verb's infinitive, finite forms (present or future, past, imperative) and, where the
  dictionary knows the word with the prefix, its other aspect made by "за", "с" or "по"
  ("архивировать" -> "заархивировать"; "смержить" -> "мержить");
- for a phrase that starts with a verb, that verb's forms with the rest kept.

A form becomes an entry with its source's targets only when its index terms are new: not
the source's own, not another source's, not a form an earlier source already claimed, and
of at least ``MIN_STEM`` letters. Participles and gerunds are left out: requests to an
agent almost never use them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["ASPECT_PREFIXES", "GUESSED_VERB_SCORE", "MIN_STEM", "derived_forms", "with_forms"]

#: Index terms shorter than this are too ambiguous to be a generated form's whole key.
MIN_STEM = 4
#: Prefixes that make the perfective of a verb without changing what it means, for the verbs
#: the dictionary knows with them ("за" + "архивировать", "с" + "мержить", "по" + "чистить").
ASPECT_PREFIXES = ("за", "с", "по")
#: A verb the dictionary does not know gets forms only when pymorphy3 is this sure of its
#: paradigm ("задеплоить" 1.0; "смержить" 0.5 guesses "смерживу").
GUESSED_VERB_SCORE = 0.9
INFINITIVE_ENDINGS = ("ть", "ться", "ти", "чь")
#: The shortest infinitive taken as the other aspect: short roots change their meaning with
#: the prefix ("сдать" is not "дать"), longer ones seldom do ("почистить", "чистить").
MIN_PARTNER = 6

_NOMINAL = frozenset({"NOUN", "ADJF"})
_VERBAL = frozenset({"INFN", "VERB"})
_LOCK = threading.Lock()

Tokens = Callable[[str], Sequence[str]]


@functools.cache
def _morph() -> Any:
    """The Russian analyser, loaded once per process (about 0.1 s)."""
    import pymorphy3  # type: ignore[import-untyped]

    return pymorphy3.MorphAnalyzer(lang="ru")


def _is_cyrillic(word: str) -> bool:
    return bool(word) and all("а" <= c <= "я" or c == "ё" for c in word)


def _fold(word: str) -> str:
    return word.lower().replace("ё", "е")


def _lexeme_words(parse: Any, kinds: frozenset[str]) -> list[str]:
    """The words of ``parse``'s lexeme whose part of speech is one of ``kinds``.

    The inclusive imperative ("покажемте") is left out: nobody asks an agent that way.
    """
    return [form.word for form in parse.lexeme if form.tag.POS in kinds and "incl" not in form.tag]


def _dictionary_parse(morph: Any, word: str) -> Any | None:
    """The parse that reads ``word`` as a dictionary form (infinitive, nominative...)."""
    known = morph.word_is_known(word)
    if not known and word.endswith(INFINITIVE_ENDINGS):
        # An unknown infinitive is a verb whatever else pymorphy3 guesses it might be.
        parses = [p for p in morph.parse(word) if p.tag.POS == "INFN"]
    else:
        parses = morph.parse(word)
    for parse in parses:
        pos = parse.tag.POS
        # A guessed verb paradigm is often wrong ("смержить" -> "смерживу"); a guessed noun's
        # is regular enough to keep ("графана" -> "графане").
        if pos == "INFN" and not known and parse.score < GUESSED_VERB_SCORE:
            continue
        dictionary_form = _fold(parse.normal_form) == word and _fold(parse.word) == word
        if (pos in _NOMINAL or pos == "INFN") and dictionary_form:
            return parse
    return None


def _aspect_partners(morph: Any, parse: Any) -> list[Any]:
    """The other-aspect infinitives of a verb that the dictionary itself knows."""
    word = _fold(parse.word)
    found: list[Any] = []
    if "impf" in parse.tag:
        candidates = [prefix + word for prefix in ASPECT_PREFIXES]
        want = "perf"
    else:
        candidates = [word[len(p) :] for p in ASPECT_PREFIXES if word.startswith(p)]
        want = "impf"
    for other in candidates:
        if len(other) < MIN_PARTNER or not morph.word_is_known(other):
            continue
        for p in morph.parse(other):
            if p.tag.POS == "INFN" and want in p.tag and p.normal_form == other:
                found.append(p)
                break
    return found


def _forms_of_word(morph: Any, word: str) -> list[str]:
    """Every form of one dictionary-form word this module derives, in a fixed order."""
    parse = _dictionary_parse(morph, word)
    if parse is None:
        return []
    if parse.tag.POS in _NOMINAL:
        return _lexeme_words(parse, frozenset({parse.tag.POS}))
    words = _lexeme_words(parse, _VERBAL)
    for partner in _aspect_partners(morph, parse):
        words += _lexeme_words(partner, _VERBAL)
    return words


def _forms_of_source(morph: Any, source: str) -> list[str]:
    """The derived forms of a source: a word's own, or a phrase's leading verb's."""
    words = _fold(source).split()
    if not words or not all(_is_cyrillic(w) for w in words):
        return []
    if len(words) == 1:
        return _forms_of_word(morph, words[0])
    head = _dictionary_parse(morph, words[0])
    if head is None or head.tag.POS != "INFN":
        return []
    rest = " ".join(words[1:])
    return [f"{w} {rest}" for w in _forms_of_word(morph, words[0])]


def derived_forms(entries: Iterable[tuple[str, str]], tokens: Tokens) -> list[tuple[str, str]]:
    """New ``(form, targets)`` entries for the Russian sources of ``entries``.

    ``tokens`` is the engine's analyser (text to index terms), so "new" means new to the
    index: a form is kept only if its terms differ from every source's and from every form
    kept before it. The result depends only on ``entries``, the analyser and pymorphy3's
    dictionary, in ``entries``' order.

    >>> from toolsurface.retrieval.engine.backend import backend
    >>> tokens = backend("pure").tokens
    >>> [form for form, _ in derived_forms([("архивировать", "archive")], tokens)][:4]
    ['архивирую', 'архивируем', 'архивируешь', 'архивируете']
    """
    entries = list(entries)
    claimed = {tuple(tokens(source)) for source, _ in entries}
    with _LOCK:  # pymorphy3's analyser keeps caches that are not documented thread-safe
        morph = _morph()
        out: list[tuple[str, str]] = []
        for source, targets in entries:
            if not isinstance(source, str):
                continue  # the lexicon's compiler names the malformed entry
            for form in _forms_of_source(morph, source):
                key = tuple(tokens(form))
                if not key or key in claimed or min(map(len, key)) < MIN_STEM:
                    continue
                claimed.add(key)
                out.append((form, targets))
    return out


def with_forms(entries: Iterable[tuple[str, str]], tokens: Tokens) -> list[tuple[str, str]]:
    """``entries`` followed by their derived forms: what a registry compiles for a host.

    About a third of a millisecond a Russian entry, once, when the registry is made.
    """
    listed = list(entries)
    return listed + derived_forms(listed, tokens)
