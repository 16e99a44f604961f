"""The part of a request every run with one decision shares: the base list and its renders.

The base list (name-sorted base, the discovery tool), the tools a native delivery sends
deferred and the aliases a provider needs depend on the decision and the view alone, not on
the run: :class:`BaseList` is made once per (view, decision, count limit, discovery tool,
pinned tools) and shared (see :mod:`toolsurface.surface.shared`); a plan appends the run's
own loads after it. Its renders for each provider are made once too, and a plan's render
hands them out copied on read (:class:`~toolsurface._internal.copy_on_read.CopyOnRead`), so
only the run's appended part is rendered per request.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Collection, Sequence
from typing import Any

from toolsurface._internal.copy_on_read import CopyOnRead
from toolsurface.models import Tool
from toolsurface.providers import provider_spec, render_tools
from toolsurface.providers.names import alias_for
from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision
from toolsurface.surface.delivery import Space, native_parts, render_native
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.plan import RequestPlan, Source, list_tools
from toolsurface.surface.plan import _aliased as aliased_tools
from toolsurface.surface.plan import _copy_out as copy_out
from toolsurface.surface.state import LoadedEntry, loaded_tools

__all__ = ["Assembled", "BaseList", "alias_of", "base_list", "native_loads"]

#: Load sets whose lists a base keeps (past this many it starts over).
MAX_LOAD_SETS = 256
#: A plan's list: its base, the loads appended, and the tools, names and sources in order.
Assembled = tuple[
    "BaseList", tuple[str, ...], tuple[Tool, ...], tuple[str, ...], tuple[Source, ...]
]


@functools.lru_cache(maxsize=1 << 16)
def alias_of(name: str, provider: str) -> str:
    """:func:`~toolsurface.providers.names.alias_for`, remembered (a pure function of both)."""
    return alias_for(name, provider)


class BaseList:
    """A decision's base list in one view: names, sources, reasons, tools, and their renders.

    ``dropped`` are the base tools left off over the provider's count limit (each plan
    reports them again, as a plan from scratch does).
    """

    def __init__(
        self,
        names: Sequence[str],
        sources: Sequence[Source],
        reasons: Sequence[str],
        dropped: Sequence[str],
        view: RegistryView,
        d: Decision,
    ) -> None:
        self.names = tuple(names)
        self.sources: tuple[Source, ...] = tuple(sources)
        self.reasons = tuple(reasons)
        self.dropped = tuple(dropped)
        self.tools = tuple(view.get(n) for n in names)
        self.listed = frozenset(names)
        self.held_back = tuple(sorted(d.held))
        groups = {g for n in names if (g := view.group_of(n)) is not None}
        #: The base's groups that have rules (the only ones a catalogue's rules come from).
        self.ruled_groups = frozenset(g for g in groups if view.group(g).rules)
        # Weakly: the shared artefacts live beside the view (a weak key), and one that held
        # its view would keep it, and them, alive after the registry moved on.
        self._view = weakref.ref(view)
        self._decision = d
        self._lock = threading.Lock()
        self._made: dict[tuple[str, str], Any] = {}
        self._lists: dict[tuple[str, ...], Assembled] = {}

    def _once(self, key: tuple[str, str], make: Any) -> Any:
        found = self._made.get(key)
        if found is None:
            with self._lock:
                found = self._made.get(key)
                if found is None:
                    found = self._made[key] = make()
        return found

    def assembled(self, extra: tuple[str, ...]) -> Assembled:
        """The list with the loads ``extra`` appended: (self, extra, tools, names, sources).

        Kept for the last few load sets: a stateless host restores a session for each of its
        requests, and its loads seldom move between two of them.
        """
        found = self._lists.get(extra)
        if found is None:
            loaded: tuple[Source, ...] = tuple("loaded" for _ in extra)
            found = (
                self,
                extra,
                self.tools + tuple(self._alive().get(n) for n in extra),
                self.names + extra,
                self.sources + loaded,
            )
            with self._lock:
                if len(self._lists) >= MAX_LOAD_SETS:
                    self._lists.clear()
                self._lists[extra] = found
        return found

    def _alive(self) -> RegistryView:
        """The view (a plan asks only while it holds the view, so it is alive then)."""
        view = self._view()
        if view is None:
            raise RuntimeError("the registry view of this base list is gone")
        return view

    def native(self, namespace_size: int | None) -> tuple[tuple[Tool, ...], tuple[Space, ...]]:
        """Native delivery: the held-back tools sent deferred, and the namespaces of them.

        ``namespace_size`` is the surface's (``native_parts``): it keys what is kept.
        """

        def make() -> tuple[tuple[Tool, ...], tuple[Space, ...]]:
            deferred, _, spaces = native_parts(
                "native", self._decision, self.names, (), self._alive(), namespace_size
            )
            return deferred, spaces

        found: tuple[tuple[Tool, ...], tuple[Space, ...]] = self._once(
            ("native", str(namespace_size)), make
        )
        return found

    def aliases(self, provider: str) -> dict[str, str]:
        """The base names ``provider`` is sent as an alias, to the alias."""
        found: dict[str, str] = self._once(
            ("aliases", provider),
            lambda: {n: a for n in self.names if (a := alias_of(n, provider)) != n},
        )
        return found

    def render(self, plan: RequestPlan, provider: str) -> Any | None:
        """``plan`` rendered for ``provider``: the base's render shared, the loads made now.

        ``None`` where the plan is not this base and its loads, for Gemini (one object, not
        a list), and wherever the provider refuses the request (a plan from scratch raises
        its error).
        """
        count = len(self.tools)
        if plan.tools[:count] != self.tools:
            return None
        try:
            if plan.delivery == "native":
                if provider != plan.provider or len(plan.tools) != count:
                    return None
                size = self._native_size(plan)
                if size is None:
                    return None
                whole = self._once(
                    ("native-" + provider, size), lambda: self._render_native(plan, size)
                )
                return CopyOnRead(whole, len(whole), copy_out)
            spec = provider_spec(provider)
            if provider == "gemini" or (
                spec.max_tools is not None and len(plan.tools) > spec.max_tools
            ):
                return None
            prefix = self._once(
                ("append", provider),
                lambda: render_tools(aliased_tools(self.tools, provider), provider),
            )
            # The loads' definitions too are rendered once per tool and shared, copied on read.
            each: dict[str, Any] = self._once(("each", provider), dict)
            extra = plan.tools[count:]
            missing = [t for t in extra if t.name not in each]
            if missing:
                rendered = render_tools(aliased_tools(missing, provider), provider, deferred=True)
                each.update(zip((t.name for t in missing), rendered))
            tail = [each[t.name] for t in extra]
        except ValueError:
            return None
        return CopyOnRead([*prefix, *tail], len(prefix) + len(tail), copy_out)

    def _native_size(self, plan: RequestPlan) -> str | None:
        """The key of the kept native parts ``plan`` was made from, or ``None`` if none is."""
        for (kind, size), found in list(self._made.items()):
            if kind == "native" and found[0] is plan.deferred:
                return str(size)
        return None

    def _render_native(self, plan: RequestPlan, size: str) -> list[dict[str, Any]]:
        """The whole native array: the same bytes for every plan of this base and size."""
        provider = plan.provider or ""
        deferred, spaces = self._made[("native", size)]
        tools = aliased_tools(self.tools, provider)
        shown = aliased_tools(deferred, provider)
        names = {t.name: a.name for t, a in zip(deferred, shown)}
        spaced = [(g, about, tuple(names[n] for n in m)) for g, about, m in spaces]
        if provider != "openai-responses":
            spaced = []
        return render_native(tools, shown, provider, plan.discovery_tool, spaced)


def base_list(
    d: Decision,
    *,
    view: RegistryView,
    limits: SurfaceLimits,
    discovery_tool: str | None,
    pinned: Collection[str],
) -> BaseList:
    """The base list of decision ``d`` (no loads, no per-message clip)."""
    dropped: list[str] = []

    def collect(kind: str, data: dict[str, Any]) -> None:
        if kind == "tools_dropped":
            dropped.extend(data["names"])

    names, sources, reasons = list_tools(
        d,
        registry=view,
        limits=limits,
        discovery_tool=discovery_tool,
        pinned=pinned,
        entries=[],
        user_message=None,
        emit=collect,
    )
    return BaseList(names, sources, reasons, dropped, view, d)


def native_loads(
    entries: Sequence[LoadedEntry], d: Decision, view: RegistryView, listed: Collection[str]
) -> tuple[str, ...]:
    """Native delivery: the loads' tools the model sees already (off the listed ones)."""
    return tuple(dict.fromkeys(n for n, _ in loaded_tools(entries, d, view) if n not in listed))
