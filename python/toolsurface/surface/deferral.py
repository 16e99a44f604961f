"""The deferral decision: which groups a run holds back, as a pure function.

:func:`decide` reads the admitted tools, the limits, the load modes, the earlier decision
and a token estimate, and returns a :class:`Decision`; it changes nothing. The surface asks
for a new one only when the catalogue, the groups or the policy moved (its ``key``), so the
run's own loads never reopen it, and the groups held back earlier in a run are a floor.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import get_args

from toolsurface.admission.name_case import CaseIndex
from toolsurface.groups import LoadMode
from toolsurface.providers.names import alias_map
from toolsurface.registry.view import RegistryView
from toolsurface.surface.limits import DeferralMode, SurfaceLimits

__all__ = [
    "Decision",
    "DecisionKey",
    "check_load_modes",
    "decide",
    "held_members",
    "load_mode",
    "same_decision",
]

#: What a decision was made for: catalogue generation, groups version, policy version, 0.
DecisionKey = tuple[int, int, int, int]


@dataclass(frozen=True)
class Decision:
    """What a run holds back: the admitted tools, the held groups and why."""

    key: DecisionKey
    admitted: tuple[str, ...]
    held: frozenset[str]
    members: dict[str, tuple[str, ...]]
    discovery: bool
    reasons: tuple[str, ...]
    #: Every group with an admitted tool (held or not, free tools' groups too).
    groups: frozenset[str] = frozenset()

    @functools.cached_property
    def held_listed(self) -> tuple[str, ...]:
        """The held groups with an admitted tool, sorted: what a snapshot names.

        Made once per decision: a stateless host takes a snapshot after every request.
        """
        return tuple(sorted(self.held & self.groups))

    @functools.cached_property
    def admitted_set(self) -> frozenset[str]:
        """``admitted`` as a set, made once per decision (admission tests every call)."""
        return frozenset(self.admitted)

    @functools.cached_property
    def aliases(self) -> Mapping[str, str]:
        """Every provider's safe alias of an admitted name that needs one, to the name."""
        return alias_map(self.admitted)

    @functools.cached_property
    def case_index(self) -> CaseIndex:
        """``admitted`` by case-folded name, made on the first name in another case."""
        return CaseIndex(self.admitted)


def same_decision(a: Decision, b: Decision) -> bool:
    """Whether two decisions hold back the same for the same tools (reasons aside)."""
    return (a.admitted, a.held, a.discovery, a.groups, a.members) == (
        b.admitted,
        b.held,
        b.discovery,
        b.groups,
        b.members,
    )


def held_members(d: Decision) -> set[str]:
    """The tools of the groups the decision holds back."""
    return {n for g in d.held for n in d.members.get(g, ())}


#: The modes a group loads in (``groups.LoadMode``'s values, read from the type).
_LOAD_MODES = frozenset(get_args(LoadMode))


def check_load_modes(load_modes: Mapping[str, LoadMode] | None) -> dict[str, LoadMode]:
    """A run's load modes by group, each checked: ``ValueError`` names a misspelt mode.

    A group need not be declared yet (one declared later is found at the next plan), but a
    mode other than "eager", "auto" or "lazy" would quietly act as "auto".
    """
    out: dict[str, LoadMode] = {}
    for group, mode in (load_modes or {}).items():
        if not isinstance(group, str):
            raise TypeError(f"load_modes: a group name must be a string, got {group!r}")
        if mode not in _LOAD_MODES:
            raise ValueError(
                f"load_modes[{group!r}] must be 'eager', 'auto' or 'lazy', got {mode!r}"
            )
        out[group] = mode
    return out


def load_mode(registry: RegistryView, load_modes: Mapping[str, LoadMode], group: str) -> LoadMode:
    """A group's load mode: the run's own, else the group's declared one."""
    return load_modes.get(group) or registry.group(group).load


def decide(
    registry: RegistryView,
    admitted: tuple[str, ...],
    *,
    key: DecisionKey,
    limits: SurfaceLimits,
    deferral_mode: DeferralMode,
    discovery_tool: str | None,
    pinned: Collection[str],
    load_modes: Mapping[str, LoadMode],
    floor: Collection[str],
    last: Decision | None,
    tokens: Callable[[str], int],
    rules_tokens: Callable[[str], int] = lambda _: 0,
) -> Decision:
    """The decision for ``admitted`` under ``limits``; ``last`` stands if nothing it saw moved.

    ``floor`` are the groups held back earlier in the run (they stay held while they exist
    and the discovery tool is admitted);
    ``tokens`` estimates a tool's definition by name, ``rules_tokens`` a group's rules
    section (the catalogue carries it while the group is on the surface, so it weighs with
    the group's definitions).
    """
    reg = registry
    discovery = bool(discovery_tool) and discovery_tool in admitted
    members: dict[str, list[str]] = {}
    free: list[str] = []
    all_groups: set[str] = set()
    for name in admitted:
        group = reg.group_of(name)
        if group is not None:
            all_groups.add(group)
        tool = reg.get(name)
        if group is None or name == discovery_tool or tool.always_load or name in pinned:
            free.append(name)
        else:
            members.setdefault(group, []).append(name)
    groups = {g: tuple(m) for g, m in members.items()}
    held: set[str] = set()
    reasons: list[str] = []
    limit = limits.max_advertised_tools or math.inf
    budget = limits.token_budget
    if deferral_mode == "auto":
        # The floor keeps the run's request stable while a group can still be loaded; with
        # the discovery tool gone (the policy narrowed) a group held back could only be
        # called blind, and under native delivery not even that: it is listed again, as a
        # fresh run under that policy lists it.
        if discovery:
            held |= {g for g in floor if g in groups}
        if held:
            reasons.append("held back earlier in the run: " + ", ".join(sorted(held)))
        if discovery:
            for g in sorted(groups):
                if g in held:
                    continue
                spec = reg.group(g)
                mode = load_mode(reg, load_modes, g)
                if spec.dynamic and mode != "eager":
                    held.add(g)
                    reasons.append(f"{g}: a connected server's tools are held back")
                elif mode == "lazy":
                    held.add(g)
                    reasons.append(f"{g}: lazy group")
        held = _hold_for_limits(
            reg,
            groups,
            free,
            held,
            discovery_tool if discovery else None,
            load_modes,
            limit,
            budget,
            limits.load_reserve if discovery else 0,
            tokens,
            rules_tokens,
            reasons,
        )
    seen = (admitted, frozenset(held), groups, discovery, frozenset(all_groups))
    if (
        last is not None
        and (
            last.admitted,
            last.held,
            last.members,
            last.discovery,
            last.groups,
        )
        == seen
    ):
        # A change this run cannot see: the decision stands, reasons and all.
        return dataclasses.replace(last, key=key)
    return Decision(
        key, admitted, frozenset(held), groups, discovery, tuple(reasons), frozenset(all_groups)
    )


def _hold_for_limits(
    registry: RegistryView,
    groups: dict[str, tuple[str, ...]],
    free: list[str],
    held: set[str],
    tool_search: str | None,
    load_modes: Mapping[str, LoadMode],
    limit: float,
    budget: float,
    reserve: int,
    tokens_of: Callable[[str], int],
    rules_tokens: Callable[[str], int],
    reasons: list[str],
) -> set[str]:
    """Hold back groups, one at a time, until the count, the reserve and the budget hold.

    ``tool_search`` is the discovery tool when it is live (``None`` without one). A group's
    size is its definitions and its rules section; the rules of a group shown only through
    its free (pinned, always-load) tools count with the free tools.
    """
    discovery = tool_search is not None

    @functools.cache
    def size(g: str) -> int:
        """A group's definitions and rules (estimated only when a limit needs sizes)."""
        return rules_tokens(g) + sum(tokens_of(n) for n in groups[g])

    @functools.cache
    def fixed_tokens() -> tuple[int, int]:
        """The free tools' tokens with their groups' rules, and the discovery tool's."""
        free_groups = {registry.group_of(n) for n in free} - set(groups)
        free_tokens = sum(tokens_of(n) for n in free if n != tool_search)
        free_tokens += sum(rules_tokens(g) for g in free_groups if g is not None)
        return free_tokens, tokens_of(tool_search) if tool_search else 0

    def count() -> int:
        shown = len(free) - (1 if tool_search and not held else 0)
        return shown + sum(len(m) for g, m in groups.items() if g not in held)

    def tokens() -> int:
        free_tokens, search_tokens = fixed_tokens()
        # The discovery tool is sent only while something is held back: it counts then.
        extra = search_tokens if held else 0
        return free_tokens + extra + sum(size(g) for g in groups if g not in held)

    def over_limit() -> bool:
        return count() > limit

    def over_reserve() -> bool:
        # Room for the run's loads: best effort, never worth an eager group.
        return bool(held) and count() + reserve > limit

    def over_tokens() -> bool:
        return discovery and not math.isinf(budget) and tokens() > budget

    while over_limit() or over_reserve() or over_tokens():
        open_groups = [g for g in groups if g not in held]
        eager = {g for g in open_groups if load_mode(registry, load_modes, g) == "eager"}
        if not discovery:
            # Without a discovery tool only the count limit holds groups back:
            # eager groups last, then connected servers first, then the largest.
            ranked = sorted(
                open_groups,
                key=lambda g: (
                    g in eager,
                    not registry.group(g).dynamic,
                    -len(groups[g]),
                    g,
                ),
            )
        else:
            candidates = [g for g in open_groups if g not in eager]
            if not candidates and over_limit():
                candidates = open_groups
            ranked = sorted(candidates, key=lambda g: (-size(g), g))
        if not ranked:
            if over_limit() or over_tokens():
                reasons.append("over the limits with nothing left to hold back")
            break
        chosen = ranked[0]
        why = (
            "tool count"
            if over_limit()
            else "room for loads under the tool count"
            if over_reserve()
            else "token budget"
        )
        held.add(chosen)
        reasons.append(f"{chosen}: held back for the {why}")
    return held
