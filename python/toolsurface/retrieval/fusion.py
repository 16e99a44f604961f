"""Weighted reciprocal rank fusion of the lexical ranking with a host's own rankers.

A host's ranker comes in one of two shapes. toolsurface's own, :class:`HostRanker`, takes
the admitted names: ``rank(query, names, k)``. protocore's, :class:`DocumentRanker`, takes
the admitted tools as documents: ``rank(query, documents, limit)``, each document with
``name``, ``description``, ``search_hint`` and ``parameters``. Which one a ranker is, is read
once per class from the names of its ``rank`` parameters (:func:`takes_documents`).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "RRF_K",
    "DocumentRanker",
    "FusionSettings",
    "HostRanker",
    "RankerFailure",
    "ToolDocument",
    "check_fusion",
    "fuse_hosts",
    "fuse_semantic",
    "reciprocal_rank_fusion",
    "takes_documents",
]

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

    The ``semantic_*``, ``confident_*`` and ``even_weight`` fields shape the fusion with
    the semantic extra's ranking (:func:`fuse_semantic`), which adapts to how sure the
    lexical ranking is: its top hit is *confident* when it leads the second by
    ``confident_margin`` of its score or more. A confident top hit stays first and the
    lexical ranking weighs ``confident_weight``; a flat one weighs ``flat_weight``; the even
    ranking (the same search with every field weighing alike, ``retrieval/even.py``) weighs
    ``even_weight``; the semantic ranking weighs 1, and the English encoder's ranking
    (``retrieval/minilm.py``: of a request read as English, or of another's English gloss,
    ``retrieval/gloss.py``) weighs ``english_weight`` (0 turns it off: nothing is embedded
    for it), all damped by ``semantic_k``; an empty lexical ranking leaves the semantic
    ones alone. The defaults (k 6, margin 0.1, weights 2, 1.5, 1
    and 1.25): the first four are those chosen without the English ranking (docs/quality.md,
    "The even ranking"), so a request it does not rank is fused as before; the English
    weight is the one that loses on none of fourteen request sets with them and gains most
    ("An English encoder beside the multilingual one").
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    k: float = Field(default=6.0, gt=0.0, allow_inf_nan=False)
    lexical_weight: float = Field(default=1.5, ge=0.0, allow_inf_nan=False)
    semantic_k: float = Field(default=6.0, gt=0.0, allow_inf_nan=False)
    confident_margin: float = Field(default=0.1, ge=0.0, allow_inf_nan=False)
    confident_weight: float = Field(default=2.0, ge=0.0, allow_inf_nan=False)
    flat_weight: float = Field(default=1.5, ge=0.0, allow_inf_nan=False)
    even_weight: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    english_weight: float = Field(default=1.25, ge=0.0, allow_inf_nan=False)


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


def lexical_confident(scores: Sequence[float], margin: float) -> bool:
    """Whether the lexical top hit leads the second by ``margin`` of its own score or more.

    A lone hit leads by all of its score; no hit, or a top score of zero, is not confident.
    """
    if not scores or scores[0] <= 0.0:
        return False
    second = scores[1] if len(scores) > 1 else 0.0
    return (scores[0] - second) / scores[0] >= margin


def fuse_semantic(
    lexical: Sequence[str],
    lexical_scores: Sequence[float],
    semantic: Sequence[str],
    how: FusionSettings,
    even: Sequence[str] = (),
    english: Sequence[str] = (),
) -> tuple[list[str], list[float]]:
    """The lexical ranking fused with the even and semantic ones, weighted by its confidence.

    Reciprocal rank fusion (``weight / (semantic_k + rank)``): the lexical ranking weighs
    ``confident_weight`` when its top hit is confident (:func:`lexical_confident`), and that
    hit then stays first; otherwise it weighs ``flat_weight``. The ``even`` ranking (the
    same search with every field weighing alike) weighs ``even_weight``, the semantic one 1,
    the ``english`` one (the English encoder's, of the request or its gloss) ``english_weight``.
    With no lexical hit the semantic rankings are served fused alone, scored the same way.
    Scores never rise down the list (a kept top hit scores at least the next one).

    >>> from toolsurface.retrieval.fusion import FusionSettings, fuse_semantic
    >>> how = FusionSettings()
    >>> fuse_semantic(["a", "b"], [10.0, 2.0], ["c", "b"], how)[0]  # confident: a stays first
    ['a', 'b', 'c']
    >>> fuse_semantic(["a", "b"], [10.0, 9.5], ["b", "c"], how)[0]  # flat: b is in both
    ['b', 'a', 'c']
    >>> fuse_semantic(["a", "b"], [10.0, 9.5], ["c"], how, even=["b"])[0]  # b: two of three
    ['b', 'a', 'c']
    >>> fuse_semantic(["a", "b"], [10.0, 9.5], ["c"], how)[0]  # c: one encoder's alone
    ['a', 'b', 'c']
    >>> fuse_semantic(["a", "b"], [10.0, 9.5], ["c"], how, english=["c"])[0]  # c: both encoders
    ['c', 'a', 'b']
    """
    k = how.semantic_k
    confident = lexical_confident(lexical_scores, how.confident_margin)
    weight = how.confident_weight if confident else how.flat_weight
    rankings, weights = [semantic], [1.0]
    if english and how.english_weight > 0.0:
        rankings.append(english)
        weights.append(how.english_weight)
    fused = (
        reciprocal_rank_fusion([lexical, even, *rankings], k, [weight, how.even_weight, *weights])
        if lexical
        else reciprocal_rank_fusion(rankings, k, weights)
    )
    names = [n for n, _ in fused]
    scores = [s for _, s in fused]
    if confident and names[0] != lexical[0]:
        at = names.index(lexical[0])
        top = max(scores[0], scores[at])
        del names[at], scores[at]
        names.insert(0, lexical[0])
        scores.insert(0, top)
    return names, scores


def check_fusion(fusion: object) -> FusionSettings:
    """``fusion`` itself, if it is ``FusionSettings``; ``TypeError`` otherwise."""
    if not isinstance(fusion, FusionSettings):
        raise TypeError(f"fusion must be FusionSettings, got {type(fusion).__name__}")
    return fusion


@runtime_checkable
class HostRanker(Protocol):
    """A host's own ranker: a query and the admitted names in, names best first out.

    Returning no names declines the request (a model that cannot read its language): the
    lexical ranking is then fused without it, or served as it is when every ranker declines.
    (This was ``IToolRetriever``, a name that stays as a deprecated alias.)
    """

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        """Rank up to ``k`` of ``names`` for ``query``, best first; none to decline."""
        ...


@dataclass(frozen=True, slots=True)
class ToolDocument:
    """A registered tool as a :class:`DocumentRanker` reads it (protocore's document).

    ``parameters`` is the tool's parameter names and descriptions, one a line (the text the
    registry indexes as the parameters field).
    """

    name: str
    description: str
    search_hint: str = ""
    parameters: str = ""


@runtime_checkable
class DocumentRanker(Protocol):
    """protocore's ranker: ``rank(query, documents, limit)`` over :class:`ToolDocument` s.

    Given the admitted tools as documents, it answers with the names of the best ``limit``
    of them, best first; a name outside the documents is ignored, and fewer names or none
    is allowed (none declines, as for a :class:`HostRanker`).
    """

    def rank(self, query: str, documents: Sequence[ToolDocument], limit: int) -> Sequence[str]:
        """Names of the best ``limit`` documents for ``query``, best first."""
        ...


@dataclass(frozen=True)
class RankerFailure:
    """A host ranker that raised, or answered with something that is no list of names.

    ``label`` is what the registry counts it under (its class's qualified name), ``takes``
    the shape it was called in, ``error`` what it raised (or the ``TypeError`` its answer
    made). The search it failed in still answers, without its ranking.
    """

    ranker: object
    label: str
    query: str
    takes: Literal["names", "documents"]
    error: Exception


#: The parameter names that mark protocore's shape: ``rank(query, documents, limit)``.
_DOCUMENT_PARAMETERS = frozenset({"documents", "docs", "tool_documents"})
_SHAPES: dict[type, bool] = {}
_SHAPES_MAX = 1024
_SHAPES_LOCK = threading.Lock()


def _reads_documents(rank: Callable[..., object]) -> bool:
    try:
        parameters = list(inspect.signature(rank).parameters.values())
    except (TypeError, ValueError):  # no signature to read (a builtin): the names shape
        return False
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) < 3:
        return False
    return positional[1] in _DOCUMENT_PARAMETERS or positional[2] == "limit"


def takes_documents(ranker: object) -> bool:
    """Whether ``ranker.rank`` is protocore's ``rank(query, documents, limit)``.

    Read from the names of its parameters: a second one named ``documents`` (or ``docs``),
    or a third named ``limit``, is the documents shape; anything else, a signature that
    cannot be read included, is toolsurface's ``rank(query, names, k)``. Read once per
    class (a ``rank`` set on the instance itself is read each time).

    >>> from toolsurface.retrieval.fusion import takes_documents
    >>> class Protocore:
    ...     def rank(self, query, documents, limit): return []
    >>> class Own:
    ...     def rank(self, query, names, k): return []
    >>> takes_documents(Protocore()), takes_documents(Own())
    (True, False)
    """
    kind = type(ranker)
    own = getattr(ranker, "__dict__", None)
    if own is not None and "rank" in own:
        return _reads_documents(own["rank"])
    found = _SHAPES.get(kind)
    if found is None:
        found = _reads_documents(ranker.rank)  # type: ignore[attr-defined]
        with _SHAPES_LOCK:
            if len(_SHAPES) >= _SHAPES_MAX:
                _SHAPES.clear()
            _SHAPES[kind] = found
    return found


def _ranker_label(ranker: object) -> str:
    """What a ranker's failures are counted under: its class's qualified name."""
    kind = type(ranker)
    return f"{kind.__module__}.{kind.__qualname__}"


def fuse_hosts(
    query: str,
    lexical: list[str],
    hosts: Sequence[HostRanker | DocumentRanker],
    pool: Sequence[str],
    allowed: Collection[str],
    depth: int,
    how: FusionSettings,
    documents: Callable[[], Sequence[ToolDocument]] | None = None,
    on_error: Callable[[RankerFailure], None] | None = None,
) -> tuple[list[str], list[float]] | None:
    """The ``lexical`` ranking fused with each host's ranking of ``pool``, as ``how`` says.

    A :class:`HostRanker` is given ``pool``; a :class:`DocumentRanker` the documents of the
    same tools, which ``documents`` makes (called once, and only when a host takes them).
    A host's names outside ``allowed`` are dropped and its first ``depth`` kept (a name it
    repeats counts at its best place). A host that raises, or answers with a string or
    anything else that is no sequence of names, is logged, handed to ``on_error`` and left
    out; one that returns no names declines. ``None``: every host declined or failed, and
    the lexical ranking stands as it is.
    """
    rankings = [lexical]
    docs: Sequence[ToolDocument] | None = None
    for host in hosts:
        shape: Literal["names", "documents"] = "names"
        try:
            if takes_documents(host):
                shape = "documents"
                if docs is None:
                    docs = documents() if documents is not None else ()
                ranked = host.rank(query, docs, depth)  # type: ignore[arg-type]
            else:
                ranked = host.rank(query, pool, depth)  # type: ignore[arg-type]
            if isinstance(ranked, str | bytes):
                raise TypeError(f"rank returned a {type(ranked).__name__}, not a list of names")
            kept = [n for n in dict.fromkeys(ranked) if n in allowed][:depth]
        except Exception as error:
            _log.exception(
                "toolsurface: host ranker %r (rank(query, %s, ...)) failed; left out",
                host,
                shape,
            )
            if on_error is not None:
                failure = RankerFailure(host, _ranker_label(host), query, shape, error)
                try:
                    on_error(failure)
                except Exception:
                    _log.exception("toolsurface: the host's ranker-error callback failed")
            continue
        if kept:  # none: the host declined this request
            rankings.append(kept)
    if len(rankings) == 1:
        return None
    weights = [how.lexical_weight] + [1.0] * (len(rankings) - 1)
    fused = reciprocal_rank_fusion(rankings, how.k, weights)
    return [n for n, _ in fused], [s for _, s in fused]
