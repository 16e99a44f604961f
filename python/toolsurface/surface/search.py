"""ToolSearch's answer: search, select or load a group, and the text the model reads.

The surface parses the call and hands the request here with its decision, what it last
advertised and callbacks to load and give rules; the answer's text and metadata come back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolsurface.admission.admit import NEAR_NAMES_PER_MESSAGE
from toolsurface.admission.name_case import CaseIndex, ambiguous_text
from toolsurface.admission.text import nearest_names, quoted_name, safe_text, tool_line
from toolsurface.registry.view import RegistryView
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
    #: Native delivery: what to send back in the provider's own form (Anthropic: the
    #: ``tool_result`` content with a ``tool_reference`` per loaded tool; Responses: the
    #: ``tool_search_output`` item). ``None`` under append delivery.
    native: Any = None
    #: The search form's hits, best first, as the answer named them (loaded, already
    #: listed, or offered for select); empty for a select or a group load.
    matches: tuple[str, ...] = ()

    @classmethod
    def refusal(cls, text: str) -> ToolSearchResult:
        """The answer to a call that asks for nothing usable: refused, with ``text``."""
        return cls(text=text, refused=True, metadata={"refused": True})


def answer_tool_search(
    request: ToolSearchRequest,
    d: Decision,
    advertised: Collection[str],
    *,
    registry: RegistryView,
    limits: SurfaceLimits,
    room_for_loads: Callable[[], int | None],
    load: Callable[[Literal["tool", "group"], str, LoadHow], bool],
    give_rules: Callable[[Sequence[str]], list[str]],
    load_cost: LoadCost | None = None,
    describe_group: Callable[[str], str | None] = lambda _: None,
    shown: Callable[[str], str] = str,
) -> ToolSearchResult:
    """Answer a (non-empty) ToolSearch request under decision ``d``.

    A query with no terms (a blank one, or only stopwords) answers the first admitted
    tools in registration order, as :meth:`ToolRegistry.search` does, under the same
    caps: up to ``search_results`` named, up to ``search_loads`` of them loaded.

    ``advertised`` are the names of the request planned last; ``room_for_loads`` is asked
    only for a group load (it may plan a request); ``load`` loads an entry (and reports it),
    ``give_rules`` returns the rules sections not given yet and marks them given;
    ``load_cost`` prices a load under the token budget (``None``: no budget);
    ``describe_group`` gives a group's one-line description; ``shown`` the name the model
    calls a tool by (a provider-safe alias, or the name). The calls come in the order the
    answer is written, so loads and events keep their order.
    """
    lines: list[str] = []
    loaded: list[str] = []
    already: list[str] = []
    groups_loaded: list[str] = []
    matches: list[str] = []
    fits = _Room(load_cost, lines)
    how: LoadHow = "search"
    if request.names or request.groups:
        how = "select" if request.names else "group"
        _select(request.names, d, advertised, load, fits, (loaded, already, lines), shown)
        room = room_for_loads() if request.groups else None
        group_index: CaseIndex | None = None
        for asked in request.groups:
            group = asked
            members = _admitted_members(registry, d, group)
            if not members:
                if group_index is None:
                    group_index = CaseIndex(sorted(_groups_of(registry, d.admitted)))
                same = group_index.match(asked)
                if len(same) > 1:
                    lines.append(ambiguous_text("group", safe_text(asked, 64), same))
                    continue
                if same:
                    group = same[0]
                    members = _admitted_members(registry, d, group)
            if not members:
                lines.append(_unknown_group(asked, d, describe_group))
                continue
            new = [n for n in members if n not in advertised]
            if room is not None and len(new) > room:
                # Loading it would be a promise the next request cannot keep.
                lines.append(
                    f"Group {group!r} was not loaded: it has {len(new)} tools and only "
                    f"{max(room, 0)} fit in your tool list. Search with query, or select the "
                    "tools you need by name."
                )
                continue
            if not fits.take(members, f"Group {group!r}"):
                continue
            load("group", group, "group")
            groups_loaded.append(group)
            for n in members:
                (already if n in advertised else loaded).append(n)
    else:
        hits = registry.search(request.query, k=limits.search_results, admitted=d.admitted_set)
        matches = [h.name for h in hits]
        if not hits:
            lines.append(f"No tool matches {safe_text(request.query, 120)!r}.")
        # Best first: each hit that fits under the token budget is loaded, up to the cap.
        for hit in hits:
            if hit.name in advertised or len(loaded) >= limits.search_loads:
                continue
            if fits.take([hit.name], f"Tool {hit.name!r}", quiet=True):
                load("tool", hit.name, "search")
                loaded.append(hit.name)
        already = [h.name for h in hits if h.name in advertised]
        others = [h.name for h in hits if h.name not in advertised and h.name not in loaded]
        if others:
            lines.append("Other matches (load them with select):")
            lines.extend(f"- {tool_line(registry.get(n), shown(n))}" for n in others)
        fits.say_skipped()
    rule_groups = [g for g in (registry.group_of(n) for n in loaded) if g is not None]
    lines.extend(give_rules(rule_groups))
    text = _result_text(registry, loaded, already, lines, request.notes, shown)
    return ToolSearchResult(
        text=text,
        loaded=tuple(loaded),
        already_listed=tuple(already),
        groups=tuple(groups_loaded),
        matches=tuple(matches),
        metadata={
            "how": how,
            "loaded": list(loaded),
            "already_listed": list(already),
            "groups": list(groups_loaded),
        },
    )


#: What loading names would add to the next request, in tokens, and the room left.
LoadCost = Callable[[Sequence[str]], tuple[int, float]]


class _Room:
    """The token budget's room for this answer's loads, and what it said about them."""

    def __init__(self, load_cost: LoadCost | None, lines: list[str]) -> None:
        self._load_cost = load_cost
        self._lines = lines
        self._skipped: list[str] = []
        self._left = 0.0

    def take(self, names: Sequence[str], what: str, *, quiet: bool = False) -> bool:
        """Whether ``names`` fit; if not, say so (or, ``quiet``, keep it for one line)."""
        if self._load_cost is None:
            return True
        cost, room = self._load_cost(names)
        if cost <= room:
            return True
        self._left = max(room, 0.0)
        if quiet:
            self._skipped.append(names[0])
        else:
            self._lines.append(
                f"{what} was not loaded: it takes about {cost} tokens and only "
                f"{int(self._left)} are free in your tool list. Select fewer or smaller tools."
            )
        return False

    def say_skipped(self) -> None:
        """One line for the search hits left unloaded for lack of room."""
        if self._skipped:
            self._lines.append(
                f"Not loaded for lack of room (about {int(self._left)} tokens are free in your "
                f"tool list): {', '.join(self._skipped)}."
            )


def _select(
    names: Sequence[str],
    d: Decision,
    advertised: Collection[str],
    load: Callable[[Literal["tool", "group"], str, LoadHow], bool],
    fits: _Room,
    out: tuple[list[str], list[str], list[str]],
    shown: Callable[[str], str],
) -> None:
    """Load the selected names that fit: exact, a provider-safe alias, or in another case.

    ``out`` are the answer's loaded, already listed and other lines, appended to.
    """
    loaded, already, lines = out
    unknown = 0
    for asked in names:
        name = asked if asked in d.admitted_set else d.aliases.get(asked, asked)
        if name not in d.admitted_set:
            same = d.case_index.match(asked)
            if len(same) > 1:
                lines.append(ambiguous_text("tool", safe_text(asked, 128), same))
                continue
            if same:
                name = same[0]
        if name in d.admitted_set:
            if name in advertised or name in already:
                if name not in already:
                    already.append(name)
            elif name not in loaded and fits.take([name], f"Tool {name!r}"):
                load("tool", name, "select")
                loaded.append(name)
            continue
        unknown += 1
        near = nearest_names(asked, d.admitted) if unknown <= NEAR_NAMES_PER_MESSAGE else []
        hint = f" Nearest: {', '.join(map(shown, near))}." if near else ""
        lines.append(f"Unknown tool {quoted_name(asked, 128)}.{hint}")


def _admitted_members(registry: RegistryView, d: Decision, group: str) -> list[str]:
    """The group's tools the run may call, in name order."""
    return [n for n in registry.group_members(group) if n in d.admitted_set]


def _groups_of(registry: RegistryView, admitted: Sequence[str]) -> set[str]:
    """The groups with an admitted member."""
    return {g for g in (registry.group_of(n) for n in admitted) if g is not None}


def _unknown_group(asked: str, d: Decision, describe: Callable[[str], str | None]) -> str:
    """The answer to an unknown group: the held-back groups, each with its description."""
    held = []
    for g in sorted(d.held):
        about = describe(g)
        held.append(f"{g} ({about})" if about else g)
    hint = f" Held-back groups: {'; '.join(held)}." if held else ""
    return f"Unknown group {quoted_name(asked, 64)}.{hint}"


def _result_text(
    registry: RegistryView,
    loaded: Sequence[str],
    already: Sequence[str],
    lines: list[str],
    notes: Sequence[str],
    shown: Callable[[str], str],
) -> str:
    out: list[str] = []
    if loaded:
        out.append("Loaded, callable from your next step:")
        out.extend(f"- {tool_line(registry.get(n), shown(n))}" for n in loaded)
    if already:
        out.append("Already in your tool list:")
        out.extend(f"- {tool_line(registry.get(n), shown(n))}" for n in already)
    out.extend(lines)
    out.extend(f"Note: {n}." for n in notes)
    out.append("ToolSearch loads tools only: skills, documents and other things are not tools.")
    return "\n".join(out)
