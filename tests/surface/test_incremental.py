"""An incremental plan (shared artefacts, the last plan's parts) equals a plan from scratch.

Surfaces with different policies share one registry, so they share what is made per view;
after any sequence of searches, loads, calls, turn ends, compactions, policy changes,
registrations and group changes, each surface's next request is compared, byte for byte in
every provider's render and in the catalogue, with the request of a new surface over a new
registry holding the same tools and groups, restored from the surface's snapshot (nothing
made before). A tool the policy blocks is named in none of a blocked run's bytes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall

KEY = b"incremental plan test key, fixed"
SERVERS = ("gh", "jira", "slack")
NAMES = [f"{s}__{a}_{o}" for s in SERVERS for a in ("list", "make") for o in ("issue", "page")]
BLOCKED = "gh__list_issue"
POLICIES: dict[str, Any] = {
    "all": None,
    "no_blocked": lambda name: name != BLOCKED,
    "names": frozenset(n for n in [*NAMES, "ToolSearch", "host_read"] if n != BLOCKED),
}
#: (provider, delivery) of the surfaces under test.
KINDS = [("anthropic", "append"), ("openai", "append"), ("anthropic", "native")]
KINDS += [("openai-responses", "native"), (None, "append")]


def _tool(name: str) -> Tool:
    return Tool(
        name=name,
        description=f"{name.replace('_', ' ')} through its API.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
    )


class World:
    """A registry, the group declarations made on it, and surfaces of each kind over it."""

    def __init__(self) -> None:
        self.tools = [tool_search_tool(), _tool("host_read"), *map(_tool, NAMES)]
        self.groups: dict[str, dict[str, Any]] = {
            s: {"prefix": f"{s}__", "load": "lazy"} for s in SERVERS
        }
        self.groups["gh"]["rules"] = "Never close an issue you did not open."
        self.registry = self.build()
        self.policy = {kind: "all" for kind in KINDS}
        self.surfaces = {kind: self.surface(kind, "all") for kind in KINDS}
        # One more run per kind with the blocking policy, so artefacts of both are made.
        self.blocked = {kind: self.surface(kind, "no_blocked") for kind in KINDS}

    def build(self) -> ToolRegistry:
        registry = ToolRegistry(list(self.tools))
        for name, kw in self.groups.items():
            registry.declare_group(name, **kw)
        return registry

    def surface(self, kind: tuple[str | None, str], policy: str, registry: Any = None) -> Any:
        provider, delivery = kind
        return ToolSurface(
            registry or self.registry,
            policy=POLICIES[policy],
            provider=provider,
            delivery=delivery,  # type: ignore[arg-type]
            mark_key=KEY,
            session_id="s",
        )


def _request(surface: ToolSurface, kind: tuple[str | None, str]) -> dict[str, Any]:
    """Everything the next request is made of, as bytes."""
    plan = surface.plan()
    out: dict[str, Any] = {
        "names": plan.names,
        "sources": plan.sources,
        "catalogue": plan.catalogue,
        "held": plan.held_back,
        "loaded": plan.loaded,
    }
    provider, delivery = kind
    providers = [provider] if delivery == "native" else ["anthropic", "openai", "gemini"]
    providers += [] if delivery == "native" else ["openai-responses"]
    for p in providers:
        out[p] = json.dumps(plan.render(p), sort_keys=True)
    return out


STEPS = st.one_of(
    st.tuples(st.just("search"), st.sampled_from(["list issue", "make page", "gh", "slack"])),
    st.tuples(st.just("select"), st.sampled_from(NAMES)),
    st.tuples(st.just("group"), st.sampled_from(SERVERS)),
    st.tuples(st.just("call"), st.sampled_from([*NAMES, "host_read"])),
    st.tuples(st.just("policy"), st.sampled_from(sorted(POLICIES))),
    st.tuples(st.just("register"), st.integers(0, 5)),
    st.tuples(st.just("rules"), st.sampled_from(SERVERS)),
    st.tuples(st.just("turn"), st.just("")),
    st.tuples(st.just("compaction"), st.just("")),
)


def _apply(world: World, kind: tuple[str | None, str], step: tuple[str, Any]) -> None:
    what, arg = step
    surface = world.surfaces[kind]
    if what == "search":
        surface.tool_search({"query": arg})
    elif what == "select":
        surface.tool_search({"select": [arg]})
    elif what == "group":
        surface.tool_search({"group": arg})
    elif what == "call":
        surface.admit([ToolCall(arg, {})])
    elif what == "policy":
        world.policy[kind] = arg
        surface.set_policy(POLICIES[arg])
    elif what == "turn":
        surface.end_turn()
    elif what == "compaction":
        surface.compaction()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEPS, max_size=12))
def test_an_incremental_plan_is_a_plan_from_scratch(steps: list[tuple[str, Any]]) -> None:
    world = World()
    for step in steps:
        what, arg = step
        if what == "register":
            tool = _tool(f"{SERVERS[arg % 3]}__new_{arg}")
            if all(t.name != tool.name for t in world.tools):
                world.tools.append(tool)
            world.registry.register(tool, replace=True)
        elif what == "rules":
            world.groups[arg]["rules"] = f"Rules of {arg}, version {len(steps)}."
            world.registry.declare_group(arg, **world.groups[arg])
        for kind in KINDS:
            _apply(world, kind, step)
            for surface in (world.surfaces[kind], world.blocked[kind]):
                surface.plan()  # every run plans: the shared artefacts get made
        for kind in KINDS:
            surface = world.surfaces[kind]
            got = _request(surface, kind)
            fresh = world.surface(kind, world.policy[kind], world.build())
            fresh.restore(surface.snapshot().to_json())
            assert got == _request(fresh, kind), (kind, step)
            blocked = _request(world.blocked[kind], kind)
            assert BLOCKED not in json.dumps(blocked), kind
            if world.policy[kind] != "all":
                assert BLOCKED not in json.dumps(got), kind


def test_what_runs_share_goes_with_the_catalogue_version() -> None:
    """Artefacts of a past catalogue version are freed: the shared state does not grow."""
    import gc

    from toolsurface.surface import shared

    registry = ToolRegistry([tool_search_tool(), *map(_tool, NAMES)])
    registry.declare_group("gh", prefix="gh__", load="lazy")
    surface = ToolSurface(registry, provider="anthropic", delivery="native")
    gc.collect()
    before = len(shared._VIEWS)
    for i in range(20):
        registry.register(_tool(f"host_{i}"))
        surface.tool_search({"select": ["gh__make_page"]})
        surface.plan().render()
    gc.collect()
    assert len(shared._VIEWS) <= before + 1
