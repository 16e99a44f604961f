"""The run's own state: what the model loaded, in discovery order, and when it last used it.

A :class:`RunState` holds the loaded entries (a tool, or a whole group counted as one entry
under the cap), a use clock and a discovery counter. It knows nothing of requests: the
surface asks it to load, to note a use, and to evict at a safe point.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision, held_members

__all__ = ["LoadHow", "LoadedEntry", "RunState", "entry_admitted", "entry_tools", "loaded_tools"]

LoadHow = Literal["search", "select", "group", "seed", "blind"]
GroupOf = Callable[[str], "str | None"]


@dataclass(slots=True)
class LoadedEntry:
    """A tool or a whole group the model loaded; a group counts as one entry under the cap.

    ``called`` says a tool entry was called; ``called_tools`` are a group entry's members
    the model called, in the order of their first call.
    """

    key: str
    kind: Literal["tool", "group"]
    name: str
    how: LoadHow
    order: int
    last_use: int
    called: bool = False
    called_tools: list[str] = field(default_factory=list)


#: An entry's discovery order (the sort key of every list of entries).
_by_order = operator.attrgetter("order")


def entry_admitted(entry: LoadedEntry, tools: Collection[str], groups: Collection[str]) -> bool:
    """Whether ``entry`` is a tool in ``tools`` or a group in ``groups`` (what a run may call)."""
    return entry.name in (tools if entry.kind == "tool" else groups)


def entry_tools(entry: LoadedEntry, d: Decision, view: RegistryView) -> list[str]:
    """The admitted tools an entry brings: the tool itself, or its group's members.

    Members come in name order, as ``d.admitted`` is, from the view's membership map.
    """
    admitted = d.admitted_set
    if entry.kind == "tool":
        return [entry.name] if entry.name in admitted else []
    return [n for n in view.group_members(entry.name) if n in admitted]


def loaded_tools(
    entries: Iterable[LoadedEntry], d: Decision, view: RegistryView
) -> Iterator[tuple[str, LoadedEntry]]:
    """Each entry's admitted tools (:func:`entry_tools`), with the entry, entry by entry.

    The lookups are bound once for all entries: a restored run lays out every load on its
    first plan.
    """
    admitted, members = d.admitted_set, view.group_members
    for entry in entries:
        name = entry.name
        if entry.kind == "tool":
            if name in admitted:
                yield name, entry
            continue
        for n in members(name):
            if n in admitted:
                yield n, entry


@dataclass
class RunState:
    """Loaded entries by key (``"tool:NAME"``, ``"group:NAME"``), the clock and the order."""

    loaded: dict[str, LoadedEntry] = field(default_factory=dict)
    clock: int = 0
    order: int = 0

    def load(self, kind: Literal["tool", "group"], name: str, how: LoadHow) -> bool:
        """Load an entry (or refresh its last use); whether it is new."""
        key = f"{kind}:{name}"
        self.clock += 1
        if key in self.loaded:
            self.loaded[key].last_use = self.clock
            return False
        self.order += 1
        self.loaded[key] = LoadedEntry(key, kind, name, how, self.order, self.clock)
        return True

    def note_use(self, name: str, group_of: GroupOf) -> None:
        """A dispatch of ``name``: its entry's last use moves, and it counts as called."""
        self.clock += 1
        group = group_of(name)
        for entry in self.loaded.values():
            if entry.kind == "tool" and entry.name == name:
                entry.last_use = self.clock
                entry.called = True
            elif entry.kind == "group" and group == entry.name:
                entry.last_use = self.clock
                if name not in entry.called_tools:
                    entry.called_tools.append(name)

    def called_tools(self) -> list[str]:
        """Loaded tools the model called, tool entries and group members, in discovery order."""
        out: dict[str, None] = {}
        for entry in self.entries():
            if entry.kind == "tool" and entry.called:
                out[entry.name] = None
            elif entry.kind == "group":
                out.update(dict.fromkeys(entry.called_tools))
        return list(out)

    def entries(self) -> list[LoadedEntry]:
        """The loaded entries in discovery order."""
        return sorted(self.loaded.values(), key=_by_order)

    def admitted_entries(
        self, tools: Collection[str], groups: Collection[str]
    ) -> list[LoadedEntry]:
        """Copies of the entries of a tool in ``tools`` or a group in ``groups``, in order.

        A group's called members are narrowed to ``tools``. Copies: what a host is handed
        cannot change the run, and names no tool it may not call (a group's member called
        before the policy blocked it).
        """
        return [
            replace(e, called_tools=[n for n in e.called_tools if n in tools])
            for e in self.entries()
            if entry_admitted(e, tools, groups)
        ]

    def evict(
        self,
        *,
        cap: int,
        budget: float,
        decide: Callable[[], Decision],
        tokens_of: Callable[[str], int],
        view: RegistryView,
        on_evict: Callable[[LoadedEntry], None],
    ) -> None:
        """Unload the least recently used entries, only when over a limit.

        Every eviction rewrites the tool list from the evicted entry on (and, where a
        provider's cache reads the tools first, the system prompt and the conversation after
        it), so evictions come seldom and trim deep: nothing is unloaded until the loads pass
        the cap on entries or, with a window, push the definitions over the token budget;
        then the least recently used go until half the cap, and half the budget's room for
        loads, is left. ``decide`` is asked for the decision only under a token budget;
        ``on_evict`` hears of each entry as it goes.
        """
        room = math.inf
        held_tools: dict[str, list[str]] = {}
        if not math.isinf(budget):
            d = decide()
            held = held_members(d)
            room = budget - sum(tokens_of(n) for n in d.admitted if n not in held)
            held_tools = {
                key: [n for n in entry_tools(e, d, view) if n in held]
                for key, e in self.loaded.items()
            }

        def loaded_tokens() -> int:
            """Tokens of the loaded definitions that are not already in the base."""
            names = {n for key in self.loaded for n in held_tools.get(key, ())}
            return sum(tokens_of(n) for n in names)

        over_cap = len(self.loaded) > cap
        over_budget = loaded_tokens() > room
        if not (over_cap or over_budget):
            return
        keep = max(1, cap // 2) if over_cap else cap
        keep_tokens = room / 2 if over_budget else math.inf
        while self.loaded and (len(self.loaded) > keep or loaded_tokens() > keep_tokens):
            victim = min(self.loaded.values(), key=lambda e: (e.last_use, e.order))
            del self.loaded[victim.key]
            on_evict(victim)
