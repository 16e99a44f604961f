"""The surface: groups, load modes, deferral, the catalogue block, ToolSearch, discovery order."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from toolsurface import (
    SurfaceLimits,
    Tool,
    ToolRegistry,
    ToolSurface,
    tool_search_tool,
)
from toolsurface.surface import Event


def _tool(name: str, text: str = "", *, group: str | None = None, **kw: Any) -> Tool:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["id"],
    }
    return Tool(
        name=name,
        description=text or f"Does {name.replace('_', ' ')}.",
        input_schema=schema,
        group=group,
        **kw,
    )


def _registry(engine: str, *, discovery: bool = True) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(
        [
            _tool("read_file", "Read a file from the workspace."),
            _tool("shell", "Run a shell command."),
            _tool("deploy_app", "Deploy the app to an environment.", group="deploy"),
            _tool("rollback_app", "Roll back the app to the previous release.", group="deploy"),
            *[
                _tool(f"gh__{n}", f"GitHub: {n.replace('_', ' ')}.")
                for n in (
                    "list_pull_requests",
                    "create_pull_request",
                    "merge_pull_request",
                    "list_issues",
                    "create_issue",
                )
            ],
            *[_tool(f"slack__{n}", f"Slack: {n.replace('_', ' ')}.") for n in ("send_message",)],
        ]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True)
    reg.declare_group("slack", prefix="slack__", dynamic=True)
    reg.declare_group("deploy")
    if discovery:
        reg.register(tool_search_tool())
    return reg


@pytest.fixture
def reg(engine_name: str) -> ToolRegistry:
    return _registry(engine_name)


# -- groups ------------------------------------------------------------------------------------


def test_groups_by_field_and_longest_prefix(reg: ToolRegistry) -> None:
    generation = reg.generation
    reg.declare_group("gh-prs", prefix="gh__list_pull")
    assert reg.generation == generation
    assert reg.group_of("gh__list_pull_requests") == "gh-prs"
    assert reg.group_of("gh__create_issue") == "gh"
    assert reg.group_of("deploy_app") == "deploy"
    assert reg.group_of("shell") is None
    assert reg.undeclare_group("gh-prs") is True
    assert reg.undeclare_group("gh-prs") is False
    assert reg.group_of("gh__list_pull_requests") == "gh"
    assert reg.generation == generation


def test_group_declaration_errors_name_the_field(reg: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="'name'"):
        reg.declare_group("bad name")
    with pytest.raises(ValueError, match="'load'"):
        reg.declare_group("ok", load="sometimes")  # type: ignore[arg-type]


def test_membership_never_reaches_the_provider(reg: ToolRegistry) -> None:
    plan = ToolSurface(reg, deferral_mode="off").plan()
    for definition in plan.definitions():
        assert set(definition) == {"name", "description", "input_schema"}


# -- the decision ------------------------------------------------------------------------------


def test_below_limits_without_groups_or_toolsearch_is_untouched(engine_name: str) -> None:
    host_tools = [_tool("b_tool"), _tool("c_tool"), _tool("a_tool")]
    reg = ToolRegistry(host_tools, engine=engine_name)  # type: ignore[arg-type]
    plan = ToolSurface(reg).plan()
    # What the host would send without the library: its own list, in its own order.
    without = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in host_tools
    ]
    assert json.dumps(plan.definitions()) == json.dumps(without)
    assert plan.catalogue == ""
    assert plan.system_text("You are helpful.") == "You are helpful."
    reg.register(tool_search_tool())  # registered but nothing to hold back: still untouched
    assert ToolSurface(reg).plan().names == ("b_tool", "c_tool", "a_tool")


def test_dynamic_groups_held_back_with_discovery(reg: ToolRegistry) -> None:
    plan = ToolSurface(reg).plan()
    assert set(plan.held_back) == {"gh", "slack"}
    assert plan.names == ("deploy_app", "read_file", "rollback_app", "shell", "ToolSearch")
    assert "Connected servers:" in plan.catalogue
    assert "ToolSearch" in plan.catalogue


def test_never_held_back_floor(reg: ToolRegistry) -> None:
    reg.register(_tool("gh__pinned_one"))
    reg.register(_tool("gh__always", always_load=True))
    surface = ToolSurface(reg, pinned={"gh__pinned_one"})
    names = surface.plan().names
    assert "gh__pinned_one" in names and "gh__always" in names
    assert "read_file" in names  # ungrouped


def test_no_discovery_holds_only_for_the_count_limit(engine_name: str) -> None:
    reg = _registry(engine_name, discovery=False)
    everything = ToolSurface(reg).plan()
    assert everything.held_back == () and len(everything.names) == len(reg)
    limited = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=6)).plan()
    assert len(limited.names) <= 6
    assert limited.held_back[0] == "gh"  # connected servers first, the largest first
    assert "call it by its exact name" in limited.catalogue
    small_window = ToolSurface(reg, limits=SurfaceLimits(window_tokens=100)).plan()
    assert small_window.held_back == ()  # nothing is held back for size without discovery


def test_deferral_off(reg: ToolRegistry) -> None:
    plan = ToolSurface(reg, deferral_mode="off").plan()
    assert plan.held_back == () and plan.catalogue == ""
    assert "ToolSearch" not in plan.names  # advertised only while something is held back


def test_token_budget_holds_largest_group_first(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.declare_group("gh", prefix="gh__")  # not dynamic: held only for size
    reg.declare_group("slack", prefix="slack__")
    sizes = {"gh": 10, "slack": 1000, "deploy": 10}

    def estimator(tool: Tool) -> int:
        return sizes.get(str(reg.group_of(tool.name)), 10)

    limits = SurfaceLimits(window_tokens=1000, tool_definitions_ratio=0.5)
    plan = ToolSurface(reg, limits=limits, estimator=estimator).plan()
    assert plan.held_back == ("slack",)
    assert any("token budget" in r for r in plan.reasons)


def test_load_modes_and_run_overrides(reg: ToolRegistry) -> None:
    reg.declare_group("deploy", load="lazy")
    assert "deploy" in ToolSurface(reg).plan().held_back
    reg.declare_group("gh", prefix="gh__", dynamic=True, load="eager")
    plan = ToolSurface(reg).plan()
    assert "gh" not in plan.held_back and "gh__list_issues" in plan.names
    overridden = ToolSurface(reg, load_modes={"deploy": "eager", "gh": "auto"}).plan()
    assert "deploy" not in overridden.held_back and "gh" in overridden.held_back
    no_discovery = _registry(reg.engine, discovery=False)
    no_discovery.declare_group("deploy", load="lazy")
    assert "deploy_app" in ToolSurface(no_discovery).plan().names


def test_eager_gives_way_only_to_the_count_limit(reg: ToolRegistry) -> None:
    reg.declare_group("gh", prefix="gh__", dynamic=True, load="eager")
    roomy = ToolSurface(reg, limits=SurfaceLimits(window_tokens=50)).plan()
    assert "gh" not in roomy.held_back
    tight = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=6, load_reserve=0)).plan()
    assert "gh" in tight.held_back and len(tight.names) <= 6


def test_decision_is_stable_across_loads_and_sticky(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg)
    first = surface.plan()
    surface.tool_search({"select": ["gh__list_issues"]})
    second = surface.plan()
    assert second.held_back == first.held_back
    assert second.catalogue == first.catalogue
    # A host switching a tool off never lets a held-back group back in.
    surface.set_policy(lambda n: n != "slack__send_message")
    assert surface.plan().held_back == ("gh",)
    surface.set_policy(None)
    assert "slack" in surface.plan().held_back  # a newly admitted dynamic group is held back


def test_another_session_changing_the_registry_flips_nothing(engine_name: str) -> None:
    """Changes this run cannot see leave its request, catalogue rules included, as it was."""
    reg = _registry(engine_name)
    reg.declare_group("gh", prefix="gh__", dynamic=True, rules="Never merge on Fridays.")
    mine = ToolSurface(reg, policy=lambda n: not n.startswith("other_"))
    mine.plan()
    mine.tool_search({"select": "gh__list_issues"})
    before = mine.plan()
    assert "Never merge on Fridays." not in before.catalogue  # given in ToolSearch's answer
    other = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=3))
    other.plan()
    other.set_policy({"shell"})
    assert mine.plan() == before
    reg.register(_tool("other_thing"))  # another session's tool, not admitted here
    assert mine.plan() == before
    reg.register_many([_tool("other_srv__ping")])
    reg.declare_group("other_srv", prefix="other_srv__", dynamic=True)  # a server connects
    assert mine.plan() == before
    mine.set_policy(mine._policy)  # the host sets the same policy again
    assert mine.plan() == before


def test_request_never_exceeds_the_count_limit(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=7, load_reserve=2))
    surface.plan()
    surface.tool_search({"select": "gh__list_issues, gh__create_issue"})
    surface.plan()
    surface.tool_search({"select": "slack__send_message"})
    plan = surface.plan()
    assert len(plan.names) == 7
    # the least recently used load is left off this request, not unloaded
    assert "gh__list_issues" not in plan.names
    assert plan.names[-2:] == ("gh__create_issue", "slack__send_message")
    assert len(surface.loaded_entries()) == 3


def test_a_group_that_cannot_fit_is_not_promised(reg: ToolRegistry) -> None:
    """A group load the count limit cannot carry is refused, never answered "Loaded"."""
    surface = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=7, load_reserve=2))
    surface.plan()
    result = surface.tool_search({"group": "gh"})
    assert result.loaded == () and result.groups == ()
    assert "'gh' was not loaded: it has 5 tools and only 2 fit" in result.text
    assert surface.loaded_entries() == []
    fits = surface.tool_search({"group": "slack"})
    assert fits.loaded == ("slack__send_message",)
    assert set(fits.loaded) <= set(surface.plan().names)


def test_floor_over_the_limit_keeps_toolsearch_and_says_what_it_dropped(
    engine_name: str,
) -> None:
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many([_tool(f"t{i:02d}") for i in range(10)] + [tool_search_tool()])
    reg.register_many([_tool(f"gh__x{i}") for i in range(3)])
    reg.declare_group("gh", prefix="gh__", dynamic=True)
    events: list[Event] = []
    surface = ToolSurface(
        reg,
        pinned={"t09"},
        limits=SurfaceLimits(max_advertised_tools=5),
        on_event=events.append,
    )
    plan = surface.plan()
    assert plan.names == ("t00", "t01", "t02", "t09", "ToolSearch")
    assert "left off t03, t04, t05, t06, t07, t08" in plan.reasons[-1]
    dropped = [e.data for e in events if e.kind == "tools_dropped"]
    assert dropped == [{"names": ["t03", "t04", "t05", "t06", "t07", "t08"], "limit": 5}]
    off = ToolSurface(reg, deferral_mode="off", limits=SurfaceLimits(max_advertised_tools=4))
    plan = off.plan()
    assert len(plan.names) == 4 and plan.reasons and "left off" in plan.reasons[-1]


def test_eager_groups_are_not_held_for_the_load_reserve(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.declare_group("deploy", load="eager")
    plan = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=10)).plan()
    assert plan.held_back == ("gh", "slack")
    assert {"deploy_app", "rollback_app"} <= set(plan.names)
    assert not any("nothing left" in r for r in plan.reasons)


def test_without_discovery_eager_groups_give_way_last(engine_name: str) -> None:
    reg = _registry(engine_name, discovery=False)
    reg.declare_group("gh", prefix="gh__", dynamic=True, load="eager")
    plan = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=9)).plan()
    assert "gh" not in plan.held_back
    assert plan.held_back == ("slack",)
    assert plan.reasons == ("slack: held back for the tool count",)


def test_toolsearch_is_counted_only_when_it_is_sent(engine_name: str) -> None:
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many([_tool(f"t{i:02d}") for i in range(9)] + [tool_search_tool()])
    reg.register(_tool("report_build", group="reports"))
    plan = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=10)).plan()
    assert plan.held_back == ()
    assert len(plan.names) == 10 and "report_build" in plan.names


def test_a_seeded_run_starts_within_the_cap(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, limits=SurfaceLimits(max_loaded_entries=2))
    surface.seed(discovered_tools=["gh__list_issues", "gh__create_issue", "slack__send_message"])
    plan = surface.plan()
    assert len(surface.loaded_entries()) == 1  # over the cap at the start: trimmed to half
    assert plan.sources.count("loaded") == 1


def test_definitions_are_copies(reg: ToolRegistry) -> None:
    plan = ToolSurface(reg, deferral_mode="off").plan()
    for definitions in (plan.definitions(), plan.render("openai")):
        schema = definitions[0].get("input_schema") or definitions[0]["function"]["parameters"]
        schema["additionalProperties"] = False
    assert "additionalProperties" not in reg.get(plan.names[0]).input_schema
    again = ToolSurface(reg, deferral_mode="off").plan().definitions()[0]["input_schema"]
    assert "additionalProperties" not in again


@pytest.mark.parametrize("what", ["policy", "allowlist", "pinned"])
def test_a_lone_string_is_not_a_set_of_names(reg: ToolRegistry, what: str) -> None:
    with pytest.raises(TypeError, match=f"{what} must be a collection of tool names, not str"):
        ToolSurface(reg, **{what: "read_file"})
    with pytest.raises(TypeError, match="policy must be a collection of tool names, not int"):
        ToolSurface(reg).set_policy(42)  # type: ignore[arg-type]


# -- the catalogue -----------------------------------------------------------------------------


def test_catalogue_layout(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.declare_group("deploy", load="lazy")
    for i in range(15):
        reg.register(_tool(f"big__t{i:02d}"))
    reg.declare_group("big", prefix="big__", dynamic=True)
    text = ToolSurface(reg).plan().catalogue
    assert text.index("Groups:") < text.index("Connected servers:")
    assert "- deploy: deploy_app, rollback_app" in text
    assert "- big: 15 tools, every name starts with 'big__'" in text
    assert "- gh: gh__create_issue, gh__create_pull_request" in text
    assert text.index("- big:") < text.index("- gh:") < text.index("- slack:")
    assert "A dedicated tool beats a workaround with a general one" in text


# -- ToolSearch --------------------------------------------------------------------------------


def test_empty_call_is_refused_with_the_three_forms(reg: ToolRegistry) -> None:
    result = ToolSurface(reg).tool_search({})
    assert result.refused
    for form in ("query", "select", "group"):
        assert form in result.text


def test_free_text_search_lists_and_loads(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, limits=SurfaceLimits(search_loads=2))
    surface.plan()
    result = surface.tool_search({"query": "покажи открытые пулреквесты"})
    assert result.loaded[0] == "gh__list_pull_requests"
    assert len(result.loaded) == 2
    assert "gh__list_pull_requests(id*, note) — GitHub: list pull requests." in result.text
    assert result.text.endswith("other things are not tools.")
    assert result.metadata["loaded"] == list(result.loaded)


def test_select_names_win_and_unknown_gets_nearest(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg)
    surface.plan()
    result = surface.tool_search({"query": "deploy", "select": "gh__create_issue, gh__list_isues"})
    assert result.loaded == ("gh__create_issue",)
    assert "Nearest: gh__list_issues" in result.text


def test_group_loads_one_entry(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg)
    surface.plan()
    result = surface.tool_search({"select": ["group:gh"]})
    assert set(result.loaded) == {n for n in reg.names() if n.startswith("gh__")}
    assert [e.key for e in surface.loaded_entries()] == ["group:gh"]
    unknown = surface.tool_search({"group": "nope"})
    assert "Unknown group 'nope'" in unknown.text and "gh" in unknown.text


def test_already_listed_versus_loaded(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg)
    surface.plan()
    result = surface.tool_search({"select": ["read_file", "gh__list_issues"]})
    assert result.already_listed == ("read_file",)
    assert result.loaded == ("gh__list_issues",)
    assert "Already in your tool list:\n- read_file" in result.text


def test_search_sees_only_what_the_run_admits(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, policy=lambda n: not n.startswith("gh__merge"))
    surface.plan()
    result = surface.tool_search({"query": "merge pull request", "select": []})
    assert "gh__merge_pull_request" not in result.text
    blocked = surface.tool_search({"select": "gh__merge_pull_request"})
    assert blocked.loaded == () and "gh__merge" not in blocked.text.split("Nearest:")[-1]
    child = ToolSurface(reg, allowlist={"read_file", "gh__list_issues", "ToolSearch"})
    child.plan()
    found = child.tool_search({"query": "issues pull requests files"})
    assert set(found.loaded) | set(found.already_listed) <= {"read_file", "gh__list_issues"}


def test_a_policy_that_fails_admits_nothing(
    reg: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(name: str) -> bool:
        raise RuntimeError("policy store down")

    with caplog.at_level(logging.ERROR, logger="toolsurface.surface"):
        plan = ToolSurface(reg, policy=broken).plan()
    assert plan.names == ()
    assert "policy store down" in caplog.text


# -- discovery order and eviction --------------------------------------------------------------


def test_loads_append_in_discovery_order_and_keep_the_prefix(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg)
    p1 = surface.plan()
    surface.tool_search({"select": "slack__send_message"})
    p2 = surface.plan()
    surface.tool_search({"select": "gh__create_issue"})
    p3 = surface.plan()
    assert p2.names == (*p1.names, "slack__send_message")
    assert p3.names == (*p2.names, "gh__create_issue")
    assert p3.sources[-2:] == ("loaded", "loaded")
    assert p1.catalogue == p2.catalogue == p3.catalogue


def test_eviction_only_at_safe_points_least_recently_used(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, limits=SurfaceLimits(max_loaded_entries=4))
    surface.plan()
    names = ["gh__create_issue", "gh__list_issues", "slack__send_message", "gh__merge_pull_request"]
    for name in names:
        surface.tool_search({"select": name})
    surface.end_turn()
    assert len(surface.loaded_entries()) == 4  # at the cap: nothing unloaded
    surface.tool_search({"select": "gh__list_pull_requests"})
    assert len(surface.loaded_entries()) == 5  # never mid-turn
    surface.note_tool_used("gh__list_issues")
    surface.note_tool_used("gh__create_issue")
    surface.end_turn()  # past the cap: trim to half of it, least recently used first
    assert surface.discovered_tool_names() == ["gh__create_issue", "gh__list_issues"]
    plan = surface.plan()
    assert plan.names[-2:] == ("gh__create_issue", "gh__list_issues")
    surface.tool_search({"select": "gh__merge_pull_request"})
    surface.compaction()  # a compaction is a safe point too, but under the cap it keeps all
    assert len(surface.loaded_entries()) == 3
    surface.tool_search({"select": ["slack__send_message", "gh__list_pull_requests"]})
    surface.note_tool_used("gh__list_issues")
    surface.compaction()  # past the cap: trim to half of it, least recently used first
    assert surface.discovered_tool_names() == ["gh__list_issues", "gh__list_pull_requests"]


def _budgeted(reg: ToolRegistry) -> tuple[ToolSurface, int, list[str]]:
    """A surface whose budget (800 tokens, 100 a tool) has room for a few loads, the room,
    and the names it could load."""

    def estimator(tool: Tool) -> int:
        return 100

    limits = SurfaceLimits(window_tokens=3_200, tool_definitions_ratio=0.25)
    surface = ToolSurface(reg, limits=limits, estimator=estimator)
    base = surface.plan()
    room = 800 - 100 * len(base.names)
    names = [n for n in reg.names() if n not in base.names and n != "ToolSearch"]
    assert 0 < room < 100 * len(names)
    return surface, room, names


def test_select_loads_what_fits_under_the_token_budget(reg: ToolRegistry) -> None:
    surface, room, names = _budgeted(reg)
    result = surface.tool_search({"select": names})
    fit = room // 100
    assert surface.discovered_tool_names() == names[:fit]
    assert f"Tool {names[fit]!r} was not loaded: it takes about 100 tokens and only 0" in (
        result.text
    )
    assert 100 * len(surface.plan().names) <= 800


def test_loads_over_the_token_budget_are_unloaded_at_a_safe_point(reg: ToolRegistry) -> None:
    surface, room, names = _budgeted(reg)
    for name in names[: room // 100]:
        surface.tool_search({"select": [name]})
    loaded = surface.discovered_tool_names()
    assert len(loaded) == room // 100 >= 2
    reg.register(_tool("zz_new_base_tool", "A new tool on the base list."))
    surface.plan()
    assert surface.discovered_tool_names() == loaded  # never mid-turn
    surface.end_turn()  # the base grew: the loads no longer fit, trim to half the room left
    kept = surface.discovered_tool_names()
    assert 100 * len(kept) <= (room - 100) / 2
    assert kept == loaded[len(loaded) - len(kept) :]  # the most recently loaded stay


def test_clip_is_opt_in_and_counts_only_retrieved(reg: ToolRegistry) -> None:
    plain = ToolSurface(reg, deferral_mode="off").plan(user_message="deploy the app")
    assert len(plain.names) == len(reg) - 1  # no ToolSearch: nothing held back
    clipped = ToolSurface(
        reg, deferral_mode="off", pinned={"shell"}, limits=SurfaceLimits(retrieval_top_k=2)
    ).plan(user_message="deploy the app")
    assert "shell" in clipped.names
    # The clip hides tools, so ToolSearch (registered) is listed: the way back to them.
    assert [s for s in clipped.sources if s != "pinned"] == ["clip", "clip", "discovery"]
    assert clipped.sources[clipped.names.index("shell")] == "pinned"
    assert "deploy_app" in clipped.names
    roomy = ToolSurface(reg, limits=SurfaceLimits(retrieval_top_k=50)).plan(user_message="x")
    assert roomy.names == ToolSurface(reg).plan().names


def test_events(reg: ToolRegistry) -> None:
    events: list[Event] = []
    surface = ToolSurface(reg, on_event=events.append)
    surface.plan()
    surface.tool_search({"select": "gh__list_issues"})
    surface.tool_search({"group": "slack"})
    kinds = [e.kind for e in events]
    assert kinds == ["tool_surface_advertised", "tool_discovered", "tool_group_loaded"]
    advertised = events[0].data
    assert advertised["held_back"] == ["gh", "slack"]
    assert advertised["tools"][-1] == {"name": "ToolSearch", "source": "discovery"}
    assert events[2].data == {"group": "slack", "how": "group"}


def test_failing_event_callback_is_logged(
    reg: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(event: Event) -> None:
        raise ValueError("sink down")

    with caplog.at_level(logging.ERROR, logger="toolsurface.surface"):
        ToolSurface(reg, on_event=boom).plan()
    assert "sink down" in caplog.text


# -- the real catalogue ------------------------------------------------------------------------


def test_real_catalogue_with_a_provider_limit(engine_name: str, mcp_tools: list[Tool]) -> None:
    reg = ToolRegistry(mcp_tools, engine=engine_name)  # type: ignore[arg-type]
    for server in sorted({t.name.split("__")[0] for t in mcp_tools}):
        reg.declare_group(server, prefix=f"{server}__", dynamic=True)
    reg.register_many([_tool(f"host_{n}", group="host") for n in ("read", "write", "shell")])
    reg.register(tool_search_tool())
    surface = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=128))
    first = surface.plan()
    assert len(first.names) <= 128
    result = surface.tool_search({"query": "покажи открытые пулреквесты"})
    assert any("pull_request" in n and n.startswith("github__") for n in result.loaded)
    assert "github__list_pull_requests" in result.loaded
    second = surface.plan()
    assert len(second.names) <= 128
    assert second.names == first.names + result.loaded
    assert second.catalogue == first.catalogue
    sent_first = json.dumps(first.render("anthropic"), ensure_ascii=False)
    sent_second = json.dumps(second.render("anthropic"), ensure_ascii=False)
    assert sent_second.startswith(sent_first[:-1])  # the same bytes, then the loads
    for server in sorted({t.name.split("__")[0] for t in mcp_tools})[:12]:
        surface.tool_search({"group": server})  # far more than 128 tools loaded
        assert len(surface.plan().names) <= 128
    surface.end_turn()
    assert len(surface.plan().names) <= 128


@pytest.mark.parametrize(
    ("load_modes", "error", "fragment"),
    [
        (
            {"gh": "lazzy"},
            ValueError,
            "load_modes['gh'] must be 'eager', 'auto' or 'lazy', got 'lazzy'",
        ),
        ({"gh": 42}, ValueError, "load_modes['gh'] must be 'eager', 'auto' or 'lazy', got 42"),
        ({7: "lazy"}, TypeError, "a group name must be a string, got 7"),
    ],
)
def test_a_misspelt_load_mode_is_refused_naming_the_group(
    load_modes: dict[Any, Any], error: type[Exception], fragment: str
) -> None:
    """Not quietly taken as "auto"; a group not declared yet is no error (declared later)."""
    reg = ToolRegistry([tool_search_tool(), _tool("gh__list")])
    with pytest.raises(error) as err:
        ToolSurface(reg, load_modes=load_modes)
    assert fragment in str(err.value)
    ToolSurface(reg, load_modes={"declared_later": "lazy", "gh": "eager"}).plan()
