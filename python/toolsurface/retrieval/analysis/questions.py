"""Questions: a request that asks rather than tells weights up the tools that only read.

The rule is ``docs/analysis.md`` §10. A request is a *question* when a question mark stands
outside its payload (``payload_spans``: a quoted "are you up?" asks nothing) or when its
first word is one of ``data/question_words.txt``: a question word ("what's running in
docker", "какие инциденты открыты") or an imperative of looking ("show", "найди"). A tool
is *read-only* when its server said so (``Tool.read_only``, MCP's ``readOnlyHint``). A
question's read-only hits score ``1 + question_weight`` times their
BM25F score (:class:`~toolsurface.models.RetrievalSettings`), applied like a mention's boost
(``boosts.py``). Why: an asking request names the thing it wants to read, and that thing's
name is shared with the tools that change it ("what's *running* in docker" against
``docker__run_container``).

Hints are the server's word and not checked (the MCP spec: untrusted); a server that marks
every tool read-only gains at most this factor on questions, among the admitted tools only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from toolsurface.retrieval.analysis.analyzer import CharTable, in_payload, payload_spans
from toolsurface.retrieval.resources import char_table_text, read_data_text

__all__ = ["asks", "fold_question_words", "is_question", "question_words"]

#: Question marks: ASCII, full-width, Arabic and Greek (the Greek one is U+037E).
_MARKS = frozenset("?\uff1f\u061f\u037e")
#: An apostrophe inside a word (``what's``, ``who’s``); the typographic one reads as ``'``.
_APOSTROPHES = frozenset("'\u2019")
#: A request is read for a question on its first characters only (what a model writes
#: costs the host microseconds, whatever its length); the native ``QUESTION_MAX_CHARS``.
_MAX_CHARS = 4096
_BASE = frozenset("ULON")


@functools.cache
def _table() -> CharTable:
    """The shared character table, which classifies and folds a request's first word."""
    return CharTable.parse(char_table_text())


def _fold(word: str, table: CharTable) -> str:
    folds = table.folds
    return "".join(chr(folds.get(ord(c), ord(c))) for c in word)


def fold_question_words(words: Iterable[str]) -> frozenset[str]:
    """``words`` (blank ones left out) folded through the character table, ``’`` read as ``'``.

    The native ``QuestionWords::new``: what a request's first word is compared with.
    """
    table = _table()
    return frozenset(_fold(w.strip(), table).replace("\u2019", "'") for w in words if w.strip())


@functools.cache
def question_words() -> frozenset[str]:
    """The bundled question words (``data/question_words.txt``), folded."""
    lines = read_data_text("question_words.txt").splitlines()
    return fold_question_words(w for w in lines if not w.strip().startswith("#"))


def _first_word(text: str, table: CharTable) -> str | None:
    """The first word of ``text`` (class-I characters removed), folded, or ``None``.

    A letter or number, then letters, numbers and marks, and at most one apostrophe followed
    by more of them; the native ``first_word``.
    """
    kind = table.char_class
    i, n = 0, len(text)
    while i < n and kind(ord(text[i])) not in _BASE:
        i += 1
    start = i
    while i < n and kind(ord(text[i])) in "ULONM":
        i += 1
    if i == start:
        return None
    word = text[start:i]
    if i + 1 < n and text[i] in _APOSTROPHES and kind(ord(text[i + 1])) in _BASE:
        j = i + 1
        while j < n and kind(ord(text[j])) in "ULONM":
            j += 1
        word += "'" + text[i + 1 : j]
    return _fold(word, table)


def is_question(query: str) -> bool:
    """Whether ``query`` asks, by the bundled question words (see :func:`asks`).

    >>> is_question("what's running in docker")
    True
    >>> is_question("list the running containers")
    True
    >>> is_question("restart the running containers")
    False
    >>> is_question('post "are you up?" in #general')
    False
    >>> is_question("какие инциденты сейчас открыты в pagerduty?")
    True
    """
    return asks(query, question_words())


def asks(query: str, words: frozenset[str]) -> bool:
    """Whether ``query`` asks: a question mark outside its payload, or a question word first.

    The text is read as the analyser reads it: class-I characters removed, and the first
    word's characters classified and folded through the shared character table, so both
    engines agree on it. ``words`` are folded (:func:`fold_question_words`).
    """
    table = _table()
    kind = table.char_class
    text = "".join(c for c in query[:_MAX_CHARS] if kind(ord(c)) != "I")
    marks = [i for i, c in enumerate(text) if c in _MARKS]
    if marks:
        spans = payload_spans(text)
        starts = [a for a, _ in spans]
        if any(not in_payload(spans, starts, i) for i in marks):
            return True
    first = _first_word(text, table)
    return first is not None and first in words
