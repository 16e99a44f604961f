"""What the model does to a run: its tool calls admitted, its ToolSearch calls answered.

:class:`ModelMoves` is the part of :class:`~toolsurface.surface.surface.ToolSurface` that
takes the model's moves: ``admit`` judges the calls of one message (see
:mod:`toolsurface.dispatch`) and applies the effects of its verdicts; ``tool_search``
searches, selects or loads a group and writes the answer (under native delivery, in the
provider's own form too). The surface hands each move the run as it is then (a
:class:`Moment`); the moves own only what they learn from (the searches that may teach).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from toolsurface.admission.admit import (
    Admission,
    GiveRules,
    LoadGroup,
    LoadTool,
    NoteUse,
    ToolCall,
    Verdict,
    admit,
)
from toolsurface.admission.rules import RulesLedger
from toolsurface.registry.view import RegistryView
from toolsurface.surface.costs import TokenCosts
from toolsurface.surface.deferral import Decision
from toolsurface.surface.delivery import Delivery, native_answer, tool_search_call
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.plan import RequestPlan
from toolsurface.surface.search import ToolSearchResult, answer_tool_search
from toolsurface.surface.state import LoadHow, RunState, entry_tools
from toolsurface.surface.usage import UsageWindow
from toolsurface.tools.toolsearch import parse_tool_search_arguments

__all__ = ["ModelMoves", "Moment"]


class _Learns(Protocol):
    """The registry, as far as the moves teach it."""

    def learn(self, query: str, tool_name: str, *, session: str | None = None) -> bool: ...


class _Surface(Protocol):
    """What the moves read of the surface they act on: its public face."""

    @property
    def registry(self) -> _Learns: ...
    @property
    def session_id(self) -> str: ...
    @property
    def limits(self) -> SurfaceLimits: ...
    @property
    def delivery(self) -> Delivery: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def discovery_tool(self) -> str | None: ...
    @property
    def mark(self) -> str: ...
    def rules_of(self, group: str) -> str | None: ...
    def description_of(self, group: str) -> str | None: ...
    def note_tool_used(self, name: str) -> None: ...
    def admits(self, name: str) -> bool: ...
    def shown(self, name: str) -> str: ...
    def emit(self, kind: str, data: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Moment:
    """The run as one move finds it, handed over by the surface for that move.

    ``view`` is the operation's registry view; ``decide`` the live decision (made when a
    move first needs it); ``advertised`` the names of the request last planned and
    ``planned`` that request (planned now if there is none); ``run`` the run's loads,
    which ``load`` adds to (with its event); ``rules`` the ledger of rules given, which a
    move adds to; ``rules_tokens`` prices a group's rules.
    """

    view: RegistryView
    decide: Callable[[], Decision]
    advertised: frozenset[str]
    planned: Callable[[], RequestPlan]
    run: RunState
    rules: RulesLedger
    load: Callable[[Literal["tool", "group"], str, LoadHow], bool]
    rules_tokens: Callable[[str], int]


class ModelMoves:
    """The model's moves on a surface: its tool calls admitted, its ToolSearch calls answered.

    Owns the window of searches that may still teach the registry (with ``learns``) and
    prices loads with ``costs``; reads the surface through its public face, and the run
    through the :class:`Moment` each move is handed.
    """

    def __init__(self, surface: _Surface, costs: TokenCosts, *, learns: bool) -> None:
        self._surface = surface
        self._costs = costs
        # Searches that may still teach the registry; None: the run learns nothing.
        self._usage = UsageWindow() if learns else None

    def restart(self) -> None:
        """Forget the searches seen: a restored run goes on without them (docs/tools.md)."""
        if self._usage is not None:
            self._usage = UsageWindow()

    def admit(self, calls: Sequence[ToolCall], now: Moment) -> list[Verdict]:
        """Verdicts for one model message's calls, effects applied (``ToolSurface.admit``)."""
        surface, reg = self._surface, now.view
        decision = now.decide()
        run = Admission(
            admitted=decision.admitted,
            admitted_set=decision.admitted_set,
            advertised=now.advertised,
            rules_given=frozenset(now.rules.given),
            cap=surface.limits.max_tool_calls_per_turn,
            mark=surface.mark,
            group_of=reg.group_of,
            rules_of=surface.rules_of,
            tool=reg.get,
            case_index=decision.case_index,
            load_cost=self._load_cost_or_none(now),
            group_members=reg.group_members,
            loads_blind=surface.delivery == "append",
            alias_of=lambda name: decision.aliases.get(name),
            shown=surface.shown,
        )
        done = admit(run, calls)
        for effect in done.effects:
            if isinstance(effect, LoadTool):
                now.load("tool", effect.name, "blind")
            elif isinstance(effect, LoadGroup):
                now.load("group", effect.group, "blind")
            elif isinstance(effect, GiveRules):
                now.rules.given.add(effect.group)
            elif isinstance(effect, NoteUse):
                surface.note_tool_used(effect.name)
            else:
                surface.emit(effect.kind, effect.data)
        if self._usage is not None:
            self._learn_from(self._usage, done.verdicts)
        return done.verdicts

    def _learn_from(self, usage: UsageWindow, verdicts: Sequence[Verdict]) -> None:
        """Teach the registry the pairs these verdicts close (see surface/usage.py)."""
        surface = self._surface
        for query, name in usage.ran(verdicts, surface.admits):
            # Only an admitted tool gets here, so the event never names a blocked one.
            # Taught by this session: once per pair, ranking only once enough sessions did.
            if surface.registry.learn(query, name, session=surface.session_id):
                surface.emit("tool_hint_learned", {"query": query, "tool": name})

    def tool_search(self, arguments: Any, now: Moment) -> ToolSearchResult:
        """Run a ToolSearch call: search, select or load (``ToolSurface.tool_search``)."""
        surface = self._surface
        call = tool_search_call(arguments) if surface.delivery == "native" else None
        request = parse_tool_search_arguments(arguments if call is None else call[0])
        if request.empty:
            result = ToolSearchResult.refusal(request.refusal)
        else:
            result = answer_tool_search(
                request,
                now.decide(),
                now.advertised,
                registry=now.view,
                limits=surface.limits,
                room_for_loads=lambda: self._room_for_loads(now),
                load=now.load,
                give_rules=lambda groups: now.rules.give(groups, surface.rules_of, surface.mark),
                load_cost=self._load_cost_or_none(now),
                describe_group=surface.description_of,
                shown=surface.shown,
            )
            if self._usage is not None and not result.refused and request.query:
                # The discovery tool is never taught: calling it again is no sign of a find.
                found = [n for n in result.matches if n != surface.discovery_tool]
                self._usage.searched(request.query, found)
        if surface.delivery == "append" or surface.provider is None:
            return result
        call_id = "" if call is None else call[1]
        spaces = now.planned().spaces
        return native_answer(result, surface.provider, call_id, now.view, spaces)

    def _room_for_loads(self, now: Moment) -> int | None:
        """How many loaded tools the provider's count limit leaves room for (None: no limit)."""
        limit = self._surface.limits.max_advertised_tools
        if limit is None:
            return None
        plan = now.planned()
        fixed = sum(1 for src in plan.sources if src != "loaded")
        return limit - fixed

    def _load_cost_or_none(
        self, now: Moment
    ) -> Callable[[Sequence[str]], tuple[int, float]] | None:
        """The pricing of loads under the token budget, or ``None`` without a budget."""
        if math.isinf(self._surface.limits.token_budget):
            return None
        return lambda names: self._load_cost(names, now)

    def _load_cost(self, names: Sequence[str], now: Moment) -> tuple[int, float]:
        """What loading ``names`` adds to the next request (its tools and loads), and room."""
        d = now.decide()
        listed = set(now.planned().names)
        for entry in now.run.entries():
            listed.update(entry_tools(entry, d, now.view))
        return self._costs.of_load(
            names,
            listed=listed,
            rules_tokens=(now.rules_tokens(g) for g in now.rules.catalogue or ()),
            budget=self._surface.limits.token_budget,
        )
