"""The plan of one request: the tools in order with their sources, and the catalogue block.

:func:`list_tools` lays out the list (the name-sorted base, the discovery tool, then the
loads in discovery order); :class:`RequestPlan` is what the surface returns, with the
catalogue block beside the tools.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, overload

from toolsurface.models import Tool, copy_data
from toolsurface.providers import render_tools
from toolsurface.providers.cache_points import cache_key, mark_last_shown, system_blocks
from toolsurface.providers.names import alias_for
from toolsurface.providers.payloads import (
    AnthropicTools,
    GeminiTool,
    OpenAIChatTools,
    OpenAIResponsesTools,
)
from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision, held_members
from toolsurface.surface.delivery import Delivery, Space, render_native
from toolsurface.surface.history_trim import trim_history
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.state import LoadedEntry, loaded_tools

__all__ = ["RenderCache", "RequestPlan", "Source", "list_tools", "loads_after"]

Source = Literal["base", "pinned", "loaded", "clip", "discovery"]


class RenderCache(Protocol):
    """Renders of a plan's shared part, made once for every plan that shares it."""

    def render(self, plan: RequestPlan, provider: str) -> Any | None:
        """``plan`` rendered for ``provider`` from the shared part, or ``None``: render anew."""


@dataclass(frozen=True)
class RequestPlan:
    """What to send: the tools in order with the source of each, and the catalogue block."""

    tools: tuple[Tool, ...]
    sources: tuple[Source, ...]
    catalogue: str
    held_back: tuple[str, ...]
    reasons: tuple[str, ...] = ()
    #: Native delivery: the admitted held-back tools, sent deferred (Anthropic) or named
    #: only in the catalogue (Responses), and the loaded ones the model can see already.
    deferred: tuple[Tool, ...] = ()
    loaded: tuple[str, ...] = ()
    #: Responses, native: the held-back groups sent as namespaces of deferred functions.
    spaces: tuple[Space, ...] = ()
    delivery: Delivery = "append"
    provider: str | None = None
    discovery_tool: str | None = None
    #: The renders of the part of the list this plan shares with others (see surface/shared.py).
    shared: RenderCache | None = field(default=None, compare=False, repr=False)

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The advertised tool names, in order (made once per plan)."""
        return tuple(t.name for t in self.tools)

    @functools.cached_property
    def name_set(self) -> frozenset[str]:
        """The names whose definitions the model has: the list, and native loads.

        Admission tests every call against it (a name outside is a blind call).
        """
        return frozenset((*self.names, *self.loaded))

    def definitions(self) -> list[dict[str, Any]]:
        """Neutral definitions (name, description, input_schema): group data never leaves.

        The schemas are copies: a host may edit its request (strict mode, say) without
        changing the registered tool for every other session.
        """
        return [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": _copy_out(t.input_schema),
            }
            for t in self.tools
        ]

    @overload
    def render(self, provider: Literal["anthropic"], *, cache: bool = False) -> AnthropicTools: ...
    @overload
    def render(self, provider: Literal["openai"], *, cache: bool = False) -> OpenAIChatTools: ...
    @overload
    def render(
        self, provider: Literal["openai-responses"], *, cache: bool = False
    ) -> OpenAIResponsesTools: ...
    @overload
    def render(self, provider: Literal["gemini"], *, cache: bool = False) -> GeminiTool: ...
    @overload
    def render(self, provider: str | None = None, *, cache: bool = False) -> Any: ...

    def render(self, provider: str | None = None, *, cache: bool = False) -> Any:
        """The tools in a provider's request shape (copies).

        Typed by the provider named (:mod:`toolsurface.providers.payloads`):
        ``render("anthropic")`` is a list of the Anthropic SDK's ``ToolParam``, ``"openai"``
        of ``ChatCompletionToolParam``, ``"openai-responses"`` of the Responses
        ``ToolParam``, ``"gemini"`` a ``GeminiTool``. With the run's provider (``render()``)
        the type is left open.

        A name the provider refuses is sent as its stable alias
        (:func:`toolsurface.providers.names.alias_for`), which admission and ToolSearch map
        back to the name.

        ``provider`` defaults to the run's. Under native delivery the array is the run's
        provider's own form (see toolsurface.surface.delivery), the same bytes on every
        request while the decision stands.

        With ``cache=True`` an Anthropic array carries a prompt-cache breakpoint
        (``cache_control``) on its last tool that is not deferred, never on a deferred one
        (the API refuses that); other providers' arrays are unchanged (OpenAI caches by
        itself: send :attr:`cache_key` as ``prompt_cache_key``). Off by default, so a host
        placing its own breakpoints gets the array as before.
        """
        provider = provider or self.provider
        if provider is None:
            raise ValueError("render() needs a provider: this run was made without one")
        if self.shared is not None:
            cached = self.shared.render(self, provider)
            if cached is not None:
                # A fresh copy-on-read list per call: marking it changes no other request's.
                return mark_last_shown(cached) if cache and provider == "anthropic" else cached
        tools = _aliased(self.tools, provider)
        if self.delivery == "native":
            if provider != self.provider:
                raise ValueError(
                    f"this plan is for native delivery to {self.provider}, not {provider!r}"
                )
            deferred = _aliased(self.deferred, provider)
            names = {t.name: a.name for t, a in zip(self.deferred, deferred)}
            spaces = [(g, about, tuple(names[n] for n in m)) for g, about, m in self.spaces]
            out = _copy_out(render_native(tools, deferred, provider, self.discovery_tool, spaces))
        else:
            out = _copy_out(render_tools(tools, provider))
        return mark_last_shown(out) if cache and provider == "anthropic" else out

    def system_blocks(self, base: str = "", *, cache: bool = False) -> list[dict[str, Any]]:
        """Anthropic's ``system``: :meth:`system_text` as one text block (none if empty).

        With ``cache=True`` the block carries a breakpoint, so the tools and the system
        text (the catalogue block with them) are read from the cache while they stand.
        """
        return system_blocks(self.system_text(base), cache=cache)

    @functools.cached_property
    def cache_key(self) -> str:
        """OpenAI's ``prompt_cache_key``: the same for every request over this catalogue.

        Made from the provider, the tools listed from the start and the held-back ones,
        never from loads or the conversation, so a run's requests (and other sessions'
        over the same catalogue and policy) share the provider's cache routing.
        """
        shown = [n for n, s in zip(self.names, self.sources) if s != "loaded"]
        held = [*self.held_back, *(t.name for t in self.deferred)]
        return cache_key(self.provider, shown, held)

    def trim_history(self, messages: Sequence[Any]) -> list[Any]:
        """The host's messages with the loads of tools this plan no longer has taken out.

        Native delivery only (append delivery's loads are in the tools list, and the
        messages come back as they were): a tool unloaded at a safe point (a turn's end
        over ``max_loaded_entries`` or the token budget) keeps its ``tool_reference`` or
        ``tool_search_output`` function in the history until the host drops it; sending
        ``plan.trim_history(messages)`` keeps what the model reads of loaded definitions
        to the loaded set. Messages with nothing to take out are the same objects, so
        between unloads the history, and its cached prefix, is unchanged.
        """
        if self.delivery != "native" or self.provider is None:
            return list(messages)
        keep = {*self.loaded, *(alias_for(n, self.provider) for n in self.loaded)}
        return trim_history(messages, keep)

    def system_text(self, base: str = "") -> str:
        """``base`` system text with the catalogue block after it (unchanged if none)."""
        if not self.catalogue:
            return base
        return f"{base}\n\n{self.catalogue}" if base else self.catalogue


def _aliased(tools: Sequence[Tool], provider: str) -> list[Tool]:
    """The tools as the provider is sent them: a name it refuses as its stable alias.

    The copies share everything but the name; admission and ToolSearch map an alias back.
    """
    out = []
    for tool in tools:
        alias = alias_for(tool.name, provider)
        out.append(tool if alias == tool.name else tool.model_copy(update={"name": alias}))
    return out


def _copy_out(value: Any) -> Any:
    """A copy of definitions for the host, so its edits never reach the registry.

    Past pickle's depth (the stack may be deeper than at registration) a JSON round trip
    reaches further.
    """
    try:
        return copy_data(value)
    except ValueError:
        return json.loads(json.dumps(value))


def list_tools(
    d: Decision,
    *,
    registry: RegistryView,
    limits: SurfaceLimits,
    discovery_tool: str | None,
    pinned: Collection[str],
    entries: list[LoadedEntry],
    user_message: str | None,
    emit: Callable[[str, dict[str, Any]], None],
    append_loads: bool = True,
) -> tuple[list[str], list[Source], list[str]]:
    """The request's names, the source of each, and the reasons, under decision ``d``.

    ``entries`` are the run's loads in discovery order; ``emit`` reports tools dropped over
    the provider's limit; without ``append_loads`` (native delivery) loads stay off the list.
    """
    reg = registry

    def is_pinned(name: str) -> bool:
        """Pinned by the run or marked ``always_load`` by the host: never clipped or dropped."""
        return name in pinned or reg.get(name).always_load

    held_tools = held_members(d)
    base_names = [n for n in d.admitted if n not in held_tools]
    show_discovery = d.discovery and bool(d.held)
    if discovery_tool in base_names:
        base_names.remove(discovery_tool)
    if not d.held:
        # Nothing held back (groups declared or not): the list the host would send without
        # the library, in the host's own order, so adopting groups costs no cache miss.
        position = {n: i for i, n in enumerate(reg.registration_order())}
        base_names.sort(key=lambda n: position.get(n, len(position)))
    limit = limits.max_advertised_tools
    reasons = list(d.reasons)
    room = None if limit is None else limit - (1 if show_discovery else 0)
    if room is not None and len(base_names) > room:
        base_names, dropped = _drop_over_limit(base_names, max(room, 0), is_pinned)
        reasons.append(
            f"over the provider's limit of {limit} tools with nothing to hold back: "
            f"left off {', '.join(dropped)}"
        )
        emit("tools_dropped", {"names": dropped, "limit": limit})
    sources: list[Source] = []
    names: list[str] = []
    clipped = _clip(reg, limits, base_names, user_message, is_pinned)
    if clipped and d.discovery and not show_discovery:
        # The clip hides tools: ToolSearch is the model's way back to them, as for groups.
        # It fits under the count limit: the clip left at least one of the base off.
        show_discovery = True
    for n in base_names:
        if n in clipped:
            continue
        names.append(n)
        if is_pinned(n):
            sources.append("pinned")
        else:
            sources.append("clip" if clipped else "base")
    if show_discovery and discovery_tool:
        names.append(discovery_tool)
        sources.append("discovery")
    appended = loads_after(
        set(names),
        len(names),
        d,
        registry=reg,
        entries=entries if append_loads else (),
        limit=limit,
    )
    names.extend(appended)
    sources.extend("loaded" for _ in appended)
    return names, sources, reasons


def loads_after(
    listed: Collection[str],
    count: int,
    d: Decision,
    *,
    registry: RegistryView,
    entries: Sequence[LoadedEntry],
    limit: int | None,
) -> list[str]:
    """The loads' tools appended after ``count`` listed ones (``listed``), in discovery order.

    Under the provider's count ``limit`` the least recently used loads are left off.
    """
    seen = set()
    loaded_names: list[tuple[str, LoadedEntry]] = []
    for n, entry in loaded_tools(entries, d, registry):
        if n not in listed and n not in seen:
            seen.add(n)
            loaded_names.append((n, entry))
    if limit is not None and count + len(loaded_names) > limit:
        loaded_names = _fit_loads(loaded_names, limit - count)
    return [n for n, _ in loaded_names]


def _drop_over_limit(
    base: list[str], room: int, is_pinned: Callable[[str], bool]
) -> tuple[list[str], list[str]]:
    """Keep ``room`` base tools, pinned ones first, in name order; and the rest."""
    ranked = sorted(base, key=lambda n: not is_pinned(n))
    keep = set(ranked[:room])
    return [n for n in base if n in keep], [n for n in base if n not in keep]


def _fit_loads(loaded: list[tuple[str, LoadedEntry]], room: int) -> list[tuple[str, LoadedEntry]]:
    """Leave the least recently used loads off this request (they stay loaded)."""
    if room <= 0:
        return []
    by_recency = sorted({id(e): e for _, e in loaded}.values(), key=lambda e: -e.last_use)
    keep: set[str] = set()
    total = 0
    for entry in by_recency:
        tools = [n for n, e in loaded if e is entry]
        if total + len(tools) <= room:
            keep.add(entry.key)
            total += len(tools)
    return [(n, e) for n, e in loaded if e.key in keep]


def _clip(
    registry: RegistryView,
    limits: SurfaceLimits,
    base: list[str],
    message: str | None,
    is_pinned: Callable[[str], bool],
) -> set[str]:
    """The opt-in per-message clip: names to leave off (never pinned ones).

    Keeps the ``k`` unpinned tools the message finds, best first; when it finds fewer (an
    empty message, or one of stopwords only, finds none) the rest of the ``k`` are the
    first unpinned tools in the surface's order, so the list keeps its size.
    """
    k = limits.retrieval_top_k
    if not k or message is None:
        return set()
    unpinned = [n for n in base if not is_pinned(n)]
    if len(unpinned) <= k:
        return set()
    # A query without terms answers in registration order at score 0: the surface's order
    # (name order while groups are held back) fills those places instead.
    hits = registry.search(message, k=k, admitted=unpinned)
    keep = {h.name for h in hits if h.score > 0}
    for n in unpinned:
        if len(keep) >= k:
            break
        keep.add(n)
    return {n for n in unpinned if n not in keep}
