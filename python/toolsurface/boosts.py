"""Score boosts over the lexical ranking: a set of tools whose hits are multiplied up.

Two rules make boosts: a service mention (``mentions.py``, ``docs/analysis.md`` §8) and a
question (``questions.py``, §10). A hit's score is its BM25F score times the factor of
every boost whose set holds it. Factors are at least 1, so a boost only raises its own
tools, and the best ``k`` of the boosted ranking are among the best ``k`` of the plain
ranking and the best ``k`` of each boost's tools: a tool outside them keeps, boosted, every
tool it had above it (one in the same sets gains at least as much). The engines search
those few rankings and this module merges them, so both engines give boosts alike.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from toolsurface.models import RetrievalSettings, scoring_args
from toolsurface.questions import is_question
from toolsurface.retrieval.built import _Built

__all__ = ["Boost", "Boosting", "boost_factor", "boosted"]

#: Boost filters kept before the cache starts over.
_BOOST_FILTERS = 256

Hits = tuple[list[int], list[float], bool]


@dataclass(frozen=True)
class Boost:
    """One boost of a search: its tools (admitted ones only) and their score's factor.

    ``key`` says what made it (``("mention", group, ...)``, ``("question",)``), for caching
    the index filter of ``members``.
    """

    key: tuple[str, ...]
    members: frozenset[str]
    factor: float


def boost_factor(name: str, boosts: Sequence[Boost]) -> float:
    """What a hit of ``name`` had its BM25F score multiplied by (1.0 outside every boost)."""
    f = 1.0
    for boost in boosts:
        if name in boost.members:
            f *= boost.factor
    return f


def boosted(
    names: Sequence[str],
    k: int,
    plain: Hits,
    boosts: Sequence[Boost],
    search_in: Callable[[Boost], Hits],
) -> Hits:
    """``plain`` (the best ``k``) with every boost applied, best first, ties by id.

    ``search_in(boost)`` is the best ``k`` of the boost's tools, unboosted.
    """
    if not boosts or k == 0:
        return plain
    ids, scores, fallback = plain
    merged = {i: s * boost_factor(names[i], boosts) for i, s in zip(ids, scores)}
    for boost in boosts:
        b_ids, b_scores, b_fallback = search_in(boost)
        # A fallback's scores are comparable only with another fallback's: the boost's
        # tools fell back while others scored, so they have no main-stage hit to raise.
        if b_fallback != fallback:
            continue
        for i, s in zip(b_ids, b_scores):
            if i not in merged:
                merged[i] = s * boost_factor(names[i], boosts)
    best = sorted(merged.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [i for i, _ in best], [s for _, s in best], fallback


class Boosting:
    """The registry's part that finds a search's boosts and applies them."""

    _lexicon: Any
    _groups_version: int
    #: Filters of a boost's admitted tools, by (generation, learned, groups version, boost
    #: key, admitted set): a run's searches make the same few boosts again.
    _boost_filters: dict[tuple[Any, ...], Any] | None = None
    # The registry's mentions (``mentions.MentionBoost``).
    _mentions_in: Callable[[str, RetrievalSettings], tuple[str, ...]]
    _mention_members: Callable[[Sequence[str], Collection[str] | None], frozenset[str]]

    def _boosts(
        self,
        built: _Built,
        query: str,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
    ) -> tuple[Boost, ...]:
        """The boosts of a search: a mention's, a question's; none at weight 0."""
        found: list[Boost] = []
        if chosen.mention_weight > 0:
            mentioned = self._mentions_in(query, chosen)
            members = self._mention_members(mentioned, admitted) if mentioned else frozenset()
            if members:
                found.append(Boost(("mention", *mentioned), members, 1.0 + chosen.mention_weight))
        if chosen.question_weight > 0 and built.read_only and is_question(query):
            members = built.read_only
            if admitted is not None:
                members = members.intersection(admitted)
            if members:
                found.append(Boost(("question",), members, 1.0 + chosen.question_weight))
        return tuple(found)

    def _boost(
        self,
        built: _Built,
        query: str,
        k: int,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
        boosts: Sequence[Boost],
        plain: Hits,
    ) -> Hits:
        """``plain`` (the best ``k`` admitted) with ``boosts`` applied."""
        weights, b, k1, ew = scoring_args(chosen)

        def search_in(boost: Boost) -> Hits:
            only = self._boost_filter(built, boost, admitted)
            return built.index.search(query, k, weights, b, k1, ew, self._lexicon, only)

        return boosted(built.names, k, plain, boosts, search_in)

    def _boost_filter(self, built: _Built, boost: Boost, admitted: Collection[str] | None) -> Any:
        """The index filter of a boost's tools, kept per boost (an unhashable admitted: not)."""
        try:
            key = (built.generation, built.learned, self._groups_version, boost.key, admitted)
            hash(key)
        except TypeError:
            return built.filter_for(boost.members)
        cache = self._boost_filters
        if cache is None or len(cache) > _BOOST_FILTERS:
            cache = self._boost_filters = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = built.filter_for(boost.members)
        return found
