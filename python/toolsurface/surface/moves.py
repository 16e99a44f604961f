"""What the model does to a run: its tool calls admitted, its ToolSearch calls answered.

:class:`ModelMoves` is the part of :class:`~toolsurface.surface.surface.ToolSurface` that
takes the model's moves: ``admit`` judges the calls of one message (see
:mod:`toolsurface.dispatch`) and applies the effects of its verdicts; ``tool_search``
searches, selects or loads a group and writes the answer (under native delivery, in the
provider's own form too). The surface holds the state both read and write.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from toolsurface.admission.admit import (
    Admission,
    GiveRules,
    LoadGroup,
    LoadTool,
    NoteUse,
    ToolCall,
    Verdict,
    admit,
    failure_text,
)
from toolsurface.admission.rules import RulesLedger
from toolsurface.registry import ToolRegistry
from toolsurface.registry.view import RegistryView, one_view
from toolsurface.surface.costs import TokenCosts
from toolsurface.surface.deferral import Decision
from toolsurface.surface.delivery import Delivery, native_answer, tool_search_call
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.plan import RequestPlan
from toolsurface.surface.search import ToolSearchResult, answer_tool_search
from toolsurface.surface.state import LoadHow, RunState, entry_tools
from toolsurface.surface.usage import UsageWindow
from toolsurface.tools.toolsearch import parse_tool_search_arguments

__all__ = ["ModelMoves"]


class ModelMoves:
    """The model's moves on a run; the surface holds the state they read and write."""

    registry: ToolRegistry
    limits: SurfaceLimits
    delivery: Delivery
    provider: str | None
    _pinned: RegistryView | None
    _last_plan: RequestPlan | None
    _rules: RulesLedger
    _run: RunState
    _costs: TokenCosts
    _usage: UsageWindow | None
    discovery_tool: str | None
    # The surface's own (annotated only, so that nothing here stands in for them).
    _begin_operation: Callable[[], None]
    _decide: Callable[[], Decision]
    _load: Callable[[Literal["tool", "group"], str, LoadHow], bool]
    _rules_tokens: Callable[[str], int]
    rules_of: Callable[[str], str | None]
    description_of: Callable[[str], str | None]
    note_tool_used: Callable[[str], None]
    admits: Callable[[str], bool]
    shown: Callable[[str], str]
    emit: Callable[[str, dict[str, Any]], None]
    plan: Callable[..., RequestPlan]

    @property
    def _v(self) -> RegistryView:
        raise NotImplementedError  # the surface's own

    @property
    def mark(self) -> str:
        """The run's rules mark (the surface's own)."""
        raise NotImplementedError

    @one_view
    def admit(self, calls: Sequence[ToolCall]) -> list[Verdict]:
        """Verdicts for the tool calls of one model message, in order (see dispatch).

        Admission reads the run and returns the effects of its verdicts (blind loads, rules
        given, uses, events); they are applied here, in the order admission made them.

        A held-back tool called by its exact name runs (blind) and is loaded; a name that
        does not exist is refused with the nearest names.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> from toolsurface.admission.admit import ToolCall
        >>> _ = surface.plan()
        >>> [(v.action, v.blind) for v in surface.admit([ToolCall("gh__list_issues", {})])]
        [('run', True)]
        """
        reg = self._v
        decision = self._decide()
        run = Admission(
            admitted=decision.admitted,
            admitted_set=decision.admitted_set,
            advertised=self._last_plan.name_set if self._last_plan else frozenset(),
            rules_given=frozenset(self._rules.given),
            cap=self.limits.max_tool_calls_per_turn,
            mark=self.mark,
            group_of=reg.group_of,
            rules_of=self.rules_of,
            tool=reg.get,
            case_index=decision.case_index,
            load_cost=self._load_cost_or_none(),
            group_members=reg.group_members,
            loads_blind=self.delivery == "append",
            alias_of=lambda name: decision.aliases.get(name),
            shown=self.shown,
        )
        done = admit(run, calls)
        for effect in done.effects:
            if isinstance(effect, LoadTool):
                self._load("tool", effect.name, "blind")
            elif isinstance(effect, LoadGroup):
                self._load("group", effect.group, "blind")
            elif isinstance(effect, GiveRules):
                self._rules.given.add(effect.group)
            elif isinstance(effect, NoteUse):
                self.note_tool_used(effect.name)
            else:
                self.emit(effect.kind, effect.data)
        if self._usage is not None:
            self._learn_from(done.verdicts)
        return done.verdicts

    def _learn_from(self, verdicts: Sequence[Verdict]) -> None:
        """Teach the registry the pairs these verdicts close (see surface/usage.py)."""
        assert self._usage is not None
        for query, name in self._usage.ran(verdicts, self.admits):
            # Only an admitted tool gets here, so the event never names a blocked one.
            if self.registry.learn(query, name):
                self.emit("tool_hint_learned", {"query": query, "tool": name})

    @one_view
    def failure_text(
        self, verdict: Verdict, error: BaseException | str, *, argument_error: bool | None = None
    ) -> str:
        """Error text for a failed call; a blind call's argument failure gets the tool's line."""
        return failure_text(self, verdict, error, argument_error=argument_error)

    @one_view
    def tool_search(self, arguments: Any) -> ToolSearchResult:
        """Run a ToolSearch call: search, select or load a group; the surface does the loading.

        Only what the live policy and allowlist admit is searched, loaded or named; "already
        in your tool list" is judged against the request this surface last planned.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.plan()
        >>> surface.tool_search({"query": "list the issues"}).loaded
        ('gh__list_issues',)
        >>> surface.plan().names
        ('fs__read', 'ToolSearch', 'gh__list_issues')
        """
        call = tool_search_call(arguments) if self.delivery == "native" else None
        request = parse_tool_search_arguments(arguments if call is None else call[0])
        if request.empty:
            result = ToolSearchResult.refusal(request.refusal)
        else:
            result = answer_tool_search(
                request,
                self._decide(),
                self._advertised(),
                registry=self._v,
                limits=self.limits,
                room_for_loads=self._room_for_loads,
                load=self._load,
                give_rules=lambda groups: self._rules.give(groups, self.rules_of, self.mark),
                load_cost=self._load_cost_or_none(),
                describe_group=self.description_of,
                shown=self.shown,
            )
            if self._usage is not None and not result.refused:
                # The discovery tool is never taught: calling it again is no sign of a find.
                found = [n for n in result.matches if n != self.discovery_tool]
                self._usage.searched(request.query, found)
        if self.delivery == "append" or self.provider is None:
            return result
        return native_answer(result, self.provider, "" if call is None else call[1], self._v)

    def _room_for_loads(self) -> int | None:
        """How many loaded tools the provider's count limit leaves room for (None: no limit)."""
        limit = self.limits.max_advertised_tools
        if limit is None:
            return None
        plan = self._last_plan or self.plan()
        fixed = sum(1 for src in plan.sources if src != "loaded")
        return limit - fixed

    def _load_cost_or_none(self) -> Callable[[Sequence[str]], tuple[int, float]] | None:
        """The pricing of loads under the token budget, or ``None`` without a budget."""
        return None if math.isinf(self.limits.token_budget) else self._load_cost

    def _load_cost(self, names: Sequence[str]) -> tuple[int, float]:
        """What loading ``names`` adds to the next request (its tools and loads), and room."""
        d = self._decide()
        listed = set((self._last_plan or self.plan()).names)
        for entry in self._run.entries():
            listed.update(entry_tools(entry, d, self._v))
        return self._costs.of_load(
            names,
            listed=listed,
            rules_tokens=(self._rules_tokens(g) for g in self._rules.catalogue or ()),
            budget=self.limits.token_budget,
        )

    def _advertised(self) -> frozenset[str]:
        return self._last_plan.name_set if self._last_plan else frozenset()
