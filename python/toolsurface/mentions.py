"""Service mentions: a query that names a group (its name or an alias) weights its tools up.

The rule is ``docs/analysis.md`` §8. A declared group's name and aliases are analysed by
the registry's engine; a group is *mentioned* when every index term of one of them is
among the query's terms (its own tokens and the lexicon's expansions, any weight, so
"в слаке" mentions ``slack`` through the lexicon's "слак"). Every hit of a mentioned
group's tools has its BM25F score multiplied by ``1 + mention_weight``
(:class:`~toolsurface.models.RetrievalSettings`); nothing else moves.

The boost is worked out over the engine's own searches, so both engines give it alike:
the best ``k`` of the boosted ranking are among the best ``k`` of the plain ranking and the
best ``k`` of the mentioned groups' admitted tools (a boost only raises those tools, so a
tool outside them keeps every tool it had above it), and the two are merged. Only admitted
tools are searched, so only they are ever affected.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from typing import Any

from toolsurface.groups import MAX_ALIAS_CHARS, MAX_ALIASES, ToolGroup
from toolsurface.models import RetrievalSettings, scoring_args
from toolsurface.retrieval.backend import Backend
from toolsurface.retrieval.built import _Built
from toolsurface.retrieval.fields import clean_text

__all__ = ["AliasTable", "MentionBoost", "server_aliases"]

#: A query is read for mentions on the same first characters the search analyses.
_QUERY_MAX_CHARS = 4096
#: Mention filters kept before the cache starts over.
_MENTION_FILTERS = 256

Hits = tuple[list[int], list[float], bool]


class AliasTable:
    """The analysed names and aliases of one groups version; never mutated.

    ``first`` maps the first index term of each name or alias to the (group, all its terms)
    pairs that start with it, so a query is checked against the aliases its terms can begin.
    """

    __slots__ = ("first", "version")

    def __init__(
        self, version: int, groups: Sequence[ToolGroup], tokens: Callable[[str], list[str]]
    ) -> None:
        first: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for g in groups:
            for text in (g.name, *g.aliases):
                terms = tokens(text)
                if terms:
                    entry = (g.name, frozenset(terms))
                    bucket = first.setdefault(terms[0], [])
                    if entry not in bucket:
                        bucket.append(entry)
        self.version = version
        self.first = first

    def match(self, terms: Collection[str]) -> tuple[str, ...]:
        """The groups mentioned by a query of these terms, in first-mention order."""
        found: dict[str, None] = {}
        first = self.first
        for term in terms:
            for group, needed in first.get(term, ()):
                if group not in found and needed.issubset(terms):
                    found[group] = None
        return tuple(found)


class MentionBoost:
    """The registry's part that finds mentions and boosts the mentioned groups' hits."""

    _lock: threading.RLock
    _backend: Backend
    _groups_version: int
    _group_list: tuple[ToolGroup, ...]
    _lexicon: Any
    _aliases: AliasTable | None = None
    #: Filters of the mentioned groups' admitted tools, by (generation, groups version,
    #: groups mentioned, admitted set): a run's searches mention the same few groups again.
    _mention_filters: dict[tuple[Any, ...], Any] | None = None
    settings: RetrievalSettings
    # The registry's current index and membership's group members.
    _current: Callable[[], _Built]
    group_members: Callable[[str], tuple[str, ...]]

    def _alias_table(self) -> AliasTable:
        table = self._aliases
        if table is not None and table.version == self._groups_version:
            return table
        with self._lock:
            version, groups = self._groups_version, self._group_list
        made = AliasTable(version, groups, self._backend.tokens)
        self._aliases = made
        return made

    def mentioned_groups(self, query: str, settings: RetrievalSettings | None = None) -> list[str]:
        """The declared groups ``query`` mentions by name or alias (``docs/analysis.md`` §8).

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="atlassian__confluence_search", description="Search Confluence pages."),
        ...     Tool(
        ...         name="aws-eks__search_troubleshoot_guide",
        ...         description="Search the EKS troubleshooting guide for a runbook.",
        ...     ),
        ... ])
        >>> query = "look up the release runbook in confluence"
        >>> [h.name for h in registry.search(query)]
        ['aws-eks__search_troubleshoot_guide', 'atlassian__confluence_search']
        >>> _ = registry.declare_group("atlassian", prefix="atlassian__", aliases=["confluence"])
        >>> registry.mentioned_groups(query)
        ['atlassian']
        >>> [h.name for h in registry.search(query)]
        ['atlassian__confluence_search', 'aws-eks__search_troubleshoot_guide']
        """
        chosen = settings or self.settings
        return list(self._mentions_in(query, chosen))

    def _boosted_mentions(self, query: str, chosen: RetrievalSettings) -> tuple[str, ...]:
        """The mentions a search boosts: none at all, unanalysed, with the weight at 0."""
        return () if chosen.mention_weight == 0 else self._mentions_in(query, chosen)

    def _mentions_in(self, query: str, chosen: RetrievalSettings) -> tuple[str, ...]:
        table = self._alias_table()
        if not table.first:
            return ()
        text = clean_text(query[:_QUERY_MAX_CHARS])
        terms = self._current().index.query_terms(text, self._lexicon, chosen.expansion_weight)
        return table.match({t for t, _ in terms})

    def _mention_members(
        self, mentioned: Sequence[str], admitted: Collection[str] | None
    ) -> frozenset[str]:
        members: set[str] = set()
        for g in mentioned:
            members.update(self.group_members(g))
        if admitted is not None:
            members.intersection_update(admitted)
        return frozenset(members)

    def _boost(
        self,
        built: _Built,
        query: str,
        k: int,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
        mentioned: Sequence[str],
        plain: Hits,
    ) -> Hits:
        """``plain`` (the best ``k`` admitted) with the mentioned groups' hits boosted."""
        members = self._mention_members(mentioned, admitted)
        if not members or k == 0:
            return plain
        weights, b, k1, ew = scoring_args(chosen)
        only = self._mention_filter(built, mentioned, admitted, members)
        ids, scores, fallback = plain
        m_ids, m_scores, m_fallback = built.index.search(
            query, k, weights, b, k1, ew, self._lexicon, only
        )
        factor = 1.0 + chosen.mention_weight
        names = built.names
        merged = {i: (s * factor if names[i] in members else s) for i, s in zip(ids, scores)}
        # A fallback's scores are comparable only with another fallback's: the mentioned
        # tools fell back while others scored, so they have no main-stage hit to boost.
        if m_fallback == fallback:
            for i, s in zip(m_ids, m_scores):
                merged[i] = s * factor
        best = sorted(merged.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [i for i, _ in best], [s for _, s in best], fallback

    def _mention_filter(
        self,
        built: _Built,
        mentioned: Sequence[str],
        admitted: Collection[str] | None,
        members: frozenset[str],
    ) -> Any:
        """The index filter of ``members``, kept per mention (an unhashable admitted: not)."""
        try:
            key = (
                built.generation,
                built.learned,
                self._groups_version,
                tuple(mentioned),
                admitted,
            )
            hash(key)
        except TypeError:
            return built.filter_for(members)
        cache = self._mention_filters
        if cache is None or len(cache) > _MENTION_FILTERS:
            cache = self._mention_filters = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = built.filter_for(members)
        return found

    def _boost_factor(
        self, name: str, chosen: RetrievalSettings, mentioned: Sequence[str]
    ) -> float:
        """What a hit's BM25F score was multiplied by (1.0 outside the mentioned groups)."""
        if mentioned and name in self._mention_members(mentioned, None):
            return 1.0 + chosen.mention_weight
        return 1.0


def server_aliases(name: str, info: object = None) -> list[str]:
    """A server group's aliases: its name's words, the server's own name and title.

    ``info`` is the ``serverInfo`` of the ``initialize`` answer (``session.server_info``);
    an alias longer than a group takes, or with no index terms, is left out.

    >>> from types import SimpleNamespace
    >>> server_aliases("aws-eks", SimpleNamespace(name="eks-mcp-server", title="Amazon EKS"))
    ['aws eks', 'eks-mcp-server', 'Amazon EKS']
    """
    found: list[str] = []
    spaced = " ".join(name.replace("-", " ").replace("_", " ").replace(".", " ").split())
    texts: list[object] = [spaced]
    texts += [getattr(info, "name", None), getattr(info, "title", None)]
    for text in texts:
        if not isinstance(text, str):
            continue
        line = " ".join(text.split())
        fits = 0 < len(line) <= MAX_ALIAS_CHARS and any(ch.isalnum() for ch in line)
        if fits and line != name and line not in found:
            found.append(line)
    return found[:MAX_ALIASES]
