"""Snowball stemmers that a process's threads can share.

The pure-Python stemmers of ``snowballstemmer`` keep the word they are stemming in the
instance while they work, so a thread switch in the middle of a word lets another thread's
word in: two threads stemming at once got wrong stems or an ``IndexError`` (seen in the
suite's concurrent test on the pure engine). Each thread stems with an instance of its own.
A stem, once found, is kept for any thread: one request looks a word up in several forms,
and the registry may read a request twice (``has_terms`` after a search finding nothing).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["STEM_MEMO_CHARS", "ThreadStemmer"]

#: The most characters of words a stemmer keeps the stems of; past it the memo starts over.
#: A stem is a pure function of its word, so the memo changes no result, only what a
#: request made of many or long words costs the pure engine.
STEM_MEMO_CHARS = 1 << 18


class ThreadStemmer:
    """One Snowball stemmer per thread, made by ``make`` on the thread's first word."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._local = threading.local()
        # Shared by the threads: a dict's get and set are atomic, and a race only stems a
        # word twice. Bounded by ``STEM_MEMO_CHARS`` so that hostile requests cannot grow it.
        self._stems: dict[str, str] = {}
        self._chars = 0

    def memo_chars(self) -> int:
        """The characters of the words whose stems are kept (at most ``STEM_MEMO_CHARS``)."""
        return self._chars

    def stem_word(self, word: str) -> str:
        """``word``'s Snowball stem, from this thread's own stemmer."""
        stem = self._stems.get(word)
        if stem is not None:
            return stem
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = self._make()
        stem = str(stemmer.stemWord(word))
        if self._chars + len(word) > STEM_MEMO_CHARS:
            self._stems = {}
            self._chars = 0
        self._stems[word] = stem
        self._chars += len(word)
        return stem
