"""Group membership of a registry: which group each tool is in, made once per generation.

A tool joins a group by its own ``group`` field, else by the longest declared prefix its
name starts with (of equal prefixes, the first declared). :class:`Prefixes` answers one
name from the declared prefixes of a groups version; :class:`Membership` is every tool's
group at one (catalogue generation, groups version); :class:`GroupMembership` owns a
registry's declared groups and answers from them. Each is replaced whole, never changed, so
a reader needs no lock.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from pydantic import ValidationError

from toolsurface.errors import UnknownGroupError
from toolsurface.groups import LoadMode, ToolGroup
from toolsurface.models import Tool

__all__ = ["LOOKUPS_BEFORE_MAP", "GroupMembership", "Membership", "Prefixes"]


class Prefixes:
    """The declared prefixes of one groups version: a name's group without a scan of groups.

    ``lengths`` are the distinct prefix lengths, longest first; ``by_prefix`` maps a prefix
    to the group it names (of two groups with one prefix, the first declared). A name's
    group is the first of its leading slices, longest first, that is a declared prefix:
    the cost is the number of distinct lengths (a few), not the number of groups.
    """

    __slots__ = ("by_prefix", "lengths", "match", "separated", "version")

    def __init__(self, version: int, groups: Sequence[ToolGroup]) -> None:
        by_prefix: dict[str, str] = {}
        for g in groups:
            if g.prefix:
                by_prefix.setdefault(g.prefix, g.name)
        self.version = version
        self.by_prefix = by_prefix
        self.lengths = tuple(sorted({len(p) for p in by_prefix}, reverse=True))
        # MCP servers' prefixes all end in "__": then a prefix a name starts with ends where
        # one of the name's "__" does, so those few slices are all there is to look up
        # (one, for most names), however many prefix lengths there are.
        self.separated = len(self.lengths) > 2 and all(p.endswith(_SEP) for p in by_prefix)
        self.match = self._at_separators if self.separated else self._by_length

    def match_all(self, names: Sequence[str]) -> list[str | None]:
        """``[self.match(n) for n in names]``, in about a tenth of the time at scale.

        With every prefix ending in ``__`` most names have one separator, so the slice at
        the last one is tried for all names in one pass; only a name it misses that has
        another separator before it takes the full :meth:`_at_separators`.
        """
        if not self.separated:
            return [self.match(n) for n in names]
        get = self.by_prefix.get
        found = [get(n[: n.rfind(_SEP) + 2]) for n in names]
        for i, group in enumerate(found):
            if group is None:
                name = names[i]
                if name.rfind(_SEP, 0, name.rfind(_SEP) + 1) >= 0:
                    found[i] = self._at_separators(name)
        return found

    def _by_length(self, name: str) -> str | None:
        """The group of the longest declared prefix ``name`` starts with, or ``None``."""
        by_prefix = self.by_prefix
        for n in self.lengths:
            found = by_prefix.get(name[:n])
            if found is not None:
                return found
        return None

    def _at_separators(self, name: str) -> str | None:
        """:meth:`_by_length` when every prefix ends in ``__``: slices at each ``__``."""
        by_prefix = self.by_prefix
        end = name.rfind(_SEP)
        while end >= 0:
            found = by_prefix.get(name[: end + 2])
            if found is not None:
                return found
            end = name.rfind(_SEP, 0, end + 1)  # "___" holds two separators
        return None


#: What ends an MCP server's prefix (``server__tool``).
_SEP = "__"


class Membership:
    """Every registered tool's group at one (generation, groups version); never mutated.

    ``of`` maps each tool that is in a group to it (its own field, else the longest
    prefix); a tool in no group is absent. ``members`` (made on first use) is the inverse,
    each group's tools in name order (what the engine's boost rules are made of).
    """

    def __init__(self, key: tuple[int, int], tools: Mapping[str, Tool], prefixes: Prefixes) -> None:
        # The names are the map's keys: each tool object is read once (for its own group),
        # which at 100,000 tools is most of the time this takes.
        names = list(tools)
        own = [t.group for t in tools.values()]
        self.key = key
        self.of: dict[str, str] = {
            name: group
            for name, mine, matched in zip(names, own, prefixes.match_all(names))
            if (group := mine if mine is not None else matched) is not None
        }

    @functools.cached_property
    def members(self) -> Mapping[str, tuple[str, ...]]:
        """Each group's tools in name order (made once, on first use)."""
        by_group: dict[str, list[str]] = {}
        for name, group in self.of.items():
            by_group.setdefault(group, []).append(name)
        return MappingProxyType({g: tuple(sorted(m)) for g, m in by_group.items()})


#: Lookups of a catalogue generation's groups answered from the prefixes alone, before the
#: whole map is made: a host that registers and looks up one tool at a time never pays for
#: a map a lookup, and a plan over the catalogue pays for it once.
LOOKUPS_BEFORE_MAP = 64


class GroupMembership:
    """A registry's declared groups and which tool is in which, answered without a lock.

    The registry owns the tools and the catalogue generation and lends them read-only:
    ``tools`` (its live map of name to tool), ``generation`` (the current one) and ``lock``
    (its own, so that a view reads tools and groups as one). Everything here is written only
    here, under that lock; the groups' tuple, the prefixes and the map are each replaced
    whole, never changed, so a reader needs no lock. ``tokens`` analyses an alias.
    """

    def __init__(
        self,
        lock: threading.RLock,
        tools: Mapping[str, Tool],
        generation: Callable[[], int],
        tokens: Callable[[str], Sequence[str]],
    ) -> None:
        self._lock = lock
        self._tools = tools
        self._generation = generation
        self._tokens = tokens
        self._declared: dict[str, ToolGroup] = {}
        # The declared groups in order, of the version they were listed at: made on first
        # use after a change, never on a declaration (declaring n groups stays linear in n),
        # and replaced whole, never mutated, so a reader iterates it without the lock.
        self._listed: tuple[int, tuple[ToolGroup, ...]] = (0, ())
        #: Moves whenever a group is declared or undeclared (the registry's groups version).
        self.version = 0
        # The prefixes of the current version, the map of tool to group of one (generation,
        # version), and how many lookups of which key missed the map.
        self._prefixes = Prefixes(0, ())
        self._map: Membership | None = None
        self._misses = ((0, 0), 0)

    def declare_group(
        self,
        name: str,
        *,
        prefix: str | None = None,
        dynamic: bool = False,
        load: LoadMode = "auto",
        rules: str | None = None,
        description: str | None = None,
        aliases: Sequence[str] = (),
    ) -> ToolGroup:
        """The registry's ``declare_group`` (its docstring has the example): the group kept here."""
        try:
            group = ToolGroup(
                name=name,
                prefix=prefix,
                dynamic=dynamic,
                load=load,
                rules=rules,
                description=description,
                aliases=tuple(aliases) if not isinstance(aliases, str) else (aliases,),
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"group {name!r}: field {loc!r}: {first['msg']}") from None
        self._check_alias_terms(group)
        with self._lock:
            self._declared[name] = group
            self.version += 1
        return group

    def undeclare_group(self, name: str) -> bool:
        """Remove a group's declaration; idempotent (returns whether it was declared)."""
        with self._lock:
            found = self._declared.pop(name, None) is not None
            if found:
                self.version += 1
            return found

    def groups(self) -> dict[str, ToolGroup]:
        """Declared groups by name (a copy)."""
        with self._lock:
            return dict(self._declared)

    def listed(self) -> tuple[int, tuple[ToolGroup, ...]]:
        """The version and the declared groups in declaration order, read as one."""
        with self._lock:
            return self.version, self._groups_listed()

    def _groups_listed(self) -> tuple[ToolGroup, ...]:
        """The declared groups of the current version, in order (the caller holds the lock)."""
        version, listed = self._listed
        if version != self.version:
            listed = tuple(self._declared.values())
            self._listed = (self.version, listed)
        return listed

    def _check_alias_terms(self, group: ToolGroup) -> None:
        """Refuse an alias that analyses to no index term (it could never be mentioned)."""
        for alias in group.aliases:
            if not self._tokens(alias):
                raise ValueError(f"group {group.name!r}: alias {alias!r} has no index terms")

    def group_of(self, name: str) -> str | None:
        """The group a registered tool belongs to: its own field, else the longest prefix.

        O(1): answered from a map of tool to group made once per catalogue generation and
        groups version (until a generation has had a few lookups, from the declared
        prefixes alone). Safe beside a concurrent ``declare_group`` or ``register``: the map
        and the prefixes are each replaced whole, never changed, and one made before a
        change is not used once the change is done.
        """
        key = (self._generation(), self.version)
        found = self._map
        if found is not None and found.key == key:
            return found.of.get(name)
        # Lookups of this key so far (a race only miscounts: the answer is right either way).
        seen, misses = self._misses
        misses = misses + 1 if seen == key else 1
        self._misses = (key, misses)
        if misses > LOOKUPS_BEFORE_MAP:
            return self.membership().of.get(name)
        tool = self._tools.get(name)
        if tool is None:
            return None
        if tool.group is not None:
            return tool.group
        return self.prefixes().match(name)

    def group_members(self, name: str) -> tuple[str, ...]:
        """The registered tools in group ``name``, in name order (none for an unknown group).

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="fs__write_file", description="Write a file to disk."),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="notes", description="Take a note.", group="fs"),
        ... ])
        >>> _ = registry.declare_group("fs", prefix="fs__")
        >>> registry.group_members("fs")
        ('fs__read_file', 'fs__write_file', 'notes')
        """
        return self.membership().members.get(name, ())

    def group_map(self) -> Mapping[str, str]:
        """Every registered tool that is in a group, mapped to it (read-only, one generation).

        The map ``group_of`` answers from: a tool in no group is absent. It is a snapshot:
        a later change to the tools or the groups makes a new one.
        """
        return MappingProxyType(self.membership().of)

    def group(self, name: str) -> ToolGroup:
        """A group by name: declared, or implied by tools whose ``group`` field names it."""
        found = self._declared.get(name)
        if found is not None:
            return found
        if name in self.membership().members:
            return ToolGroup(name=name)
        raise UnknownGroupError(f"no group named {name!r} is declared or named by a tool")

    @property
    def made(self) -> Membership | None:
        """The map of tool to group made last (``None`` before any), current or not."""
        return self._map

    def prefixes(self) -> Prefixes:
        """The declared prefixes of the current groups version (made on first use)."""
        prefixes = self._prefixes
        if prefixes.version == self.version:
            return prefixes
        with self._lock:
            if self._prefixes.version != self.version:
                self._prefixes = Prefixes(self.version, self._groups_listed())
            return self._prefixes

    def membership(self) -> Membership:
        """The map of tool to group of the current generation and groups version."""
        found = self._map
        if found is not None and found.key == (self._generation(), self.version):
            return found
        with self._lock:
            key = (self._generation(), self.version)
            tools = dict(self._tools)
            prefixes = self.prefixes()
        made = Membership(key, tools, prefixes)
        with self._lock:
            now = self._map
            # Never put back an older map than the one in place (both counters only grow).
            if now is None or (now.key[0] <= key[0] and now.key[1] <= key[1]):
                self._map = made
        return made
