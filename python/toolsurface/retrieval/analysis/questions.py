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
import re

from toolsurface.retrieval.analysis.analyzer import in_payload, payload_spans
from toolsurface.retrieval.resources import read_data_text

__all__ = ["is_question", "question_words"]

#: Question marks: ASCII, full-width, Arabic and Greek (the Greek one is U+037E).
_MARKS = re.compile("[?\uff1f\u061f\u037e]")
#: The request's first word: letters, digits and apostrophes (``what's``, ``who’s``).
_FIRST_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
#: A request is read for a question on its first characters only (what a model writes
#: costs the host microseconds, whatever its length).
_MAX_CHARS = 4096


@functools.cache
def question_words() -> frozenset[str]:
    """The bundled question words, case-folded, with ``’`` read as ``'``."""
    words = set()
    for line in read_data_text("question_words.txt").splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.add(word.casefold().replace("\u2019", "'"))
    return frozenset(words)


def is_question(query: str) -> bool:
    """Whether ``query`` asks: a question mark outside its payload, or a question word first.

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
    text = query[:_MAX_CHARS]
    marks = [m.start() for m in _MARKS.finditer(text)]
    if marks:
        spans = payload_spans(text)
        starts = [a for a, _ in spans]
        if any(not in_payload(spans, starts, i) for i in marks):
            return True
    first = _FIRST_WORD.search(text)
    if first is None:
        return False
    return first.group().casefold().replace("\u2019", "'") in question_words()
