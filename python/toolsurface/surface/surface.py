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
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any, Literal

from toolsurface._internal.off_loop import off_loop
from toolsurface.admission.admit import ToolCall, Verdict, failure_text
from toolsurface.admission.rules import MarkScope, RulesLedger, RunMark
from toolsurface.groups import LoadMode
from toolsurface.models import Tool
from toolsurface.providers import provider_spec
from toolsurface.providers.names import alias_for
from toolsurface.providers.namespaces import MAX_FUNCTIONS
from toolsurface.registry import ToolRegistry
from toolsurface.registry.view import RegistryView, ViewPin, one_view
from toolsurface.surface.base_list import (
    Assembled,
    BaseList,
    alias_of,
    base_list,
    native_loads,
)
from toolsurface.surface.costs import TokenCosts
from toolsurface.surface.deferral import (
    Decision,
    DecisionKey,
    check_load_modes,
    decide,
    same_decision,
)
from toolsurface.surface.delivery import (
    Delivery,
    check_delivery,
    discovery_label,
    native_parts,
)
from toolsurface.surface.events import Event, report
from toolsurface.surface.held_back import catalogue_block
from toolsurface.surface.limits import (
    DeferralMode,
    SurfaceLimits,
    estimate_tokens,
    with_tool_cap,
)
from toolsurface.surface.listing import RunListing
from toolsurface.surface.moves import ModelMoves, Moment
from toolsurface.surface.plan import RequestPlan, Source, list_tools, loads_after
from toolsurface.surface.policy import Policy, _check_policy, _names, _names_or_none, admits
from toolsurface.surface.resume import apply_seeds, check_restorable, resumed, snapshot_of
from toolsurface.surface.search import ToolSearchResult
from toolsurface.surface.shared import Ident, shared_of
from toolsurface.surface.snapshot import SurfaceSnapshot
from toolsurface.surface.snapshot_read import read_fields
from toolsurface.surface.state import LoadedEntry, LoadHow, RunState, entry_admitted
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME

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
#: The limits of a surface made without any (frozen, so one object serves every surface).
_NO_LIMITS = SurfaceLimits()
#: A surface's operation: it reads one view of the registry, the one the surface's pin holds.
_one_view = one_view(lambda surface: surface._pin)


class ToolSurface:
    """One run's tool surface over a (possibly shared) registry.

    A run, start to end: the first request holds a lazy group back and names it in the
    catalogue; the model loads a tool with ToolSearch, which the next request appends;
    admission runs a held-back tool called by name (blind, and loaded) and refuses a
    misspelt one with the nearest names.

    >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
    >>> from toolsurface.admission.admit import ToolCall
    >>> registry = ToolRegistry([
    ...     tool_search_tool(),
    ...     Tool(name="fs__read_file", description="Read a file from disk."),
    ...     Tool(name="github__list_issues", description="List the issues of a repo."),
    ...     Tool(name="github__create_issue", description="Create an issue in a repo."),
    ... ])
    >>> _ = registry.declare_group("github", prefix="github__", load="lazy")
    >>> surface = ToolSurface(registry, session_id="doc")
    >>> plan = surface.plan()
    >>> plan.names, plan.sources, plan.held_back
    (('fs__read_file', 'ToolSearch'), ('base', 'discovery'), ('github',))
    >>> plan.catalogue.splitlines()[-2]
    '- github: github__create_issue, github__list_issues'
    >>> result = surface.tool_search({"select": ["github__create_issue", "fs__read_file"]})
    >>> print(result.text)
    Loaded, callable from your next step:
    - github__create_issue() — Create an issue in a repo.
    Already in your tool list:
    - fs__read_file() — Read a file from disk.
    ToolSearch loads tools only: skills, documents and other things are not tools.
    >>> surface.plan().names
    ('fs__read_file', 'ToolSearch', 'github__create_issue')
    >>> verdicts = surface.admit([
    ...     ToolCall("github__list_issues", {}, id="1"),
    ...     ToolCall("fs__raed_file", {"path": "a.txt"}, id="2"),
    ... ])
    >>> [(v.action, v.blind, v.not_run) for v in verdicts]
    [('run', True, ''), ('refuse', False, 'unknown')]
    >>> print(verdicts[1].message)
    Unknown tool 'fs__raed_file': no such tool is available to you. Closest: fs__read_file.
    >>> surface.discovered_tool_names()
    ['github__create_issue', 'github__list_issues']
    """

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
        delivery: Delivery = "append",
        learn_from_usage: bool = False,
        namespace_size: int | None = MAX_FUNCTIONS,
    ) -> None:
        if deferral_mode not in ("auto", "off"):
            raise ValueError(f"deferral_mode must be 'auto' or 'off', got {deferral_mode!r}")
        self.registry = registry
        self.provider = provider_spec(provider).name if provider is not None else None
        self.delivery = check_delivery(delivery, self.provider)
        if namespace_size is not None and namespace_size < 1:
            raise ValueError(f"namespace_size must be at least 1 or None, got {namespace_size}")
        #: Responses, native: the most functions a namespace of the array holds (OpenAI
        #: advises under ten); ``None`` sends each held-back group as one namespace.
        self.namespace_size = namespace_size
        limits = limits or _NO_LIMITS
        if provider is not None:
            limits = with_tool_cap(limits, provider_spec(provider).max_tools)
        self.limits = limits
        self.deferral_mode: DeferralMode = deferral_mode
        self.discovery_tool = discovery_tool
        self.load_modes: dict[str, LoadMode] = check_load_modes(load_modes)
        self.pinned = _names(pinned, "pinned")
        self.on_event = on_event
        self._policy: Policy = _check_policy(policy)
        self._allowlist = _names_or_none(allowlist, "allowlist")
        self._policy_version = 0
        self._decision: Decision | None = None
        self._decision_key: DecisionKey | None = None
        self._catalogue: tuple[Hashable, str] | None = None
        # The last plan's list: (base, its loads, tools, names, sources).
        self._assembled: Assembled | None = None
        self._held_floor: frozenset[str] = frozenset()
        self._run = RunState()
        self.estimator = estimator
        self._costs = TokenCosts(lambda name: self._v.get(name), estimator)
        # The registry as the current operation reads it (see _one_view).
        self._pin = ViewPin(lambda: self.registry.view(), self._begin_operation)
        self._last_plan: RequestPlan | None = None
        self.session_id = session_id if session_id is not None else uuid.uuid4().hex
        self._session_given = session_id is not None
        self._marks = RunMark(mark_key, mark_scope)
        self._rules = RulesLedger()
        self._started = False
        self._seed_tools: list[str] = []
        self._seed_groups: list[str] = []
        # The model's moves, to which admission and ToolSearch go (they own what they learn).
        self._moves = ModelMoves(self, self._costs, learns=learn_from_usage)

    @property
    def mark(self) -> str:
        """The run's rules mark, under ``mark_key`` (or a per-process key without one).

        With ``mark_scope="catalogue"`` (the default) it is keyed on the registry's group
        rules, so sessions over the same registry send the same system prompt; when the
        rules change, so does the mark, and the rules are given again under it (the ledger
        starts over, as after a compaction). With ``"session"`` it is keyed on the session
        id and fixed for the run.
        """
        view = self._v
        mark, moved = self._marks.current(view.groups_version, self.session_id, self._view_rules)
        if moved:
            self._rules.compacted()
        return mark

    def _view_rules(self) -> tuple[tuple[str, str], ...]:
        """The view's (group, rules) pairs, read once per view for every run over it."""
        view = self._v
        found: tuple[tuple[str, str], ...] = shared_of(view).get(
            ("rules",), lambda: tuple(view.rules())
        )
        return found

    @property
    def mark_scope(self) -> MarkScope:
        """What the mark is keyed on: ``"catalogue"`` (the rules) or ``"session"``."""
        return self._marks.scope

    def shown(self, name: str) -> str:
        """The name the model calls a tool by: its provider-safe alias, or the name."""
        return name if self.provider is None else alias_for(name, self.provider)

    @property
    def _v(self) -> RegistryView:
        """The registry as this operation reads it: its pinned view, or the current one."""
        return self._pin.view()

    def _begin_operation(self) -> None:
        """An operation starts (see one_view): a change of rules re-gives them from here."""
        _ = self.mark

    # -- inputs from the host --------------------------------------------------------------

    def set_policy(self, policy: Policy, allowlist: Collection[str] | None = None) -> None:
        """Replace which tools the run may call (and a child run's allowlist)."""
        self._policy = _check_policy(policy)
        self._allowlist = _names_or_none(allowlist, "allowlist")
        self._policy_version += 1

    def admits(self, name: str) -> bool:
        """Whether the run may call ``name``: registered, and admitted by policy and allowlist."""
        return name in self._v and admits(self._policy, self._allowlist, name)

    @_one_view
    def note_tool_used(self, name: str) -> None:
        """Record a dispatch: a loaded tool's last use moves, and it is marked called."""
        self._run.note_use(name, self._v.group_of)

    @_one_view
    def end_turn(self) -> None:
        """A turn boundary: a safe point to unload the least recently used over the cap."""
        self._evict("turn")

    @_one_view
    def compaction(self) -> None:
        """The host compacted the conversation: a safe point to unload over the cap.

        The next catalogue carries the rules of exactly the groups on the surface or still
        loaded, and only those count as given: a group the compaction unloaded gets its
        rules again when it comes back.
        """
        self._evict("compaction")
        if self.delivery == "native":
            # The references (or search outputs) went with the history: nothing is loaded.
            for entry in self._run.entries():
                del self._run.loaded[entry.key]
                self._unloaded(entry, "compaction")
        self._rules.compacted()

    @_one_view
    def snapshot(self) -> SurfaceSnapshot:
        """What the next request depends on, versioned and JSON-serialisable.

        The round trip: a snapshot taken as JSON, restored into a new surface over the same
        registry, gives the same next request, bytes and all (see :meth:`restore`).

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.tool_search({"select": ["gh__list_issues"]})
        >>> again = ToolSurface(registry)
        >>> again.restore(surface.snapshot().to_json())
        []
        >>> again.plan().names == surface.plan().names
        True
        """
        if self._seed_tools or self._seed_groups:
            self._apply_seeds(self._decide())
        d = self._decide()
        floor = self._held_floor
        held = d.held_listed if floor is d.held else sorted(floor & d.groups)
        return snapshot_of(
            self._run,
            self._rules,
            held_back=held,
            session_id=self.session_id,
            mark=self.mark,
            tool_ok=d.admitted_set.__contains__,
            group_ok=d.groups.__contains__,
            key=self._marks.key,
        )

    def state_key(self) -> Hashable:
        """A cheap value that stays equal while the run's snapshot would carry the same state.

        Equal keys at two moments of this surface mean :meth:`snapshot` would say the same
        then but for the use clock (each load's last use, and the seal over them): a host
        that stores a snapshot after every change compares keys to learn, without taking
        one, whether a call moved anything else. A changed key does not prove the snapshot
        changed, and keys of two surfaces are not comparable.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> from toolsurface import ToolCall
        >>> registry = ToolRegistry([tool_search_tool(),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.tool_search({"select": ["gh__list_issues"]})
        >>> _ = surface.admit([ToolCall("gh__list_issues", {})])
        >>> key = surface.state_key()
        >>> _ = surface.admit([ToolCall("gh__list_issues", {})])  # moves only the use clock
        >>> surface.state_key() == key
        True
        """
        reg, run, rules = self.registry, self._run, self._rules
        # Only what the snapshot would name: the loads, floor and rules the policy admits.
        d = self._decide()
        tools, groups = d.admitted_set, d.groups
        return (
            self.session_id,
            reg.generation,
            reg.groups_version,
            self._policy_version,
            run.order,
            tuple(
                (e.key, e.how, e.order, e.called, tuple(n for n in e.called_tools if n in tools))
                for e in run.loaded.values()
                if entry_admitted(e, tools, groups)
            ),
            self._held_floor & groups,
            frozenset(g for g in rules.given if g in groups),
            None if rules.catalogue is None else tuple(g for g in rules.catalogue if g in groups),
            tuple(n for n in self._seed_tools if n in tools),
            tuple(g for g in self._seed_groups if g in groups),
        )

    @_one_view
    def restore(self, snapshot: SurfaceSnapshot | Mapping[str, Any] | str | bytes) -> list[str]:
        """Take a snapshot's state: the same next request, bytes and all.

        The snapshot is validated whole before anything changes (a broken one raises
        :class:`~toolsurface.snapshot.SnapshotError` naming the field and leaves the surface
        as it was). A loaded tool or group that no longer exists is dropped with a warning
        in the log; the dropped names are returned. Restored held-back groups are a floor.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> _ = surface.tool_search({"group": "gh"})
        >>> saved = surface.snapshot().to_json()
        >>> again = ToolSurface(registry, session_id="doc")
        >>> again.restore(saved), again.loaded_tool_group_names()
        ([], ['gh'])
        """
        snap = read_fields(snapshot)
        view = self._v
        check_restorable(snap, self._marks.key, self.session_id if self._session_given else None)
        mark = self._marks.fresh(snap.session_id, self._view_rules())
        state = resumed(snap, view, same_mark=mark == snap.mark)
        self.session_id = snap.session_id
        self._marks.take(mark, view.groups_version)
        self._run, self._rules = state.run, state.rules
        self._held_floor = state.held_floor
        self._decision = None
        self._started = True  # the same run goes on: its next request is the snapshot's
        self._seed_tools, self._seed_groups = [], []
        self._last_plan = None
        self._moves.restart()  # a snapshot keeps no searches (docs/tools.md)
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
        apply_seeds(self._seed_tools, self._seed_groups, d, self._v, self._load, self._run)
        self._seed_tools, self._seed_groups = [], []

    # -- the decision ----------------------------------------------------------------------

    def _rules_tokens(self, group: str) -> int:
        return self._costs.of_rules(group, self.rules_of(group), self.mark)

    def _decide(self) -> Decision:
        reg = self._v
        key = (reg.generation, reg.groups_version, self._policy_version, 0)
        if self._decision is not None and self._decision_key == key:
            return self._decision
        shared = shared_of(reg)
        admitted = shared.admitted(
            self._policy,
            self._allowlist,
            lambda: tuple(n for n in reg.names() if admits(self._policy, self._allowlist, n)),
        )
        limits = self.limits
        # Rules are priced only when a limit needs group sizes: the mark keys it then.
        sized = not math.isinf(limits.token_budget) or limits.max_advertised_tools is not None
        made = shared.get(
            (
                "decision",
                Ident(admitted),
                limits,
                self.deferral_mode,
                self.discovery_tool,
                self.pinned,
                tuple(sorted(self.load_modes.items())),
                self._held_floor,
                self._costs.estimator,
                self.mark if sized else None,
            ),
            lambda: decide(
                reg,
                admitted.names,
                key=key,
                limits=limits,
                deferral_mode=self.deferral_mode,
                discovery_tool=self.discovery_tool,
                pinned=self.pinned,
                load_modes=self.load_modes,
                floor=self._held_floor,
                last=None,
                tokens=self._costs.of_tool,
                rules_tokens=self._rules_tokens,
            ),
        )
        last = self._decision
        if last is not None and last is not made and same_decision(last, made):
            made = last  # a change this run cannot see: the decision stands, reasons and all
        self._held_floor = made.held
        self._decision, self._decision_key = made, key
        return made

    # -- the request -----------------------------------------------------------------------

    @_one_view
    def plan(self, *, user_message: str | None = None) -> RequestPlan:
        """The next request's tools (base, then loads in discovery order) and catalogue.

        A lazy group is held back while a discovery tool is live; the catalogue names it.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> plan = surface.plan()
        >>> plan.names, plan.held_back
        (('fs__read', 'ToolSearch'), ('gh',))
        >>> plan.catalogue.splitlines()[-2]
        '- gh: gh__list_issues'
        """
        d = self._decide()
        reg = self._v
        if self._seed_tools or self._seed_groups:
            self._apply_seeds(d)
        if not self._started:
            # A run starts (new or seeded): a safe point to unload over the cap. A restored
            # surface goes on with its run and keeps the snapshot's next request.
            self._started = True
            self._evict("start")
        base: BaseList | None = None
        extra: list[str] = []
        names: Sequence[str]
        sources: Sequence[Source]
        reasons: Sequence[str]
        if self.limits.retrieval_top_k and user_message is not None:
            # The per-message clip: this message's own list, laid out whole.
            names, sources, reasons = list_tools(
                d,
                registry=reg,
                limits=self.limits,
                discovery_tool=self.discovery_tool,
                pinned=self.pinned,
                entries=self._run.entries(),
                user_message=user_message,
                emit=self.emit,
                append_loads=self.delivery == "append",
            )
        else:
            # The base list is the decision's, shared; only the run's loads are laid out here.
            limit = self.limits.max_advertised_tools
            base = shared_of(reg).get(
                ("base", Ident(d), limit, self.discovery_tool, self.pinned),
                lambda: base_list(
                    d,
                    view=reg,
                    limits=self.limits,
                    discovery_tool=self.discovery_tool,
                    pinned=self.pinned,
                ),
            )
            if base.dropped:
                self.emit("tools_dropped", {"names": list(base.dropped), "limit": limit})
            if self.delivery == "append":
                extra = loads_after(
                    base.listed,
                    len(base.names),
                    d,
                    registry=reg,
                    entries=self._run.entries(),
                    limit=limit,
                )
            # The list is copied only when the run's loads moved (once, not on every plan).
            ext = tuple(extra)
            made = self._assembled
            if made is None or made[0] is not base or made[1] != ext:
                made = self._assembled = base.assembled(ext)
            names, sources = made[3], made[4]
            reasons = base.reasons
        loaded_groups = {e.name for e in self._run.loaded.values() if e.kind == "group"}
        if base is None:
            settled = self._rules.settle(
                (d.admitted, d.held),
                shown=lambda: {reg.group_of(n) for n in names} | loaded_groups,
                on_base=lambda: {reg.group_of(n) for n, s in zip(names, sources) if s != "loaded"},
                rules_of=self.rules_of,
            )
        else:
            # Only groups with rules count: the base's are known, the loads' are few.
            ruled = base.ruled_groups
            settled = self._rules.settle(
                (d.admitted, d.held),
                shown=lambda: set(ruled) | {reg.group_of(n) for n in extra} | loaded_groups,
                on_base=lambda: set(ruled),
                rules_of=self.rules_of,
            )
        # Rebuilt from the live policy on every plan: a group the run may no longer call
        # (blocked since, or named by a restored snapshot) has no rules in the block.
        allowed = d.groups
        with_rules = tuple(g for g in settled if g in allowed)
        label = discovery_label(self.delivery, self.provider, self.discovery_tool)
        # The block depends on nothing else (groups, rules and descriptions move the view).
        key = ("catalogue", Ident(d), with_rules, self.mark, label, self.provider)
        if self._catalogue is None or self._catalogue[0] != (reg.key, key):
            block = shared_of(reg).get(
                key,
                lambda: catalogue_block(
                    d,
                    registry=reg,
                    discovery_tool=label,
                    with_rules=with_rules,
                    rules_of=self.rules_of,
                    mark=self.mark,
                    groups=allowed,
                    shown=self.shown,
                ),
            )
            self._catalogue = ((reg.key, key), block)
        catalogue = self._catalogue[1]
        if base is None:
            deferred, loaded, spaces = native_parts(
                self.delivery, d, names, self._run.entries(), reg, self.namespace_size
            )
        elif self.delivery == "native":
            deferred, spaces = base.native(self.namespace_size)
            loaded = native_loads(self._run.entries(), d, reg, base.listed)
        else:
            deferred, loaded, spaces = (), (), ()
        if self._assembled is not None and base is not None:
            tools = self._assembled[2]
        else:
            tools = tuple(reg.get(n) for n in names)
        last = self._last_plan
        held_back = base.held_back if base is not None else tuple(sorted(d.held))
        if (
            base is not None
            and last is not None
            and last.shared is base
            and last.tools is tools
            and last.catalogue == catalogue
            and last.held_back is held_back
            and last.loaded == loaded
        ):
            # Nothing the request is made of moved (a call moves only the use clock): the
            # same plan, immutable, with the sets admission made from it.
            plan = last
        else:
            plan = RequestPlan(
                tools=tools,
                sources=tuple(sources),
                catalogue=catalogue,
                held_back=held_back,
                reasons=tuple(reasons),
                deferred=deferred,
                loaded=loaded,
                spaces=spaces if self.provider == "openai-responses" else (),
                delivery=self.delivery,
                provider=self.provider,
                discovery_tool=self.discovery_tool,
                shared=base,
            )
            plan.__dict__["names"] = tuple(names)  # the cached property, known already
        self._last_plan = plan
        listened = self.on_event is not None or _log.isEnabledFor(logging.INFO)
        if self.provider is not None and listened:
            if base is not None:
                aliased = dict(base.aliases(self.provider))
                aliased.update((n, a) for n in extra if (a := alias_of(n, self.provider)) != n)
            else:
                aliased = {n: a for n in plan.names if (a := self.shown(n)) != n}
            if aliased:
                self.emit("tool_names_aliased", {"provider": self.provider, "aliases": aliased})
        if listened:
            tools_data = [{"name": n, "source": s} for n, s in zip(plan.names, plan.sources)]
            held, why = list(plan.held_back), list(plan.reasons)
            data = {"tools": tools_data, "held_back": held, "reasons": why}
            self.emit("tool_surface_advertised", data)
        return plan

    def rules_of(self, group: str) -> str | None:
        """A group's rules, or ``None`` (also for a group that no longer exists)."""
        try:
            return self._v.group(group).rules
        except KeyError:
            return None

    def description_of(self, group: str) -> str | None:
        """A group's one-line description, or ``None`` (also for a group that is gone)."""
        try:
            return self._v.group(group).description
        except KeyError:
            return None

    # -- the model's moves (``moves.py``) and the host's listings (``listing.py``) ----------

    def _moment(self) -> Moment:
        """The run as a move finds it now (see :class:`~toolsurface.surface.moves.Moment`)."""
        return Moment(
            view=self._v,
            decide=self._decide,
            advertised=self._last_plan.name_set if self._last_plan else frozenset(),
            planned=lambda: self._last_plan or self.plan(),
            run=self._run,
            rules=self._rules,
            load=self._load,
            rules_tokens=self._rules_tokens,
        )

    @_one_view
    def admit(self, calls: Sequence[ToolCall]) -> list[Verdict]:
        """Verdicts for the tool calls of one model message, in order, their effects applied.

        Admission reads the run and returns the effects of its verdicts (blind loads, rules
        given, uses, events); they are applied in the order admission made them.

        A held-back tool called by its exact name runs (blind) and is loaded; a name that
        does not exist is refused with the nearest names.

        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> surface = ToolSurface(registry, session_id="doc")
        >>> from toolsurface import ToolCall
        >>> _ = surface.plan()
        >>> [(v.action, v.blind) for v in surface.admit([ToolCall("gh__list_issues", {})])]
        [('run', True)]
        """
        return self._moves.admit(calls, self._moment())

    @_one_view
    def tool_search(self, arguments: Any) -> ToolSearchResult:
        """Run a ToolSearch call: search, select or load a group, and load what it found.

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
        return self._moves.tool_search(arguments, self._moment())

    @_one_view
    def failure_text(
        self, verdict: Verdict, error: BaseException | str, *, argument_error: bool | None = None
    ) -> str:
        """Error text for a failed call; a blind call's argument failure gets the tool's line."""
        return failure_text(self, verdict, error, argument_error=argument_error)

    def _listing(self) -> RunListing:
        return RunListing(self._run, self._rules, self._decide())

    @_one_view
    def loaded_entries(self) -> list[LoadedEntry]:
        """What the run has loaded and may call now, in discovery order."""
        return self._listing().loaded_entries()

    @_one_view
    def discovered_tool_names(self) -> list[str]:
        """Single tools the run loaded, in discovery order."""
        return self._listing().discovered_tool_names()

    @_one_view
    def called_discovered_tool_names(self) -> list[str]:
        """Loaded tools the model actually called (or seeded ones), in discovery order."""
        return self._listing().called_discovered_tool_names()

    @_one_view
    def loaded_tool_group_names(self) -> list[str]:
        """Groups the run holds whole, in discovery order."""
        return self._listing().loaded_tool_group_names()

    @_one_view
    def rules_given(self) -> list[str]:
        """Groups whose rules the model has been given in this run (and may still call)."""
        return self._listing().rules_given()

    @_one_view
    def held_back_groups(self) -> list[str]:
        """The groups currently held back."""
        return self._listing().held_back_groups()

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
            tokens_of=self._costs.of_tool,
            view=self._v,
            on_evict=lambda e: self._unloaded(e, why),
        )

    def _unloaded(self, entry: LoadedEntry, why: str) -> None:
        """Report an unload, unless the policy blocked the entry since it was loaded.

        A blocked tool or group is never named, and its unload changes no request.
        """
        d = self._decide()
        if entry_admitted(entry, d.admitted_set, d.groups):
            self.emit("tool_unloaded", {"entry": entry.key, "why": why})

    def last_plan_names(self) -> tuple[str, ...]:
        """The tool names of the request this surface planned last."""
        return self._last_plan.names if self._last_plan else ()

    # -- events ------------------------------------------------------------------------------

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Report an event to the host's callback and to ``logging``."""
        report(self.on_event, kind, data)

    # -- async: the same work in a worker thread ----------------------------------------

    async def aplan(self, *, user_message: str | None = None) -> RequestPlan:
        """:meth:`plan` run in a worker thread, so an event loop never waits on it.

        The same parameters and plan. What a plan may build first (the registry's index
        for a per-message clip, the token costs of a large catalogue, a new view after the
        catalogue changed) is built off the loop. ``on_event`` is called in the worker
        thread. A surface is one run's: await this before the run's other calls, as with
        ``plan``; many runs over one registry may plan side by side.

        >>> import asyncio
        >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
        >>> registry = ToolRegistry([tool_search_tool(), Tool(name="fs__read", description="Read."),
        ...     Tool(name="gh__list_issues", description="List the issues of a repo.")])
        >>> _ = registry.declare_group("gh", prefix="gh__", load="lazy")
        >>> plan = asyncio.run(ToolSurface(registry, provider="anthropic").aplan())
        >>> plan.names, plan.held_back
        (('fs__read', 'ToolSearch'), ('gh',))
        >>> [tool["name"] for tool in plan.render("anthropic")]
        ['fs__read', 'ToolSearch']
        """
        return await off_loop(self.plan, user_message=user_message)
