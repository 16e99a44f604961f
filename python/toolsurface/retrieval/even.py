"""The even ranking: the same search with every field weighing alike.

The registry's field weights favour a tool's name, which suits requests that say what to
do in a tool's own words. Requests that describe a situation, name what the parameters ask
for, or need several tools are found better by plain BM25, where a word counts the same in
every field. With the semantic extra on, the even ranking is the third ranking fused
(:func:`toolsurface.retrieval.fusion.fuse_semantic`); docs/quality.md has the figures.
"""

from __future__ import annotations

from functools import lru_cache

from toolsurface.models import FieldValues, RetrievalSettings

__all__ = ["EVEN_B", "EVEN_K1", "even_settings"]

#: Plain BM25's usual length normalisation and saturation (Robertson and Zaragoza, 2009),
#: not tuned here.
EVEN_B = 0.75
EVEN_K1 = 1.5

_ONE = FieldValues(name=1.0, search_hint=1.0, summary=1.0, body=1.0, params=1.0)
_B = FieldValues(name=EVEN_B, search_hint=EVEN_B, summary=EVEN_B, body=EVEN_B, params=EVEN_B)


@lru_cache(maxsize=32)
def even_settings(chosen: RetrievalSettings) -> RetrievalSettings:
    """``chosen`` with every field weighing 1 and plain BM25's ``b`` and ``k1``.

    The same object for equal settings, so the registry's searcher and the index's table
    of saturated weights are made once per value. Expansion, mention, question and learned
    weights stay ``chosen``'s.
    """
    return chosen.model_copy(update={"weights": _ONE, "b": _B, "k1": EVEN_K1})
