"""Service mentions: a query that names a group (its name or an alias) weights its tools up.

The rule is ``docs/analysis.md`` §8. A declared group's name and aliases are analysed by
the registry's engine and compiled into its alias table; a group is *mentioned* when every
index term of one of them is among the query's terms (its own tokens and the lexicon's
expansions, any weight, so "в слаке" mentions ``slack`` through the lexicon's "слак"),
matched inside the engine (``Index.mentions``). Every hit of a mentioned group's tools has
its BM25F score multiplied by ``1 + mention_weight``
(:class:`~toolsurface.models.RetrievalSettings`); nothing else moves.

The boost is found and applied inside the engine's search (``boosts.py`` compiles its
rules), so both engines give it alike. Only admitted tools are searched, so only they are
ever affected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolsurface.groups import MAX_ALIAS_CHARS, MAX_ALIASES, ToolGroup
from toolsurface.models import RetrievalSettings
from toolsurface.retrieval.engine.backend import Backend
from toolsurface.retrieval.engine.built import BuiltIndex as _Built
from toolsurface.retrieval.fields import clean_text
from toolsurface.retrieval.membership import GroupMembership

__all__ = ["AliasTable", "MentionBoost", "server_aliases"]

#: A query is read for mentions on the same first characters the search analyses.
_QUERY_MAX_CHARS = 4096


class AliasTable:
    """The analysed names and aliases of one groups version, compiled for the engine.

    ``compiled`` is the engine's alias table (``Aliases`` or ``PureAliases``), numbering the
    groups as ``names`` does; never mutated.
    """

    __slots__ = ("compiled", "names", "version")

    def __init__(self, version: int, groups: Sequence[ToolGroup], backend: Backend) -> None:
        numbers: list[int] = []
        texts: list[str] = []
        for number, g in enumerate(groups):
            numbers += [number] * (1 + len(g.aliases))
            texts.append(g.name)
            texts += g.aliases
        self.version = version
        self.names = tuple(g.name for g in groups)
        self.compiled = backend.aliases(numbers, texts)


class MentionBoost:
    """The groups a query mentions: the alias table the engine matches queries against.

    Owns the alias table, compiled once per groups version from ``groups`` (the registry's
    :class:`~toolsurface.retrieval.membership.GroupMembership`); the engine's boost rules
    (``boosts.py``) number the groups as it does.
    ``backend`` and ``lexicon`` are the registry's engine and lexicon; ``current`` gives
    its current index, matched on when a caller names none.
    """

    def __init__(
        self,
        groups: GroupMembership,
        backend: Backend,
        lexicon: Any,
        current: Callable[[], _Built],
    ) -> None:
        self._groups = groups
        self._backend = backend
        self._lexicon = lexicon
        self._current = current
        # Replaced whole when the groups version moves; a race only compiles it twice.
        self._aliases: AliasTable | None = None

    def alias_table(self) -> AliasTable:
        """The alias table of the current groups version (compiled on first use)."""
        table = self._aliases
        if table is not None and table.version == self._groups.version:
            return table
        version, groups = self._groups.listed()
        made = AliasTable(version, groups, self._backend)
        self._aliases = made
        return made

    def mentioned_groups(self, query: str, settings: RetrievalSettings) -> list[str]:
        """The declared groups ``query`` mentions by name or alias, for the registry's method."""
        return list(self.mentions_in(query, settings))

    def mentions_in(
        self, query: str, chosen: RetrievalSettings, built: _Built | None = None
    ) -> tuple[str, ...]:
        """The groups ``query`` mentions, matched on ``built`` (default: the current index)."""
        table = self.alias_table()
        if table.compiled is None:
            return ()
        text = clean_text(query[:_QUERY_MAX_CHARS])
        index = (built or self._current()).index
        found = index.mentions(text, self._lexicon, chosen.expansion_weight, table.compiled)
        return tuple(table.names[i] for i in found)


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
