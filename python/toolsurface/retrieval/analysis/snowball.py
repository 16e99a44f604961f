"""Snowball stemmers that a process's threads can share.

The pure-Python stemmers of ``snowballstemmer`` keep the word they are stemming in the
instance while they work, so a thread switch in the middle of a word lets another thread's
word in: two threads stemming at once got wrong stems or an ``IndexError`` (seen in the
suite's concurrent test on the pure engine). Each thread stems with an instance of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ThreadStemmer"]


class ThreadStemmer:
    """One Snowball stemmer per thread, made by ``make`` on the thread's first word."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._local = threading.local()

    def stem_word(self, word: str) -> str:
        """``word``'s Snowball stem, from this thread's own stemmer."""
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = self._make()
        return str(stemmer.stemWord(word))
