"""Call admission: what the surface answers to each tool call of one model message.

Models misremember names, call tools that were never listed, guess at arguments, and now
and then emit the same call a thousand times. Each call gets a verdict, in the order the
model asked: run it, refuse it with a message (so every call keeps a result and the next
request stays valid), or give the group's rules first. A tool the run may not call is never
revealed: it is answered exactly like a name that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from toolsurface._text import nearest_names, safe_text, tool_line
from toolsurface.surface.rules import render_rules

if TYPE_CHECKING:
    from toolsurface.surface.surface import ToolSurface

__all__ = ["ARGUMENT_ERRORS", "ToolCall", "Verdict", "admit_calls", "failure_text"]

#: Exceptions that say a call's arguments were wrong.
ARGUMENT_ERRORS: tuple[type[BaseException], ...] = (
    ValidationError,
    TypeError,
    ValueError,
    KeyError,
)
Action = Literal["run", "refuse", "rules"]
NotRun = Literal["", "unknown", "capped", "rules"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model message."""

    name: str
    arguments: Any = None
    id: str = ""


@dataclass(frozen=True)
class Verdict:
    """The surface's answer to a call: run it, or return ``message`` as its result."""

    call: ToolCall
    action: Action
    message: str = ""
    blind: bool = False
    not_run: NotRun = ""

    @property
    def runs(self) -> bool:
        """Whether the host should run the tool."""
        return self.action == "run"

    @property
    def never_ran(self) -> bool:
        """The tool did not run: nothing to charge to a circuit breaker or an error streak."""
        return self.action != "run"


def _unknown(surface: ToolSurface, call: ToolCall, admitted: Sequence[str]) -> Verdict:
    asked = call.name if isinstance(call.name, str) else ""
    near = nearest_names(asked, admitted)
    text = f"Unknown tool {safe_text(asked, 128)!r}: no such tool is available to you."
    if near:
        text += f" Closest: {', '.join(near)}."
    return Verdict(call, "refuse", text, not_run="unknown")


def admit_calls(surface: ToolSurface, calls: Sequence[ToolCall]) -> list[Verdict]:
    """Verdicts for the calls of one model message, in the order the model asked."""
    cap = surface.limits.max_tool_calls_per_turn
    advertised = set(surface.last_plan_names())
    admitted = [n for n in surface.registry.names() if surface.admits(n)]
    admitted_set = set(admitted)
    verdicts: list[Verdict] = []
    capped = 0
    # Groups whose rules this message handed out: the model wrote its other calls before it
    # saw them, so the rules count as given only from the next message on.
    ruled_now: set[str] = set()
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
        name = call.name
        if not isinstance(name, str) or name not in admitted_set:
            verdicts.append(_unknown(surface, call, admitted))
            continue
        blind = name not in advertised
        group = surface.registry.group_of(name)
        rules = surface.rules_of(group) if group is not None else None
        if blind and group is not None and rules and group in ruled_now:
            verdicts.append(_after_rules(call, group))
            continue
        if blind and group is not None and rules and group not in surface.rules_given():
            ruled_now.add(group)
            verdicts.append(_rules_first(surface, call, group, rules, admitted))
            continue
        if blind:
            surface.emit("tool_unadvertised_call", {"name": name, "id": call.id})
            surface.load_blind(name)
        surface.note_tool_used(name)
        verdicts.append(Verdict(call, "run", blind=blind))
    if capped:
        surface.emit("tool_calls_capped", {"refused": capped, "cap": cap, "asked": len(calls)})
    return verdicts


def _rules_first(
    surface: ToolSurface, call: ToolCall, group: str, rules: str, admitted: Sequence[str]
) -> Verdict:
    """Load the whole group, give its rules, name its other tools and the called tool's line."""
    surface.load_group_blind(group)
    surface.mark_rules_given(group)
    members = [n for n in admitted if surface.registry.group_of(n) == group]
    others = [n for n in members if n != call.name]
    tool = surface.registry.get(call.name)
    lines = [
        f"Not run yet: {call.name} belongs to the group {group}, whose rules come first. "
        f"The whole group is now in your tool list; call {call.name} again after reading them.",
        render_rules(group, rules, surface.mark),
    ]
    if others:
        lines.append(f"The group's other tools: {', '.join(others)}.")
    lines.append(f"It takes: {tool_line(tool)}")
    return Verdict(call, "rules", "\n".join(lines), blind=True, not_run="rules")


def _after_rules(call: ToolCall, group: str) -> Verdict:
    """Refuse a later call of a group whose rules this same message received, unseen by it."""
    text = (
        f"Not run: this call was written before the rules of the group {group}, given above "
        f"in this step. Call {call.name} again after reading them."
    )
    return Verdict(call, "refuse", text, blind=True, not_run="rules")


def failure_text(
    surface: ToolSurface,
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
