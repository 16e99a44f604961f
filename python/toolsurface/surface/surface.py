"""ToolSurface: one run's tool list, what it holds back, and what the model loaded.

It is a state machine with no I/O: the host's loop tells it what happened (the policy, the
model's ToolSearch calls, tool dispatches, turn ends, compactions) and asks it what to send
(:meth:`ToolSurface.plan`). The decision of what is held back is made when the run starts and
again only when the catalogue, the groups or the policy change; the run's own loads never
reopen it. Loaded tools are appended after the name-sorted base in discovery order, so a
load changes only the end of the request and a provider's prompt cache keeps the prefix.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from toolsurface._text import safe_text
from toolsurface.dispatch import (
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
from toolsurface.groups import LoadMode
from toolsurface.models import Tool
from toolsurface.providers import name_problems, provider_spec
from toolsurface.registry import ToolRegistry
from toolsurface.rules import MarkScope, RulesLedger, check_mark_settings, run_mark
from toolsurface.snapshot import SnapshotError, SurfaceSnapshot, check_seal, parse_snapshot
from toolsurface.surface.costs import TokenCosts
from toolsurface.surface.deferral import Decision, DecisionKey, decide
from toolsurface.surface.events import Event, report
from toolsurface.surface.held_back import catalogue_block
from toolsurface.surface.limits import DeferralMode, SurfaceLimits, estimate_tokens
from toolsurface.surface.plan import RequestPlan, list_tools
from toolsurface.surface.policy import Policy, _check_policy, _names, _names_or_none, admits
from toolsurface.surface.resume import resumed, snapshot_of
from toolsurface.surface.search import ToolSearchResult, answer_tool_search
from toolsurface.surface.state import LoadedEntry, LoadHow, RunState, entry_tools
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, parse_tool_search_arguments

__all__ = [
    "DeferralMode",
    "Event",
    "LoadHow",
    "LoadedEntry",
    "Policy",
    "RequestPlan",
    "SurfaceLimits",
    "ToolSearchResult",
    "ToolSurface",
    "estimate_tokens",
]

_log = logging.getLogger("toolsurface.surface")


class ToolSurface:
    """One run's tool surface over a (possibly shared) registry."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        policy: Policy = None,
        allowlist: Collection[str] | None = None,
        limits: SurfaceLimits | None = None,
        deferral_mode: DeferralMode = "auto",
        discovery_tool: str | None = TOOL_SEARCH_NAME,
        load_modes: Mapping[str, LoadMode] | None = None,
        pinned: Collection[str] = (),
        estimator: Callable[[Tool], int] = estimate_tokens,
        on_event: Callable[[Event], None] | None = None,
        session_id: str | None = None,
        provider: str | None = None,
        mark_key: bytes | None = None,
        mark_scope: MarkScope = "catalogue",
    ) -> None:
        if deferral_mode not in ("auto", "off"):
            raise ValueError(f"deferral_mode must be 'auto' or 'off', got {deferral_mode!r}")
        self.registry = registry
        self.provider = provider_spec(provider).name if provider is not None else None
        limits = limits or SurfaceLimits()
        if provider is not None and limits.max_advertised_tools is None:
            cap = provider_spec(provider).max_tools
            limits = limits.model_copy(update={"max_advertised_tools": cap})
        self.limits = limits
        self.deferral_mode: DeferralMode = deferral_mode
        self.discovery_tool = discovery_tool
        self.load_modes: dict[str, LoadMode] = dict(load_modes or {})
        self.pinned = _names(pinned, "pinned")
        self.on_event = on_event
        self._policy: Policy = _check_policy(policy)
        self._allowlist = _names_or_none(allowlist, "allowlist")
        self._policy_version = 0
        self._decision: Decision | None = None
        self._groups_for: tuple[DecisionKey, frozenset[str]] | None = None
        self._held_floor: frozenset[str] = frozenset()
        self._run = RunState()
        self.estimator = estimator
        self._costs = TokenCosts(registry.get, estimator)
        self._last_plan: RequestPlan | None = None
        self.session_id = session_id if session_id is not None else uuid.uuid4().hex
        self._session_given = session_id is not None
        self._mark_key = check_mark_settings(mark_key, mark_scope)
        self.mark_scope: MarkScope = mark_scope
        self._mark: str | None = None
        self._mark_for = -1  # the groups version the mark was made for
        self._rules = RulesLedger()
        self._started = False
        self._seed_tools: list[str] = []
        self._seed_groups: list[str] = []

    @property
    def mark(self) -> str:
        """The run's rules mark, under ``mark_key`` (or a per-process key without one).

        With ``mark_scope="catalogue"`` (the default) it is keyed on the registry's group
        rules, so sessions over the same registry send the same system prompt; when the
        rules change, so does the mark, and the rules are given again under it (the ledger
        starts over, as after a compaction). With ``"session"`` it is keyed on the session
        id and fixed for the run.
        """
        version = self.registry.groups_version
        if self._mark is None or (self.mark_scope == "catalogue" and self._mark_for != version):
            mark = self._fresh_mark(self.session_id)
            if self._mark is not None and mark != self._mark:
                self._rules.compacted()
            self._mark, self._mark_for = mark, version
        return self._mark

    def _fresh_mark(self, session_id: str) -> str:
        rules = ((g.name, g.rules) for g in self.registry.groups().values() if g.rules)
        return run_mark(self.mark_scope, session_id, rules, self._mark_key)

    # -- inputs from the host --------------------------------------------------------------

    def set_policy(self, policy: Policy, allowlist: Collection[str] | None = None) -> None:
        """Replace which tools the run may call (and a child run's allowlist)."""
        self._policy = _check_policy(policy)
        self._allowlist = _names_or_none(allowlist, "allowlist")
        self._policy_version += 1

    def admits(self, name: str) -> bool:
        """Whether the run may call ``name``: registered, and admitted by policy and allowlist."""
        return name in self.registry and admits(self._policy, self._allowlist, name)

    def note_tool_used(self, name: str) -> None:
        """Record a dispatch: a loaded tool's last use moves, and it is marked called."""
        self._run.note_use(name, self.registry.group_of)

    def end_turn(self) -> None:
        """A turn boundary: a safe point to unload the least recently used over the cap."""
        self._evict("turn")

    def compaction(self) -> None:
        """The host compacted the conversation: a safe point to unload over the cap.

        The next catalogue carries the rules of exactly the groups on the surface or still
        loaded, and only those count as given: a group the compaction unloaded gets its
        rules again when it comes back.
        """
        self._evict("compaction")
        self._rules.compacted()

    def snapshot(self) -> SurfaceSnapshot:
        """What the next request depends on, versioned and JSON-serialisable.

        The round trip: a snapshot taken as JSON, restored into a new surface over the same
        registry, gives the same next request, bytes and all (see :meth:`restore`).

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([
        ...     tool_search_tool(),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="github__list_issues", description="List the issues of a repo."),
        ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
        ... ])
        >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.plan()
        >>> _ = surface.tool_search({"select": ["github__create_issue"]})
        >>> saved = surface.snapshot().to_json()
        >>> again = ToolSurface(registry)
        >>> again.restore(saved)
        []
        >>> mine, theirs = surface.plan(), again.plan()
        >>> theirs.names == mine.names and theirs.catalogue == mine.catalogue
        True
        >>> again.session_id, again.discovered_tool_names()
        ('doc', ['github__create_issue'])
        """
        if self._seed_tools or self._seed_groups:
            self._apply_seeds(self._decide())
        d = self._decide()
        groups = self._admitted_groups(d)
        return snapshot_of(
            self._run,
            self._rules,
            held_floor=self._held_floor,
            session_id=self.session_id,
            mark=self.mark,
            tool_ok=d.admitted_set.__contains__,
            group_ok=groups.__contains__,
            key=self._mark_key,
        )

    def restore(self, snapshot: SurfaceSnapshot | Mapping[str, Any] | str | bytes) -> list[str]:
        """Take a snapshot's state: the same next request, bytes and all.

        The snapshot is validated whole before anything changes (a broken one raises
        :class:`~toolsurface.snapshot.SnapshotError` naming the field and leaves the surface
        as it was). A loaded tool or group that no longer exists is dropped with a warning
        in the log; the dropped names are returned. Restored held-back groups are a floor.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([
        ...     tool_search_tool(),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="github__list_issues", description="List the issues of a repo."),
        ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
        ... ])
        >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.tool_search({"group": "github"})
        >>> saved = surface.snapshot().to_json()
        >>> _ = registry.unregister("github__list_issues")
        >>> again = ToolSurface(registry)
        >>> again.restore(saved)
        []
        >>> again.loaded_tool_group_names(), again.plan().names
        (['github'], ('fs__read_file', 'ToolSearch', 'github__create_issue'))
        """
        snap = parse_snapshot(snapshot)
        check_seal(snap, self._mark_key)
        if self._session_given and snap.session_id != self.session_id:
            raise SnapshotError(
                f"snapshot: field 'session_id': {safe_text(snap.session_id, 64)!r} is another "
                f"session's (this surface is session {safe_text(self.session_id, 64)!r})"
            )
        version = self.registry.groups_version
        mark = self._fresh_mark(snap.session_id)
        state = resumed(snap, self.registry, same_mark=mark == snap.mark)
        self.session_id = snap.session_id
        self._mark, self._mark_for = mark, version
        self._run, self._rules = state.run, state.rules
        self._held_floor = state.held_floor
        self._decision = None
        self._started = True  # the same run goes on: its next request is the snapshot's
        self._seed_tools, self._seed_groups = [], []
        self._last_plan = None
        return state.dropped

    def seed(
        self, *, discovered_tools: Sequence[str] = (), loaded_tool_groups: Sequence[str] = ()
    ) -> None:
        """Seed a new run of a session with what its previous run used.

        Tools seeded count as called; each group is loaded whole as a group search would
        (only what the run may call, one entry under the cap, its rules in the first
        catalogue). Groups are looked up at the first plan, so one declared later is found.
        """
        self._seed_tools.extend(discovered_tools)
        self._seed_groups.extend(loaded_tool_groups)

    def _apply_seeds(self, d: Decision) -> None:
        admitted = set(d.admitted)
        for name in self._seed_tools:
            if name in admitted:
                self._load("tool", name, "seed")
                self._run.loaded[f"tool:{name}"].called = True
            else:
                _log.warning("toolsurface: seeded tool %r is not admitted; dropped", name)
        for group in self._seed_groups:
            if any(self.registry.group_of(n) == group for n in admitted):
                self._load("group", group, "seed")
            else:
                _log.warning("toolsurface: seeded group %r has no admitted tool; dropped", group)
        self._seed_tools, self._seed_groups = [], []

    # -- the decision ----------------------------------------------------------------------

    def _admitted(self) -> tuple[str, ...]:
        return tuple(n for n in self.registry.names() if self.admits(n))

    def _tokens_of(self, name: str) -> int:
        return self._costs.of_tool(name)

    def _rules_tokens(self, group: str) -> int:
        return self._costs.of_rules(group, self.rules_of(group), self.mark)

    def _decide(self) -> Decision:
        reg = self.registry
        key = (reg.generation, reg.groups_version, self._policy_version, 0)
        if self._decision is not None and self._decision.key == key:
            return self._decision
        decision = decide(
            reg,
            self._admitted(),
            key=key,
            limits=self.limits,
            deferral_mode=self.deferral_mode,
            discovery_tool=self.discovery_tool,
            pinned=self.pinned,
            load_modes=self.load_modes,
            floor=self._held_floor,
            last=self._decision,
            tokens=self._tokens_of,
            rules_tokens=self._rules_tokens,
        )
        self._held_floor = decision.held
        self._decision = decision
        return decision

    # -- the request -----------------------------------------------------------------------

    def plan(self, *, user_message: str | None = None) -> RequestPlan:
        """The next request's tools (base, then loads in discovery order) and catalogue.

        A lazy group is held back while a discovery tool is live; the catalogue names it.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([
        ...     tool_search_tool(),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="github__list_issues", description="List the issues of a repo."),
        ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
        ... ])
        >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> plan = surface.plan()
        >>> plan.names, plan.sources
        (('fs__read_file', 'ToolSearch'), ('base', 'discovery'))
        >>> plan.held_back
        ('github',)
        >>> plan.catalogue.splitlines()[-2]
        '- github: github__create_issue, github__list_issues'
        >>> [d["name"] for d in plan.definitions()] == list(plan.names)
        True
        """
        d = self._decide()
        reg = self.registry
        if self._seed_tools or self._seed_groups:
            self._apply_seeds(d)
        if not self._started:
            # A run starts (new or seeded): a safe point to unload over the cap. A restored
            # surface goes on with its run and keeps the snapshot's next request.
            self._started = True
            self._evict("start")
        names, sources, reasons = list_tools(
            d,
            registry=reg,
            limits=self.limits,
            discovery_tool=self.discovery_tool,
            pinned=self.pinned,
            entries=self._run.entries(),
            user_message=user_message,
            emit=self.emit,
        )
        settled = self._rules.settle(
            (d.admitted, d.held),
            shown=lambda: (
                {reg.group_of(n) for n in names}
                | {e.name for e in self._run.loaded.values() if e.kind == "group"}
            ),
            on_base=lambda: {reg.group_of(n) for n, s in zip(names, sources) if s != "loaded"},
            rules_of=self.rules_of,
        )
        # Rebuilt from the live policy on every plan: a group the run may no longer call
        # (blocked since, or named by a restored snapshot) has no rules in the block.
        allowed = self._admitted_groups(d)
        with_rules = [g for g in settled if g in allowed]
        catalogue = catalogue_block(
            d,
            registry=reg,
            discovery_tool=self.discovery_tool,
            with_rules=with_rules,
            rules_of=self.rules_of,
            mark=self.mark,
        )
        plan = RequestPlan(
            tools=tuple(reg.get(n) for n in names),
            sources=tuple(sources),
            catalogue=catalogue,
            held_back=tuple(sorted(d.held)),
            reasons=tuple(reasons),
        )
        self._last_plan = plan
        if self.provider is not None:
            problems = name_problems(plan.names, self.provider)
            if problems:
                self.emit("tool_names_refused", {"provider": self.provider, "names": problems})
        self.emit(
            "tool_surface_advertised",
            {
                "tools": [{"name": n, "source": s} for n, s in zip(plan.names, plan.sources)],
                "held_back": list(plan.held_back),
                "reasons": list(plan.reasons),
            },
        )
        return plan

    def rules_of(self, group: str) -> str | None:
        """A group's rules, or ``None`` (also for a group that no longer exists)."""
        try:
            return self.registry.group(group).rules
        except KeyError:
            return None

    def description_of(self, group: str) -> str | None:
        """A group's one-line description, or ``None`` (also for a group that is gone)."""
        try:
            return self.registry.group(group).description
        except KeyError:
            return None

    # -- discovery ----------------------------------------------------------------------------

    def _load(self, kind: Literal["tool", "group"], name: str, how: LoadHow) -> bool:
        if not self._run.load(kind, name, how):
            return False
        if kind == "tool":
            self.emit("tool_discovered", {"name": name, "how": how})
        else:
            self.emit("tool_group_loaded", {"group": name, "how": how})
        return True

    def _evict(self, why: str) -> None:
        """Unload the least recently used over the cap or the budget (see RunState.evict)."""
        self._run.evict(
            cap=self.limits.max_loaded_entries,
            budget=self.limits.token_budget,
            decide=self._decide,
            tokens_of=self._tokens_of,
            group_of=self.registry.group_of,
            on_evict=lambda e: self.emit("tool_unloaded", {"entry": e.key, "why": why}),
        )

    def loaded_entries(self) -> list[LoadedEntry]:
        """What the run has loaded and may call now, in discovery order.

        A tool or group the policy blocked since it was loaded is kept (a policy that
        relaxes again brings it back) but never listed.
        """
        d = self._decide()
        groups = self._admitted_groups(d)
        return [
            e
            for e in self._run.entries()
            if (e.name in d.admitted_set if e.kind == "tool" else e.name in groups)
        ]

    def discovered_tool_names(self) -> list[str]:
        """Single tools the run loaded, in discovery order."""
        return [e.name for e in self.loaded_entries() if e.kind == "tool"]

    def called_discovered_tool_names(self) -> list[str]:
        """Loaded tools the model actually called (or seeded ones), in discovery order.

        A tool called from a loaded group counts, after the group's earlier entries. What a
        host should carry into the session's next run, rather than every near-miss a search
        loaded.
        """
        admitted = self._decide().admitted_set
        return [n for n in self._run.called_tools() if n in admitted]

    def loaded_tool_group_names(self) -> list[str]:
        """Groups the run holds whole, in discovery order."""
        return [e.name for e in self.loaded_entries() if e.kind == "group"]

    def rules_given(self) -> list[str]:
        """Groups whose rules the model has been given in this run (and may still call)."""
        groups = self._admitted_groups(self._decide())
        return sorted(g for g in self._rules.given if g in groups)

    def _admitted_groups(self, d: Decision) -> frozenset[str]:
        """The groups with a tool the run may call under decision ``d`` (kept per decision)."""
        if self._groups_for is None or self._groups_for[0] != d.key:
            found = {self.registry.group_of(n) for n in d.admitted}
            self._groups_for = (d.key, frozenset(g for g in found if g is not None))
        return self._groups_for[1]

    def held_back_groups(self) -> list[str]:
        """The groups currently held back."""
        return sorted(self._decide().held)

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
            listed.update(entry_tools(entry, d, self.registry.group_of))
        return self._costs.of_load(
            names,
            listed=listed,
            rules_tokens=(self._rules_tokens(g) for g in self._rules.catalogue or ()),
            budget=self.limits.token_budget,
        )

    def _advertised(self) -> frozenset[str]:
        return frozenset(self._last_plan.names) if self._last_plan else frozenset()

    def last_plan_names(self) -> tuple[str, ...]:
        """The tool names of the request this surface planned last."""
        return self._last_plan.names if self._last_plan else ()

    # -- call admission (toolsurface.dispatch) ----------------------------------------------

    def admit(self, calls: Sequence[ToolCall]) -> list[Verdict]:
        """Verdicts for the tool calls of one model message, in order (see dispatch).

        Admission reads the run and returns the effects of its verdicts (blind loads, rules
        given, uses, events); they are applied here, in the order admission made them.

        A held-back tool called by its exact name runs (blind) and is loaded; a name that
        does not exist is refused with the nearest names.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([
        ...     tool_search_tool(),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="github__list_issues", description="List the issues of a repo."),
        ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
        ... ])
        >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> from toolsurface.dispatch import ToolCall
        >>> _ = surface.plan()
        >>> verdicts = surface.admit([
        ...     ToolCall("github__list_issues", {}, id="1"),
        ...     ToolCall("fs__raed_file", {"path": "a.txt"}, id="2"),
        ... ])
        >>> [(v.action, v.blind, v.not_run) for v in verdicts]
        [('run', True, ''), ('refuse', False, 'unknown')]
        >>> print(verdicts[1].message)
        Unknown tool 'fs__raed_file': no such tool is available to you. Closest: fs__read_file.
        >>> surface.discovered_tool_names()
        ['github__list_issues']
        """
        reg = self.registry
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
        return done.verdicts

    def failure_text(
        self, verdict: Verdict, error: BaseException | str, *, argument_error: bool | None = None
    ) -> str:
        """Error text for a failed call; a blind call's argument failure gets the tool's line."""
        return failure_text(self, verdict, error, argument_error=argument_error)

    def tool_search(self, arguments: Any) -> ToolSearchResult:
        """Run a ToolSearch call: search, select or load a group; the surface does the loading.

        Only what the live policy and allowlist admit is searched, loaded or named; "already
        in your tool list" is judged against the request this surface last planned.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([
        ...     tool_search_tool(),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="github__list_issues", description="List the issues of a repo."),
        ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
        ... ])
        >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.plan()
        >>> result = surface.tool_search({"select": ["github__create_issue", "fs__read_file"]})
        >>> result.loaded, result.already_listed
        (('github__create_issue',), ('fs__read_file',))
        >>> print(result.text)
        Loaded, callable from your next step:
        - github__create_issue() — Create an issue in a repo.
        Already in your tool list:
        - fs__read_file() — Read a file from disk.
        ToolSearch loads tools only: skills, documents and other things are not tools.
        >>> surface.plan().names
        ('fs__read_file', 'ToolSearch', 'github__create_issue')
        >>> surface.tool_search({"query": "list the issues"}).loaded
        ('github__list_issues',)
        """
        request = parse_tool_search_arguments(arguments)
        if request.empty:
            return ToolSearchResult(text=request.refusal, refused=True, metadata={"refused": True})
        return answer_tool_search(
            request,
            self._decide(),
            self._advertised(),
            registry=self.registry,
            limits=self.limits,
            room_for_loads=self._room_for_loads,
            load=self._load,
            give_rules=lambda groups: self._rules.give(groups, self.rules_of, self.mark),
            load_cost=self._load_cost_or_none(),
            describe_group=self.description_of,
        )

    # -- events ------------------------------------------------------------------------------

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Report an event to the host's callback and to ``logging``."""
        report(self.on_event, kind, data)
