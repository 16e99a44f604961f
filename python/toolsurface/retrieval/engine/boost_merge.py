"""The merge of a boosted search, the pure engine's (``search/boosted.rs`` is the native one).

A search with boosts ranks the query once per ranking: the plain one (the documents the run
admits) and one per boost (that boost's documents), each with its own fallback. A hit then
scores its BM25F score times the factor of every boost whose set holds it. Factors are at
least 1, so a boost only raises its own documents, and the best ``k`` of the boosted ranking
are among the best ``k`` of those rankings: a document outside them keeps, boosted, every
document it had above it (one in the same sets gains at least as much). docs/analysis.md
§8 and §10 state the rules that make boosts.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Hits", "check_factor", "merge_boosted"]

#: A ranking: document ids and scores, best first, and whether it fell back (both engines).
Hits = tuple[list[int], list[float], bool]


def check_factor(factor: float) -> float:
    """A boost's factor, refused unless finite and at least 1 (as the native engine does)."""
    if not (factor >= 1.0 and factor != float("inf")):
        raise ValueError(f"a boost's factor must be finite and at least 1, got {factor}")
    return factor


def merge_boosted(
    k: int, runs: Sequence[Hits], boosts: Sequence[tuple[frozenset[int], float]]
) -> Hits:
    """``runs[0]`` (plain) and ``runs[1:]`` (each boost's, in order) merged, best ``k`` first.

    A document scores its first ranking's score times the product, in the boosts' order, of
    the factors of the boosts holding it; a boost's ranking counts only when it fell back as
    the plain one did (a fallback's scores compare only with another's). Ties by id.
    """
    fallback = runs[0][2]
    merged: dict[int, float] = {}
    for i, (ids, scores, fell_back) in enumerate(runs):
        if i and fell_back != fallback:
            continue
        for doc, score in zip(ids, scores):
            if doc not in merged:
                f = 1.0
                for members, factor in boosts:
                    if doc in members:
                        f *= factor
                merged[doc] = score * f
    best = sorted(merged.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [d for d, _ in best], [s for _, s in best], fallback
