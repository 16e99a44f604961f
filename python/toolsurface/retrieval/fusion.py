"""Weighted reciprocal rank fusion of the lexical ranking with a host's own rankers."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RRF_K", "FusionSettings", "check_fusion", "fuse_hosts", "reciprocal_rank_fusion"]

_log = logging.getLogger("toolsurface")

#: The damping constant of plain reciprocal rank fusion (Cormack et al., 2009).
RRF_K = 60.0


class FusionSettings(BaseModel):
    """How host rankings are fused with the lexical one: ``sum weight / (k + rank)``.

    ``k`` is the damping constant: the smaller, the more a ranking's first places count
    against its later ones. ``lexical_weight`` is the lexical ranking's weight; every host
    ranking weighs 1. The defaults (``k`` 6, lexical weight 1.5) were chosen by 5-fold
    cross-validation on the development queries with all-MiniLM-L6-v2 as the host's ranker
    (docs/quality.md, "Fusing a dense model").
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    k: float = Field(default=6.0, gt=0.0, allow_inf_nan=False)
    lexical_weight: float = Field(default=1.5, ge=0.0, allow_inf_nan=False)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    k: float = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings by ``sum weight / (k + rank)`` (weights default to 1 each).

    Ties go to the earlier ranking, then the better rank in it, then the name.
    """
    if weights is not None and len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else float(weights[which])
        for rank, name in enumerate(ranking, 1):
            scores[name] = scores.get(name, 0.0) + weight / (k + rank)
            first_seen.setdefault(name, (which, rank))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]], item[0]))


def check_fusion(fusion: object) -> FusionSettings:
    """``fusion`` itself, if it is ``FusionSettings``; ``TypeError`` otherwise."""
    if not isinstance(fusion, FusionSettings):
        raise TypeError(f"fusion must be FusionSettings, got {type(fusion).__name__}")
    return fusion


class _Ranker(Protocol):
    """A host's ranker (``registry.IToolRetriever``)."""

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]: ...


def fuse_hosts(
    query: str,
    lexical: list[str],
    hosts: Sequence[_Ranker],
    pool: Sequence[str],
    allowed: Collection[str],
    depth: int,
    how: FusionSettings,
) -> tuple[list[str], list[float]] | None:
    """The ``lexical`` ranking fused with each host's ranking of ``pool``, as ``how`` says.

    A host's names outside ``allowed`` are dropped and its first ``depth`` kept; a host
    that fails is logged and left out, one that returns none declines. ``None``: every
    host declined or failed, and the lexical ranking stands as it is.
    """
    rankings = [lexical]
    for host in hosts:
        try:
            ranked = host.rank(query, pool, depth)
            kept = [n for n in dict.fromkeys(ranked) if n in allowed][:depth]
        except Exception:
            _log.exception("toolsurface: host retriever %r failed; left out", host)
            continue
        if kept:  # none: the host declined this request
            rankings.append(kept)
    if len(rankings) == 1:
        return None
    weights = [how.lexical_weight] + [1.0] * (len(rankings) - 1)
    fused = reciprocal_rank_fusion(rankings, how.k, weights)
    return [n for n, _ in fused], [s for _, s in fused]
