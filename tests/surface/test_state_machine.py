"""Random runs of a surface (hypothesis state machine) with the invariants checked every step.

After every step: no request above the provider's limit; no blocked tool listed, loaded,
suggested or described; the base of the tool list and the catalogue keep their bytes unless
the catalogue, the groups or the policy changed; a snapshot restores to the same next
request; a ``state_key`` seen before means the same snapshot but for the use clock.
``TOOLSURFACE_STATEFUL_EXAMPLES`` sets how many runs (CI: 500; on demand: more).
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import toolsurface
from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall
from toolsurface.surface.snapshot import SnapshotError

EXAMPLES = int(os.environ.get("TOOLSURFACE_STATEFUL_EXAMPLES", "500"))
SERVERS = ("gh", "jira", "slack")
WORDS = ("list", "create", "delete", "issue", "message", "channel", "pull", "request", "file")
NAMES = [f"{s}__{a}_{o}" for s in SERVERS for a in WORDS[:3] for o in WORDS[3:6]]
HOST = ["host_read", "host_write", "host_shell"]
BLOCKED = "gh__delete_issue"
KEY = b"state machine test key, fixed"


def _tool(name: str) -> Tool:
    words = name.replace("__", " ").replace("_", " ")
    return Tool(
        name=name,
        description=f"{words.capitalize()}. Uses the {name.split('__')[0]} API.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
    )


def _policy(name: str) -> bool:
    return name != BLOCKED


def _revealed(text: str, asked: list[str]) -> bool:
    """Whether ``text`` names the blocked tool beyond echoing what the model asked for."""
    for name in asked:
        text = text.replace(repr(name), "")
    return BLOCKED in text


def _request(surface: ToolSurface) -> tuple[str, tuple[str, ...], str]:
    plan = surface.plan()
    body = json.dumps(plan.definitions(), sort_keys=True)
    return body, plan.names, plan.catalogue


class SurfaceMachine(RuleBasedStateMachine):
    """A host's run: tools come and go, groups change, the model searches and calls."""

    def __init__(self) -> None:
        super().__init__()
        self.registry = ToolRegistry(engine=toolsurface.engine())
        self.limit = 8
        self.surface: ToolSurface
        self.last: tuple[list[str], str, str] | None = None
        self.changed = True
        self.off: set[str] = set()
        self.off_servers: set[str] = set()
        #: Each state_key seen in this run, with what the snapshot carried beside the clock.
        self.keys: dict[Any, Any] = {}
        self.keys_of: ToolSurface | None = None

    @initialize(limit=st.integers(4, 12), rules=st.booleans())
    def start(self, limit: int, rules: bool) -> None:
        self.limit = limit
        self.registry.register_many([_tool(n) for n in NAMES + HOST])
        for s in SERVERS:
            self.registry.declare_group(
                s, prefix=f"{s}__", dynamic=True, rules="Be careful." if rules else None
            )
        self.registry.register(tool_search_tool())
        self.surface = ToolSurface(
            self.registry,
            policy=_policy,
            limits=SurfaceLimits(max_advertised_tools=limit, max_loaded_entries=3),
            session_id="machine",
            mark_key=KEY,
        )

    # -- what changes the catalogue or the policy ----------------------------------------------

    @rule(name=st.sampled_from(NAMES))
    def toggle_tool(self, name: str) -> None:
        if name in self.registry:
            self.registry.unregister(name)
        else:
            self.registry.register(_tool(name))
        self.changed = True

    @rule(
        server=st.sampled_from(SERVERS),
        dynamic=st.booleans(),
        load=st.sampled_from(["eager", "auto", "lazy"]),
    )
    def redeclare_group(self, server: str, dynamic: bool, load: Any) -> None:
        self.registry.declare_group(server, prefix=f"{server}__", dynamic=dynamic, load=load)
        self.changed = True

    @rule(server=st.sampled_from(SERVERS))
    def undeclare_group(self, server: str) -> None:
        self.registry.undeclare_group(server)
        self.changed = True

    @rule(
        off=st.sets(st.sampled_from(NAMES), max_size=4),
        servers=st.sets(st.sampled_from(SERVERS), max_size=1),
    )
    def change_policy(self, off: set[str], servers: set[str]) -> None:
        """Block some tools, and maybe a whole server, mid-run."""
        self.off = {*off, *(n for n in NAMES if n.split("__")[0] in servers)}
        self.off_servers = servers
        blocked = frozenset(self.off)
        self.surface.set_policy(lambda n: _policy(n) and n not in blocked)
        self.changed = True

    @rule(
        field=st.sampled_from(
            ["seal", "session_id", "mark", "rules", "clock", "blocked", "called", "version"]
        )
    )
    def restore_tampered(self, field: str) -> None:
        """A snapshot edited in storage is refused whole, and the surface stays as it was."""
        before = _request(self.surface)
        snap = json.loads(self.surface.snapshot().to_json())
        if field == "seal":
            snap["seal"] = "0" * 64
        elif field == "session_id":
            snap["session_id"] = "another-session"
        elif field == "mark":
            snap["mark"] = "0" * 12 if snap["mark"] != "0" * 12 else "1" * 12
        elif field == "rules":
            snap["rules_given"], snap["catalogue_rules"] = [], []
        elif field == "clock":
            snap["clock"] = str(snap["clock"])
        elif field == "blocked":
            snap["loaded"].append(
                {
                    "kind": "tool",
                    "name": BLOCKED,
                    "how": "select",
                    "order": snap["order"],
                    "last_use": 0,
                    "called": True,
                }
            )
        elif field == "called":
            snap["loaded"] = [{**r, "called": 1} for r in snap["loaded"]] or [{"called": 1}]
        else:
            snap["version"] = 2
        if snap == json.loads(self.surface.snapshot().to_json()):
            return  # the edit changed nothing (the lists were empty already)
        try:
            self.surface.restore(json.dumps(snap))
        except SnapshotError:
            pass
        else:
            raise AssertionError(f"a snapshot with its {field} edited was restored")
        assert _request(self.surface) == before

    @rule(
        churn=st.lists(
            st.tuples(st.sampled_from(["tool", "group"]), st.sampled_from(NAMES)),
            min_size=1,
            max_size=12,
        )
    )
    def another_run_changes_the_registry(self, churn: list[tuple[str, str]]) -> None:
        """Another thread changes the shared registry while this run plans, searches, ends."""
        errors: list[BaseException] = []
        go = threading.Event()

        def other() -> None:
            go.wait()
            try:
                for kind, name in churn:
                    server = name.split("__")[0]
                    if kind == "group":
                        self.registry.undeclare_group(server)
                        self.registry.declare_group(server, prefix=f"{server}__", dynamic=True)
                    elif name in self.registry:
                        self.registry.unregister_many([name], missing_ok=True)
                    else:
                        self.registry.register(_tool(name), replace=True)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=other)
        thread.start()
        go.set()
        for _ in range(3):
            self.surface.plan()
            self.surface.tool_search({"query": "list issues"})
            self.surface.tool_search({"group": "gh"})
            self.surface.admit([ToolCall("gh__list_issue", {}), ToolCall("jira__create_issue")])
            self.surface.end_turn()
        thread.join()
        assert not errors, errors
        self.changed = True

    # -- what the model does -------------------------------------------------------------------

    @rule(
        query=st.sampled_from(
            [
                "list issues",
                "send message channel",
                "delete",
                "pull request",
                "удали задачу",
                "отправь сообщение",
                "zzz",
            ]
        )
    )
    def search(self, query: str) -> None:
        result = self.surface.tool_search({"query": query})
        assert BLOCKED not in result.text

    @rule(names=st.lists(st.sampled_from([*NAMES, "nope__x", BLOCKED.upper()]), max_size=3))
    def select(self, names: list[str]) -> None:
        result = self.surface.tool_search({"select": names})
        assert not _revealed(result.text, names) and BLOCKED not in result.loaded

    @rule(group=st.sampled_from([*SERVERS, "missing"]))
    def load_group(self, group: str) -> None:
        result = self.surface.tool_search({"group": group})
        assert BLOCKED not in result.loaded

    @rule(
        names=st.lists(st.sampled_from([*NAMES, *HOST, "gh__delete_issues", BLOCKED]), max_size=5)
    )
    def call(self, names: list[str]) -> None:
        for v in self.surface.admit([ToolCall(n, {}) for n in names]):
            assert not _revealed(v.message, names)
            if v.call.name == BLOCKED:
                assert not v.runs

    @rule()
    def end_turn(self) -> None:
        self.surface.end_turn()

    @rule()
    def compact(self) -> None:
        self.surface.compaction()
        self.changed = True  # the catalogue may carry other rules now

    @rule()
    def snapshot_and_restore(self) -> None:
        snap = self.surface.snapshot().to_json()
        before = _request(self.surface)
        fresh = ToolSurface(
            self.registry,
            policy=self.surface._policy,
            limits=self.surface.limits,
            mark_key=KEY,
        )
        fresh.restore(snap)
        after = _request(fresh)
        assert after == before
        self.surface = fresh

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def state_key_says_when_only_the_clock_moved(self) -> None:
        if not hasattr(self, "surface"):
            return
        snapshot = self.surface.snapshot()
        clocks: Any = {"clock": True, "seal": True, "loaded": {"__all__": {"last_use"}}}
        material = snapshot.model_dump(exclude=clocks)
        key = self.surface.state_key()
        if self.keys_of is not self.surface:  # keys compare moments of one surface
            self.keys, self.keys_of = {}, self.surface
        # A key seen before means the same snapshot but for the use clock, whenever it was.
        assert self.keys.setdefault(key, material) == material

    @invariant()
    def request_is_sound(self) -> None:
        if not hasattr(self, "surface"):
            return
        plan = self.surface.plan()
        names, catalogue = plan.names, plan.catalogue
        assert len(names) <= self.limit
        assert BLOCKED not in names and BLOCKED not in catalogue
        assert all(self.surface.admits(n) for n in names)
        # Nothing the live policy blocks is named anywhere the host or the model reads.
        snapshot = self.surface.snapshot().to_json()
        told = [
            catalogue,
            snapshot,
            *self.surface.discovered_tool_names(),
            *self.surface.called_discovered_tool_names(),
        ]
        for name in [BLOCKED, *self.off]:
            assert not any(name in text for text in told), name
        for server in self.off_servers:
            if not any(self.surface.admits(n) for n in self.registry.names()):
                continue
            assert not any(n.startswith(f"{server}__") for n in names)
            assert f"- {server}" not in catalogue and f"group {server} " not in catalogue
            assert server not in self.surface.loaded_tool_group_names()
            assert server not in self.surface.rules_given()
        fixed = [n for n, s in zip(names, plan.sources) if s != "loaded"]
        defs = plan.definitions()
        fixed_bytes = json.dumps(defs[: len(fixed)], sort_keys=True)
        if self.last is not None and not self.changed:
            # Only the run's own loads, uses and turn ends happened: the catalogue and every
            # tool before the loads keep their bytes, and the loads come after them.
            last_fixed, last_bytes, last_catalogue = self.last
            assert catalogue == last_catalogue
            assert fixed == last_fixed
            assert fixed_bytes == last_bytes
            assert list(names[: len(fixed)]) == fixed
        self.last = (fixed, fixed_bytes, catalogue)
        self.changed = False


SurfaceMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestSurfaceMachine = SurfaceMachine.TestCase
