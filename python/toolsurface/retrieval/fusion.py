"""Reciprocal rank fusion of the lexical ranking with a host's own rankers."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RRF_K", "reciprocal_rank_fusion"]

#: The damping constant of reciprocal rank fusion (Cormack et al., 2009).
RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse rankings by ``sum 1 / (k + rank)``; ties go to the earlier ranking, then by name."""
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, name in enumerate(ranking, 1):
            scores[name] = scores.get(name, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(name, (which, rank))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]], item[0]))
