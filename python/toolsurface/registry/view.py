"""One consistent view of a registry: its tools and groups at one generation, never changing.

A registry may be shared: another run registers, unregisters and redeclares while this one
plans. A surface therefore reads a :class:`RegistryView` taken at the start of each of its
operations: the decision, the list, the catalogue and the answer all see the same tools and
groups, so a tool removed meanwhile is simply not there yet or already gone, never half of
each (which raised ``UnknownToolError`` inside a run). Searches go to the registry itself:
they see a whole generation too, and a hit is always one of the names the caller passed.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol, TypeVar, cast

from toolsurface.errors import UnknownGroupError, UnknownToolError
from toolsurface.groups import ToolGroup
from toolsurface.models import SearchHit, Tool
from toolsurface.retrieval.membership import GroupMembership, Membership

__all__ = ["RegistryView", "ViewCache", "ViewPin", "one_view"]


class _Searches(Protocol):
    def search(
        self, query: str, k: int = 10, *, admitted: Collection[str] | None = None, **kw: Any
    ) -> list[SearchHit]: ...


class RegistryView:
    """A registry's tools and groups at one (generation, groups version); immutable."""

    def __init__(
        self,
        registry: _Searches,
        key: tuple[int, int],
        tools: dict[str, Tool],
        declared: dict[str, ToolGroup],
        membership: Membership,
    ) -> None:
        self._registry = registry
        self.key = key
        self._tools = tools
        self._declared = declared
        self._membership = membership

    @property
    def generation(self) -> int:
        """The catalogue generation the view was taken at."""
        return self.key[0]

    @property
    def groups_version(self) -> int:
        """The groups version the view was taken at."""
        return self.key[1]

    def get(self, name: str) -> Tool:
        """The tool of that name in the view; an unknown name raises ``UnknownToolError``."""
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(f"no tool named {name!r} is registered") from None

    def __contains__(self, name: object) -> bool:
        """Whether the view holds a tool of that name."""
        return name in self._tools

    @property
    def has_tool(self) -> Callable[[object], bool]:
        """``name in view`` as one C-level callable, for a loop over many names."""
        return self._tools.__contains__

    def __len__(self) -> int:
        """Number of tools in the view."""
        return len(self._tools)

    @functools.cached_property
    def _sorted(self) -> tuple[str, ...]:
        return tuple(sorted(self._tools))

    def names(self) -> list[str]:
        """The view's names in sorted order."""
        return list(self._sorted)

    def registration_order(self) -> list[str]:
        """The view's names in the order the host registered them."""
        return list(self._tools)

    def group_of(self, name: str) -> str | None:
        """The group a tool of the view belongs to (``None``: none, or no such tool)."""
        return self._membership.of.get(name)

    def group_members(self, name: str) -> tuple[str, ...]:
        """The view's tools in group ``name``, in name order."""
        return self._membership.members.get(name, ())

    def group(self, name: str) -> ToolGroup:
        """A group by name: declared, or implied by tools whose ``group`` field names it."""
        found = self._declared.get(name)
        if found is not None:
            return found
        if name in self._membership.members:
            return ToolGroup(name=name)
        raise UnknownGroupError(f"no group named {name!r} is declared or named by a tool")

    def groups(self) -> dict[str, ToolGroup]:
        """Declared groups by name."""
        return dict(self._declared)

    def rules(self) -> list[tuple[str, str]]:
        """(group, rules) of every declared group with rules: what a catalogue mark is of."""
        return [(g.name, g.rules) for g in self._declared.values() if g.rules]

    def search(
        self, query: str, k: int = 10, *, admitted: Collection[str] | None = None, **kw: Any
    ) -> list[SearchHit]:
        """The registry's search; with ``admitted`` (the run's names) every hit is one of them.

        Without ``admitted`` the registry's newest generation answers, and a hit may name a
        tool this view does not hold: such hits are left out.
        """
        hits = self._registry.search(query, k, admitted=admitted, **kw)
        if admitted is None:
            hits = [h for h in hits if h.name in self._tools]
        return hits


class _Views(Protocol):
    """Whatever gives views: a registry."""

    def view(self) -> RegistryView: ...


_T = TypeVar("_T")
_Op = TypeVar("_Op", bound=Callable[..., Any])


class ViewPin:
    """The one view of a registry that an operation reads, held while it runs.

    ``current`` gives the registry's view now; ``begin`` runs once a view is taken, before
    the operation (a surface re-gives changed rules there). Between operations nothing is
    held, and :meth:`view` is the current one.
    """

    __slots__ = ("_begin", "_current", "_pinned")

    def __init__(self, current: Callable[[], RegistryView], begin: Callable[[], None]) -> None:
        self._current = current
        self._begin = begin
        self._pinned: RegistryView | None = None

    def view(self) -> RegistryView:
        """The view the running operation holds; between operations, the current one."""
        pinned = self._pinned
        return pinned if pinned is not None else self._current()

    def hold(self, operation: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Run ``operation`` over one view; one run inside another shares the outer's view."""
        if self._pinned is not None:
            return operation(*args, **kwargs)
        self._pinned = self._current()
        try:
            self._begin()
            return operation(*args, **kwargs)
        finally:
            self._pinned = None


def one_view(pin_of: Callable[[Any], ViewPin]) -> Callable[[_Op], _Op]:
    """A decorator: each call of the method runs over one view, the one ``pin_of(self)`` holds.

    Another run may change a shared registry at any moment: every read of one operation (a
    surface's decision, list, catalogue, answer) goes to the same view, so a change made
    meanwhile is seen whole by the next operation and never half by this one. Nested
    operations share it.
    """

    def wrap(method: _Op) -> _Op:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            return pin_of(self).hold(method, self, *args, **kwargs)

        return cast(_Op, run)

    return wrap


class ViewCache:
    """A registry's :meth:`view`, made once per (generation, groups version) and kept.

    The registry lends what a view is made of, read-only: ``tools`` (its live map),
    ``generation``, ``groups`` (its :class:`~toolsurface.retrieval.membership.GroupMembership`) and
    ``lock`` (under which tools and groups are read as one); ``searches`` answers a view's
    searches (the registry).
    """

    def __init__(
        self,
        lock: threading.RLock,
        tools: Mapping[str, Tool],
        generation: Callable[[], int],
        groups: GroupMembership,
        searches: _Searches,
    ) -> None:
        self._lock = lock
        self._tools = tools
        self._generation = generation
        self._groups = groups
        self._searches = searches
        self._view: RegistryView | None = None

    def view(self) -> RegistryView:
        """The tools and groups as they are now, as one immutable view (kept until a change).

        A run that reads only its view between two of its operations never sees another
        run's change half-made: see :mod:`toolsurface.registry.view`.

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([Tool(name="fs__read_file", description="Read a file.")])
        >>> _ = registry.declare_group("fs", prefix="fs__")
        >>> view = registry.view()
        >>> _ = registry.unregister("fs__read_file")
        >>> view.group_of("fs__read_file"), "fs__read_file" in registry
        ('fs', False)
        """
        found = self._view
        if found is not None and found.key == (self._generation(), self._groups.version):
            return found
        with self._lock:
            key = (self._generation(), self._groups.version)
            tools = dict(self._tools)
            declared = self._groups.groups()
            prefixes = self._groups.prefixes()
        membership = Membership(key, tools, prefixes)
        made = RegistryView(self._searches, key, tools, declared, membership)
        with self._lock:
            now = self._view
            if now is None or (now.key[0] <= key[0] and now.key[1] <= key[1]):
                self._view = made
        return made
