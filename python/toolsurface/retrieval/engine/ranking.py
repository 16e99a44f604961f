"""A ranking as both engines return it, and the boosts applied to one.

A boosted ranking (docs/analysis.md §8, §10) scores every hit its BM25F score times the
product, in the boosts' order, of the factors of the boosts whose sets hold it, and keeps
the best ``k``: :func:`boost_factor` is that product, the same IEEE operations in the same
order as the native ``search/boosted.rs``, so both engines give the same scores.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["Hits", "boost_factor", "check_factor"]

#: A ranking: document ids and scores, best first, and whether it fell back (both engines).
Hits = tuple[list[int], list[float], bool]


def check_factor(factor: float) -> float:
    """A boost's factor, refused unless finite and at least 1 (as the native engine does)."""
    if not (factor >= 1.0 and factor != float("inf")):
        raise ValueError(f"a boost's factor must be finite and at least 1, got {factor}")
    return factor


def boost_factor(doc: int, boosts: Sequence[tuple[Collection[int], float]]) -> float:
    """The product of the factors of the boosts holding ``doc``, in their order (1: none)."""
    f = 1.0
    for members, factor in boosts:
        if doc in members:
            f *= factor
    return f
