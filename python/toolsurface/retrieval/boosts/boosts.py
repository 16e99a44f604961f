"""Score boosts over the lexical ranking: a set of tools whose hits are multiplied up.

Two rules make boosts: a service mention (``mentions.py``, ``docs/analysis.md`` §8) and a
question (``questions.py``, §10). A hit's score is its BM25F score times the factor of
every boost whose set holds it. This module finds a search's boosts and hands them to the
engine's ``search_boosted`` as filters (one analysis of the query, a scan per ranking; the
merge is ``retrieval/engine/boost_merge.py`` in the pure engine, ``search/boosted.rs`` in the
native one, held equal by ``tests/data/mention_vectors.json``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolsurface.models import RetrievalSettings, scoring_args
from toolsurface.retrieval.analysis.questions import is_question
from toolsurface.retrieval.engine.boost_merge import Hits
from toolsurface.retrieval.engine.built import BuiltIndex as _Built

__all__ = ["Boost", "Boosts", "boost_factor"]

#: Boost filters kept before the cache starts over.
_BOOST_FILTERS = 256


@dataclass(frozen=True)
class Boost:
    """One boost of a search: its tools (admitted ones only) and their score's factor.

    ``key`` says what made it (``("mention", group, ...)``, ``("question",)``) and
    ``version`` the groups version read before ``members`` were, for caching the index
    filter of ``members``: a filter is never kept under a newer version than its members'.
    """

    key: tuple[str, ...]
    members: frozenset[str]
    factor: float
    version: int = 0


def boost_factor(name: str, boosts: Sequence[Boost]) -> float:
    """What a hit of ``name`` had its BM25F score multiplied by (1.0 outside every boost)."""
    f = 1.0
    for boost in boosts:
        if name in boost.members:
            f *= boost.factor
    return f


class _Mentions(Protocol):
    """What boosts need of the mentions (``mentions.MentionBoost``)."""

    def mentions_in(
        self, query: str, chosen: RetrievalSettings, built: _Built | None = None
    ) -> tuple[str, ...]: ...

    def members(
        self, mentioned: Sequence[str], admitted: Collection[str] | None
    ) -> frozenset[str]: ...


class _Versioned(Protocol):
    """The groups version, read before a boost's members (see :class:`Boost`)."""

    @property
    def version(self) -> int: ...


class Boosts:
    """A registry's boosts: which a search gets, and the search with them applied.

    Owns the cache of boost filters. ``mentions`` finds a query's mentioned groups and
    their tools, ``groups`` gives the groups version, ``lexicon`` is the registry's.
    """

    def __init__(self, mentions: _Mentions, groups: _Versioned, lexicon: Any) -> None:
        self._mentions = mentions
        self._groups = groups
        self._lexicon = lexicon
        #: Filters of a boost's admitted tools, by (generation, learned, the boost's groups
        #: version, boost key, admitted set): a run's searches make the same few boosts again.
        self._filters: dict[tuple[Any, ...], Any] = {}

    def find(
        self,
        built: _Built,
        query: str,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
    ) -> tuple[Boost, ...]:
        """The boosts of a search: a mention's, a question's; none at weight 0."""
        found: list[Boost] = []
        version = self._groups.version  # read before any members (see ``Boost``)
        if chosen.mention_weight > 0:
            mentions = self._mentions
            mentioned = mentions.mentions_in(query, chosen, built)
            members = mentions.members(mentioned, admitted) if mentioned else frozenset()
            if members:
                factor = 1.0 + chosen.mention_weight
                found.append(Boost(("mention", *mentioned), members, factor, version))
        if chosen.question_weight > 0 and built.read_only and is_question(query):
            members = built.read_only
            if admitted is not None:
                members = members.intersection(admitted)
            if members:
                found.append(Boost(("question",), members, 1.0 + chosen.question_weight, version))
        return tuple(found)

    def search(
        self,
        built: _Built,
        query: str,
        k: int,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
        boosts: Sequence[Boost],
    ) -> Hits:
        """The best ``k`` admitted hits of ``query`` with ``boosts`` applied, one engine call."""
        weights, b, k1, ew = scoring_args(chosen)
        allowed = built.filter_for(admitted) if admitted is not None else None
        pairs = [(self._filter(built, boost, admitted), boost.factor) for boost in boosts]
        return built.index.search_boosted(
            query, k, weights, b, k1, ew, self._lexicon, allowed, pairs
        )

    def _filter(self, built: _Built, boost: Boost, admitted: Collection[str] | None) -> Any:
        """The index filter of a boost's tools, kept per boost (an unhashable admitted: not)."""
        try:
            key = (built.generation, built.learned, boost.version, boost.key, admitted)
            hash(key)
        except TypeError:
            return built.filter_for(boost.members)
        cache = self._filters
        if len(cache) > _BOOST_FILTERS:
            # Replaced, not cleared: a concurrent search may be reading the old one.
            cache = self._filters = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = built.filter_for(boost.members)
        return found
