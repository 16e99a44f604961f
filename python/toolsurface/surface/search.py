"""ToolSearch's answer: search, select or load a group, and the text the model reads.

The surface parses the call and hands the request here with its decision, what it last
advertised and callbacks to load and give rules; the answer's text and metadata come back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolsurface._text import nearest_names, safe_text, tool_line
from toolsurface.dispatch import NEAR_NAMES_PER_MESSAGE
from toolsurface.registry import ToolRegistry
from toolsurface.surface.deferral import Decision
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.state import LoadHow
from toolsurface.tools.toolsearch import ToolSearchRequest

__all__ = ["ToolSearchResult", "answer_tool_search"]


@dataclass(frozen=True)
class ToolSearchResult:
    """ToolSearch's answer: the text for the model and what it loaded, as metadata."""

    text: str
    loaded: tuple[str, ...] = ()
    already_listed: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    refused: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


def answer_tool_search(
    request: ToolSearchRequest,
    d: Decision,
    advertised: Collection[str],
    *,
    registry: ToolRegistry,
    limits: SurfaceLimits,
    room_for_loads: Callable[[], int | None],
    load: Callable[[Literal["tool", "group"], str, LoadHow], bool],
    give_rules: Callable[[Sequence[str]], list[str]],
) -> ToolSearchResult:
    """Answer a (non-empty) ToolSearch request under decision ``d``.

    ``advertised`` are the names of the request planned last; ``room_for_loads`` is asked
    only for a group load (it may plan a request); ``load`` loads an entry (and reports it),
    ``give_rules`` returns the rules sections not given yet and marks them given. The calls
    come in the order the answer is written, so loads and events keep their order.
    """
    admitted = set(d.admitted)
    lines: list[str] = []
    loaded: list[str] = []
    already: list[str] = []
    groups_loaded: list[str] = []
    how: LoadHow = "search"
    if request.names or request.groups:
        how = "select" if request.names else "group"
        unknown = 0
        for name in request.names:
            if name in admitted:
                if name in advertised:
                    already.append(name)
                else:
                    load("tool", name, "select")
                    loaded.append(name)
            else:
                unknown += 1
                near = nearest_names(name, d.admitted) if unknown <= NEAR_NAMES_PER_MESSAGE else []
                hint = f" Nearest: {', '.join(near)}." if near else ""
                lines.append(f"Unknown tool {safe_text(name, 128)!r}.{hint}")
        room = room_for_loads() if request.groups else None
        for group in request.groups:
            members = [n for n in d.admitted if registry.group_of(n) == group]
            if not members:
                known = sorted(d.held)
                hint = f" Held-back groups: {', '.join(known)}." if known else ""
                lines.append(f"Unknown group {safe_text(group, 64)!r}.{hint}")
                continue
            new = [n for n in members if n not in advertised]
            if room is not None and len(new) > room:
                # Loading it would be a promise the next request cannot keep.
                lines.append(
                    f"Group {safe_text(group, 64)!r} was not loaded: it has {len(new)} "
                    f"tools and only {max(room, 0)} fit in your tool list. Search with "
                    "query, or select the tools you need by name."
                )
                continue
            load("group", group, "group")
            groups_loaded.append(group)
            for n in members:
                (already if n in advertised else loaded).append(n)
    else:
        hits = registry.search(request.query, k=limits.search_results, admitted=admitted)
        if not hits:
            lines.append(f"No tool matches {safe_text(request.query, 120)!r}.")
        to_load = [h.name for h in hits if h.name not in advertised]
        to_load = to_load[: limits.search_loads]
        for name in to_load:
            load("tool", name, "search")
            loaded.append(name)
        already = [h.name for h in hits if h.name in advertised]
        others = [h.name for h in hits if h.name not in advertised and h.name not in loaded]
        if others:
            lines.append("Other matches (load them with select):")
            lines.extend(f"- {tool_line(registry.get(n))}" for n in others)
    rule_groups = [g for g in (registry.group_of(n) for n in loaded) if g is not None]
    lines.extend(give_rules(rule_groups))
    text = _result_text(registry, loaded, already, lines, request.notes)
    return ToolSearchResult(
        text=text,
        loaded=tuple(loaded),
        already_listed=tuple(already),
        groups=tuple(groups_loaded),
        metadata={
            "how": how,
            "loaded": list(loaded),
            "already_listed": list(already),
            "groups": list(groups_loaded),
        },
    )


def _result_text(
    registry: ToolRegistry,
    loaded: Sequence[str],
    already: Sequence[str],
    lines: list[str],
    notes: Sequence[str],
) -> str:
    out: list[str] = []
    if loaded:
        out.append("Loaded, callable from your next step:")
        out.extend(f"- {tool_line(registry.get(n))}" for n in loaded)
    if already:
        out.append("Already in your tool list:")
        out.extend(f"- {tool_line(registry.get(n))}" for n in already)
    out.extend(lines)
    out.extend(f"Note: {n}." for n in notes)
    out.append("ToolSearch loads tools only: skills, documents and other things are not tools.")
    return "\n".join(out)
