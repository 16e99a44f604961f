"""The index of one catalogue generation, with its filters and bound searches cached."""

from __future__ import annotations

import functools
import threading
from array import array
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from toolsurface.models import RetrievalSettings, TermContribution, scoring_args
from toolsurface.retrieval.engine.backend import IndexLike, Searcher
from toolsurface.retrieval.engine.ranking import Hits
from toolsurface.retrieval.fields import FIELD_NAMES

__all__ = ["BuiltIndex", "RuleInputs"]

_FILTER_CACHE = 16

#: What a registry's boost rules are made from: every group's member ids back to back (each
#: group's ascending), each group's end among them, and the read-only tools' ids.
RuleInputs = tuple["array[int]", "array[int]", list[int]]


@dataclass
class BuiltIndex:
    """The index of one catalogue generation (the registry, boosts and mentions search it)."""

    generation: int
    names: list[str]
    index: IndexLike
    #: The learned hints' version the index was built from (``learned.LearnedHints``).
    learned: int = 0
    #: The tools whose server said they only read (``Tool.read_only``), for questions.
    read_only: frozenset[str] = frozenset()
    filters: OrderedDict[frozenset[str], Any] = field(default_factory=OrderedDict)
    # Bound searches by settings object (kept alive here, so an id is not reused), each
    # with the boost rules it was bound to.
    searchers: dict[int, tuple[RetrievalSettings, Any, Searcher]] = field(default_factory=dict)
    # The engine's boost rules over this index, by (groups version, mention factor,
    # question factor): see ``retrieval/boosts/boosts.py``.
    rules: dict[tuple[int, float, float], Any] = field(default_factory=dict)
    # What the boost rules are made from, by groups version: the groups' member ids (flat,
    # with each group's end) and the read-only tools' ids. They depend on the names alone,
    # so an index of the same names with other learned texts shares them (``relearned``).
    rule_inputs: dict[int, RuleInputs] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def relearned(self, index: IndexLike, learned: int) -> BuiltIndex:
        """The same tools indexed with the learned hints of version ``learned``.

        The names, ids and what the boost rules are made from are this one's; the filters,
        searches and rules, bound to an index, start empty.
        """
        made = BuiltIndex(
            self.generation,
            self.names,
            index,
            learned=learned,
            read_only=self.read_only,
            rule_inputs=dict(self.rule_inputs),  # the lists are never changed once made
        )
        if "ids" in self.__dict__:  # made already: the same names give the same map
            made.__dict__["ids"] = self.__dict__["ids"]
        return made

    @functools.cached_property
    def ids(self) -> dict[str, int]:
        """Name -> id, made at its first use.

        Filters, fusion over the whole catalogue and explanations use it; plain searches
        never do, and at 100,000 tools it was a twentieth of the build.
        """
        return dict(zip(self.names, range(len(self.names))))

    def filter_for(self, admitted: Collection[str]) -> Any:
        """The engine's filter of the admitted names, cached (the last 16 sets)."""
        key = frozenset(admitted)
        with self.lock:
            found = self.filters.get(key)
            if found is not None:
                self.filters.move_to_end(key)
                return found
        made = self.index.make_filter(sorted(self.ids[n] for n in key if n in self.ids))
        with self.lock:
            self.filters[key] = made
            while len(self.filters) > _FILTER_CACHE:
                self.filters.popitem(last=False)
        return made

    def search(
        self,
        query: str,
        k: int,
        settings: RetrievalSettings,
        lexicon: Any,
        admitted: Collection[str] | None,
    ) -> Hits:
        """The best ``k`` hits of ``query`` (only ``admitted`` ones, if given): ids, scores."""
        allowed = self.filter_for(admitted) if admitted is not None else None
        weights, b, k1, ew = scoring_args(settings)
        return self.index.search(query, k, weights, b, k1, ew, lexicon, allowed)

    def explain(
        self,
        query: str,
        name: str,
        settings: RetrievalSettings,
        lexicon: Any,
        fallback: bool,
        factor: float = 1.0,
    ) -> tuple[TermContribution, ...]:
        """Each term's contribution to the hit of ``name``, per field, times ``factor``.

        ``factor`` is what boosts multiplied the hit's score by, shared out the same way.
        """
        weights, b, k1, ew = scoring_args(settings)
        rows = self.index.explain(query, self.ids[name], weights, b, k1, ew, lexicon, fallback)
        return tuple(
            TermContribution(term, weight, {n: p * factor for n, p in zip(FIELD_NAMES, parts)})
            for term, weight, parts in rows
        )
