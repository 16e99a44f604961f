"""Call admission: what the surface answers to each tool call of one model message.

Models misremember names, call tools that were never listed, guess at arguments, and now
and then emit the same call a thousand times. Each call gets a verdict, in the order the
model asked: run it, refuse it with a message (so every call keeps a result and the next
request stays valid), or give the group's rules first. A tool the run may not call is never
revealed: it is answered exactly like a name that does not exist.

Admission changes nothing: :func:`admit` reads an :class:`Admission` (what the run admits
and advertised, the rules given) and returns the verdicts with their effects (load a tool or
a group, mark rules given, note a use, emit an event), which ``ToolSurface.admit`` applies
in order. So this module needs nothing of the surface.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from toolsurface.admission.name_case import CaseIndex, ambiguous_text
from toolsurface.admission.rules import render_rules
from toolsurface.admission.text import nearest_names, quoted_name, safe_text, tool_line
from toolsurface.models import Tool

__all__ = [
    "ARGUMENT_ERRORS",
    "NEAR_NAMES_PER_MESSAGE",
    "Admission",
    "Admitted",
    "Effect",
    "Emit",
    "GiveRules",
    "LoadGroup",
    "LoadTool",
    "NoteUse",
    "ToolCall",
    "Verdict",
    "admit",
    "admit_calls",
    "failure_text",
]

#: Exceptions that say a call's arguments were wrong.
ARGUMENT_ERRORS: tuple[type[BaseException], ...] = (
    ValidationError,
    TypeError,
    ValueError,
    KeyError,
)
Action = Literal["run", "refuse", "rules"]
NotRun = Literal["", "unknown", "ambiguous", "capped", "rules"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model message."""

    name: str
    arguments: Any = None
    id: str = ""


@dataclass(frozen=True)
class Verdict:
    """The surface's answer to a call: run it, or return ``message`` as its result.

    ``call`` is the call to run: when the model wrote an admitted name in another case (and
    only one name matches that way) it carries the exact name, and ``asked_name`` what the
    model wrote; the id and arguments are the model's.
    """

    call: ToolCall
    action: Action
    message: str = ""
    blind: bool = False
    not_run: NotRun = ""
    asked_name: str = ""

    @property
    def runs(self) -> bool:
        """Whether the host should run the tool."""
        return self.action == "run"

    @property
    def never_ran(self) -> bool:
        """The tool did not run: nothing to charge to a circuit breaker or an error streak."""
        return self.action != "run"


@dataclass(frozen=True)
class LoadTool:
    """Effect: load a tool the model called blind (not in the request)."""

    name: str


@dataclass(frozen=True)
class LoadGroup:
    """Effect: load a whole group, because the model called one of its tools blind."""

    group: str


@dataclass(frozen=True)
class GiveRules:
    """Effect: the model has now been given a group's rules."""

    group: str


@dataclass(frozen=True)
class NoteUse:
    """Effect: a call of ``name`` runs; its loaded entry's last use moves."""

    name: str


@dataclass(frozen=True)
class Emit:
    """Effect: report an event to the host."""

    kind: str
    data: dict[str, Any]


#: What admitting a message changes, applied by the surface in this order.
Effect = LoadTool | LoadGroup | GiveRules | NoteUse | Emit


@dataclass(frozen=True)
class Admission:
    """What admission reads of a run: it never writes to it (see :class:`Effect`)."""

    #: The names the run may call, in name order.
    admitted: Sequence[str]
    #: The names of the request the run planned last.
    advertised: Collection[str]
    #: Groups whose rules the model had been given before this message.
    rules_given: Collection[str]
    #: Calls run per message at most (0: no cap).
    cap: int
    #: The run's mark (see toolsurface.surface.rules).
    mark: str
    group_of: Callable[[str], str | None]
    rules_of: Callable[[str], str | None]
    tool: Callable[[str], Tool]
    #: ``admitted`` as a set, when the caller keeps one (else made per message).
    admitted_set: Collection[str] | None = None
    #: ``admitted`` by case-folded name, when the caller keeps one (else made on a miss).
    case_index: CaseIndex | None = None
    #: What loading ``names`` would add to the next request's definitions, in tokens, and
    #: the room the token budget leaves (``None``: no budget, every load fits).
    load_cost: Callable[[Sequence[str]], tuple[int, float]] | None = None
    #: A group's tools in name order, when the caller has a membership map (else a scan).
    group_members: Callable[[str], Sequence[str]] | None = None
    #: Whether a blind call loads its tool (or group): not under native delivery, where
    #: only a reference or a search output makes a definition visible.
    loads_blind: bool = True
    #: The admitted name a provider-safe alias stands for (see provider_names), or None;
    #: asked only for a name that is not admitted as it is.
    alias_of: Callable[[str], str | None] | None = None
    #: The name the model calls a tool by in text written for it (an alias, or the name).
    shown: Callable[[str], str] = str


@dataclass(frozen=True)
class Admitted:
    """The verdicts of one message, in the order the model asked, and their effects."""

    verdicts: list[Verdict]
    effects: list[Effect] = field(default_factory=list)


class _Registry(Protocol):
    def get(self, name: str) -> Tool: ...


class _Surface(Protocol):
    """What ``admit_calls`` and ``failure_text`` need of a surface (a ToolSurface)."""

    @property
    def registry(self) -> _Registry: ...
    def admits(self, name: str) -> bool: ...
    def admit(self, calls: Sequence[ToolCall]) -> list[Verdict]: ...


#: Distinct unknown names of one message that get near names; the rest get the plain
#: refusal. A model that invents more than this in one message is not helped by more
#: suggestions, and the host's cost of one message stays bounded.
NEAR_NAMES_PER_MESSAGE = 16


def _unknown(
    call: ToolCall, admitted: Sequence[str], suggest: bool, shown: Callable[[str], str]
) -> Verdict:
    asked = call.name if isinstance(call.name, str) else ""
    near = nearest_names(asked, admitted) if suggest else []
    text = f"Unknown tool {quoted_name(asked, 128)}: no such tool is available to you."
    if near:
        text += f" Closest: {', '.join(map(shown, near))}."
    return Verdict(call, "refuse", text, not_run="unknown")


def admit(run: Admission, calls: Sequence[ToolCall]) -> Admitted:
    """Verdicts for the calls of one model message, and the effects to apply, in order.

    Nothing here changes the run: loads, rules given, uses and events come back as
    effects, which the surface applies in order (see ToolSurface.admit).
    """
    cap = run.cap
    admitted = run.admitted
    admitted_set = run.admitted_set if run.admitted_set is not None else frozenset(admitted)
    verdicts: list[Verdict] = []
    effects: list[Effect] = []
    capped = 0
    # Groups whose rules this message handed out: the model wrote its other calls before it
    # saw them, so the rules count as given only from the next message on.
    ruled_now: set[str] = set()
    unknown: set[str] = set()
    case_index = run.case_index
    budget = _LoadBudget(run.load_cost)
    for i, call in enumerate(calls):
        if cap and i >= cap:
            capped += 1
            verdicts.append(
                Verdict(
                    call,
                    "refuse",
                    f"Not run: this message asked for {len(calls)} tool calls and at most "
                    f"{cap} run per message. Call the ones you still need in your next step.",
                    not_run="capped",
                )
            )
            continue
        asked = ""
        if isinstance(call.name, str) and call.name not in admitted_set:
            real = run.alias_of(call.name) if run.alias_of is not None else None
            if real is not None:  # a provider-safe alias the request carried
                asked, call = call.name, dataclasses.replace(call, name=real)
        if isinstance(call.name, str) and call.name not in admitted_set:
            if case_index is None:
                case_index = CaseIndex(admitted)
            same = case_index.match(call.name)
            if len(same) > 1:
                text = ambiguous_text("tool", safe_text(call.name, 128), same)
                verdicts.append(Verdict(call, "refuse", text, not_run="ambiguous"))
                continue
            if same:
                asked = call.name
                call = dataclasses.replace(call, name=same[0])
                effects.append(Emit("tool_name_case_fixed", {"asked": asked, "name": same[0]}))
        if not isinstance(call.name, str) or call.name not in admitted_set:
            unknown.add(call.name if isinstance(call.name, str) else "")
            suggest = len(unknown) <= NEAR_NAMES_PER_MESSAGE
            verdicts.append(_unknown(call, run.admitted, suggest, run.shown))
            continue
        verdict = _admit_known(run, call, ruled_now, budget, effects)
        verdicts.append(dataclasses.replace(verdict, asked_name=asked) if asked else verdict)
    if capped:
        effects.append(
            Emit("tool_calls_capped", {"refused": capped, "cap": cap, "asked": len(calls)})
        )
    return Admitted(verdicts, effects)


class _LoadBudget:
    """The token room for one message's loads: asked of the run once, then spent locally.

    Admission applies nothing, so the loads of earlier calls in the message are not in the
    run yet; their cost is kept here instead.
    """

    def __init__(self, load_cost: Callable[[Sequence[str]], tuple[int, float]] | None) -> None:
        self._load_cost = load_cost
        self._spent = 0

    def take(self, names: Sequence[str]) -> tuple[bool, int, float]:
        """Whether ``names`` fit (spending their cost if so), their cost and the room left."""
        if self._load_cost is None:
            return True, 0, math.inf
        cost, room = self._load_cost(names)
        room -= self._spent
        if cost > room:
            return False, cost, max(room, 0.0)
        self._spent += cost
        return True, cost, room - cost


def _admit_known(
    run: Admission,
    call: ToolCall,
    ruled_now: set[str],
    budget: _LoadBudget,
    effects: list[Effect],
) -> Verdict:
    """The verdict for a call of an admitted tool; its effects are appended to ``effects``."""
    name = call.name
    blind = name not in run.advertised
    group = run.group_of(name)
    rules = run.rules_of(group) if group is not None else None
    if blind and group is not None and rules and group in ruled_now:
        return _after_rules(call, group, run.shown(name))
    if blind and group is not None and rules and group not in run.rules_given:
        ruled_now.add(group)
        members = _members(run, group)
        fits, cost, room = budget.take(members) if run.loads_blind else (False, 0, 0.0)
        if fits:
            where = "The whole group is now in your tool list"
            effects.append(LoadGroup(group))
        elif run.loads_blind:
            where = (
                f"The group does not fit in your tool list (about {int(room)} tokens are "
                "free), so it was not loaded"
            )
            effects.append(Emit("tool_group_not_loaded", _over_budget(group, cost, room)))
        else:
            where = "Load the group with ToolSearch to see its tools"
        effects.append(GiveRules(group))
        return _rules_first(run, call, group, rules, members, where)
    if blind:
        effects.append(Emit("tool_unadvertised_call", {"name": name, "id": call.id}))
        if run.loads_blind:  # under native delivery it runs; only a search shows it
            fits, cost, room = budget.take([name])
            load = LoadTool(name) if fits else None
            effects.append(load or Emit("tool_not_loaded", _over_budget(name, cost, room)))
    effects.append(NoteUse(name))
    return Verdict(call, "run", blind=blind)


def _members(run: Admission, group: str) -> list[str]:
    """The group's tools the run may call, in name order."""
    if run.group_members is None:
        return [n for n in run.admitted if run.group_of(n) == group]
    admitted = run.admitted_set if run.admitted_set is not None else frozenset(run.admitted)
    return [n for n in run.group_members(group) if n in admitted]


def _over_budget(name: str, cost: int, room: float) -> dict[str, Any]:
    """An event's data for a load the token budget had no room for."""
    return {"name": name, "tokens": cost, "room": int(room), "why": "token budget"}


def admit_calls(surface: _Surface, calls: Sequence[ToolCall]) -> list[Verdict]:
    """Verdicts for the calls of one model message, in order: ``surface.admit(calls)``.

    Kept for hosts that called it before :meth:`ToolSurface.admit` existed; the surface
    admits and applies the effects.
    """
    return surface.admit(calls)


def _rules_first(
    run: Admission,
    call: ToolCall,
    group: str,
    rules: str,
    members: Sequence[str],
    where: str,
) -> Verdict:
    """Give the group's rules, name its other tools and the called tool's line.

    The caller adds the effects (the group loaded, or not: ``where`` says which to the
    model) and the rules given.
    """
    others = [run.shown(n) for n in members if n != call.name]
    tool = run.tool(call.name)
    called = run.shown(call.name)
    lines = [
        f"Not run yet: {called} belongs to the group {group}, whose rules come first. "
        f"{where}; call {called} again after reading them.",
        render_rules(group, rules, run.mark),
    ]
    if others:
        lines.append(f"The group's other tools: {', '.join(others)}.")
    lines.append(f"It takes: {tool_line(tool, called)}")
    return Verdict(call, "rules", "\n".join(lines), blind=True, not_run="rules")


def _after_rules(call: ToolCall, group: str, called: str) -> Verdict:
    """Refuse a later call of a group whose rules this same message received, unseen by it.

    ``called`` is the name the model calls the tool by.
    """
    text = (
        f"Not run: this call was written before the rules of the group {group}, given above "
        f"in this step. Call {called} again after reading them."
    )
    return Verdict(call, "refuse", text, blind=True, not_run="rules")


def failure_text(
    surface: _Surface,
    verdict: Verdict,
    error: BaseException | str,
    *,
    argument_error: bool | None = None,
) -> str:
    """The error text for a failed call, with the tool's line for a blind argument failure.

    A blind call (of a tool the request did not list) that fails on its arguments ends
    with "It takes: ..." so that the next try is not another guess.

    ``argument_error`` defaults to whether ``error`` is one of :data:`ARGUMENT_ERRORS`; pass
    ``True`` for an error result the tool itself counts as a failure on its arguments.
    """
    text = error if isinstance(error, str) else (str(error) or type(error).__name__)
    if argument_error is None:
        argument_error = isinstance(error, ARGUMENT_ERRORS)
    name = verdict.call.name
    if (
        verdict.blind
        and verdict.action == "run"
        and argument_error
        and isinstance(name, str)
        and surface.admits(name)
    ):
        text = f"{text}\nIt takes: {tool_line(surface.registry.get(name))}"
    return text
