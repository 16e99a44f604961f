"""Learned hints: the requests a host taught the registry (kept for import compatibility).

The module lives in :mod:`toolsurface.retrieval.hints.learned`; this path re-exports its names.
"""

from toolsurface.retrieval.hints.learned import (
    LEARNED_CAP,
    LEARNED_FORMAT,
    LEARNED_MIN_SESSIONS,
    LEARNED_QUERY_CHARS,
    LEARNED_VERSION,
    LEARNED_WORD_CAP,
    LearnedFormatError,
    LearnedHints,
    LearnedRequest,
)

__all__ = [
    "LEARNED_CAP",
    "LEARNED_FORMAT",
    "LEARNED_MIN_SESSIONS",
    "LEARNED_QUERY_CHARS",
    "LEARNED_VERSION",
    "LEARNED_WORD_CAP",
    "LearnedFormatError",
    "LearnedHints",
    "LearnedRequest",
]
