"""What the reference design's own tests ask of a surface (issue 20, items 1 to 8).

Each test is one behaviour a host relies on: budgets that hold for rules and for loads,
names in any case, every tool used counted as called, groups that cost nothing while
nothing is held back, the clip keeping the search tool, group descriptions, and a system
prompt that stays byte-identical from one session to the next.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall
from toolsurface.surface import Event


def _tool(name: str, text: str = "", **kw: Any) -> Tool:
    return Tool(
        name=name,
        description=text or f"Does {name.replace('_', ' ')}.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        **kw,
    )


def _tools() -> list[Tool]:
    return [
        _tool("read_file", "Read a file from the workspace."),
        _tool("shell", "Run a shell command."),
        *[
            _tool(f"Mcp_Github_{n}", f"GitHub: {n.replace('_', ' ')}.")
            for n in ("create_issue", "list_issues", "list_pull_requests", "merge_pull_request")
        ],
        *[_tool(f"slack__{n}", f"Slack: {n.replace('_', ' ')}.") for n in ("send", "search")],
    ]


def _registry(engine: str, *, rules: str | None = None, groups: bool = True) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(_tools())
    if groups:
        reg.declare_group("github", prefix="Mcp_Github_", rules=rules)
        reg.declare_group("slack", prefix="slack__")
    reg.register(tool_search_tool())
    return reg


def _per_tool(tokens: int) -> Any:
    def estimator(tool: Tool) -> int:
        return tokens

    return estimator


# -- 1. a group's rules weigh in the token budget ----------------------------------------


def test_rules_that_push_the_surface_over_the_budget_hold_the_group_back(
    engine_name: str,
) -> None:
    # Eight tools of 100 tokens under a budget of 1,000: everything fits without rules.
    limits = SurfaceLimits(window_tokens=4_000, tool_definitions_ratio=0.25)
    plain = ToolSurface(_registry(engine_name), limits=limits, estimator=_per_tool(100))
    assert plain.plan().held_back == ()
    rules = "Always name the repository as owner/name. " * 30  # about 320 tokens
    ruled = ToolSurface(
        _registry(engine_name, rules=rules), limits=limits, estimator=_per_tool(100)
    )
    plan = ruled.plan()
    assert plan.held_back == ("github",)
    assert "Rules of group github" not in plan.catalogue  # a held-back group's rules stay out
    assert "- github: Mcp_Github_create_issue" in plan.catalogue


# -- 2. the token budget holds for loads ----------------------------------------------------


def _tight(engine: str, *, rules: str | None = None) -> tuple[ToolSurface, list[Event]]:
    events: list[Event] = []
    reg = _registry(engine, rules=rules)
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy", rules=rules)
    reg.declare_group("slack", prefix="slack__", dynamic=True, load="lazy")
    # Base: read_file, shell and ToolSearch (300 of 550): room for two more tools.
    limits = SurfaceLimits(window_tokens=2_200, tool_definitions_ratio=0.25)
    surface = ToolSurface(reg, limits=limits, estimator=_per_tool(100), on_event=events.append)
    assert surface.plan().names == ("read_file", "shell", "ToolSearch")
    return surface, events


def test_a_group_load_over_the_budget_loads_nothing_and_says_the_room(engine_name: str) -> None:
    surface, _ = _tight(engine_name)
    result = surface.tool_search({"group": "github"})
    assert result.loaded == () and surface.loaded_entries() == []
    assert "Group 'github' was not loaded: it takes about 400 tokens and only 250" in result.text
    small = surface.tool_search({"group": "slack"})  # two tools: they fit
    assert set(small.loaded) == {"slack__send", "slack__search"}


def test_a_search_loads_the_hits_that_fit_best_first(engine_name: str) -> None:
    surface, _ = _tight(engine_name)
    result = surface.tool_search({"query": "github pull request issue"})
    assert len(result.loaded) == 2  # three would be loaded; two fit
    hits = [h.name for h in surface.registry.search("github pull request issue", k=8)]
    assert list(result.loaded) == [n for n in hits if n.startswith("Mcp_Github_")][:2]
    assert "Not loaded for lack of room (about 50 tokens are free" in result.text
    assert 100 * len(surface.plan().names) <= 550


def test_a_blind_calls_group_load_over_the_budget_loads_nothing(engine_name: str) -> None:
    surface, events = _tight(engine_name, rules="Name repositories as owner/name.")
    (v,) = surface.admit([ToolCall("Mcp_Github_list_issues", {}, id="1")])
    assert v.not_run == "rules" and "does not fit in your tool list" in v.message
    assert "about 250 tokens are free" in v.message
    assert surface.loaded_tool_group_names() == []
    assert any(e.kind == "tool_group_not_loaded" for e in events)
    (again,) = surface.admit([ToolCall("Mcp_Github_list_issues", {}, id="2")])
    assert again.runs and again.blind  # rules given: it runs, and the tool alone is loaded
    assert surface.discovered_tool_names() == ["Mcp_Github_list_issues"]


# -- 3. names in any case ---------------------------------------------------------------------


def test_select_and_group_match_a_name_in_any_case_when_one_name_matches(
    engine_name: str,
) -> None:
    reg = _registry(engine_name)
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy")
    reg.declare_group("slack", prefix="slack__", dynamic=True, load="lazy")
    surface = ToolSurface(reg)
    surface.plan()
    picked = surface.tool_search({"select": ["mcp_github_create_issue"]})
    assert picked.loaded == ("Mcp_Github_create_issue",)
    group = surface.tool_search({"group": "SLACK"})
    assert group.groups == ("slack",)


def test_names_differing_only_by_case_stay_ambiguous(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.register(_tool("mcp_github_create_issue", "Another server's issue tool."))
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy")
    surface = ToolSurface(reg)
    surface.plan()
    result = surface.tool_search({"select": ["MCP_GITHUB_CREATE_ISSUE"]})
    assert result.loaded == ()
    assert "it matches Mcp_Github_create_issue, mcp_github_create_issue" in result.text
    (v,) = surface.admit([ToolCall("MCP_GITHUB_CREATE_ISSUE", {}, id="1")])
    assert v.action == "refuse" and v.not_run == "ambiguous"
    assert "Mcp_Github_create_issue, mcp_github_create_issue" in v.message


def test_a_blind_call_in_the_wrong_case_runs_as_the_exact_name(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy")
    surface = ToolSurface(reg, policy=lambda n: n != "Mcp_Github_merge_pull_request")
    surface.plan()
    (v,) = surface.admit([ToolCall("mcp_github_list_issues", {"id": "1"}, id="c1")])
    assert v.runs and v.blind
    assert v.call == ToolCall("Mcp_Github_list_issues", {"id": "1"}, id="c1")
    assert v.asked_name == "mcp_github_list_issues"
    assert surface.discovered_tool_names() == ["Mcp_Github_list_issues"]
    (blocked,) = surface.admit([ToolCall("mcp_github_merge_pull_request")])
    assert blocked.not_run == "unknown"  # a blocked name is no match in any case
    assert "merge_pull_request" not in blocked.message.split("Closest")[-1]


# -- 4. every tool used counts as called --------------------------------------------------------


def test_a_tool_called_from_a_loaded_group_counts_as_called(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy")
    surface = ToolSurface(reg)
    surface.plan()
    surface.tool_search({"group": "github"})
    surface.plan()
    (v,) = surface.admit([ToolCall("Mcp_Github_list_issues", {}, id="1")])
    assert v.runs and not v.blind
    assert surface.called_discovered_tool_names() == ["Mcp_Github_list_issues"]
    again = ToolSurface(reg)
    again.restore(surface.snapshot().to_json())
    assert again.called_discovered_tool_names() == ["Mcp_Github_list_issues"]
    nxt = ToolSurface(reg)  # the session's next run, seeded with what this one used
    nxt.seed(discovered_tools=surface.called_discovered_tool_names())
    assert "Mcp_Github_list_issues" in nxt.plan().names


# -- 5. declaring groups changes nothing while nothing is held back -----------------------------


def test_groups_with_nothing_held_back_send_the_hosts_own_list(engine_name: str) -> None:
    tools = list(reversed(_tools()))  # a registration order that is not the name order
    without = ToolRegistry(tools, engine=engine_name)  # type: ignore[arg-type]
    with_groups = ToolRegistry(tools, engine=engine_name)  # type: ignore[arg-type]
    with_groups.declare_group("github", prefix="Mcp_Github_", dynamic=False)
    with_groups.declare_group("slack", prefix="slack__")
    for reg in (without, with_groups):
        reg.register(tool_search_tool())
    a, b = ToolSurface(without).plan(), ToolSurface(with_groups).plan()
    assert b.held_back == ()
    assert b.names == a.names == tuple(t.name for t in tools)
    assert b.render("anthropic") == a.render("anthropic")
    assert b.system_text("You are helpful.") == a.system_text("You are helpful.")


# -- 6. the per-message clip keeps the search tool -----------------------------------------------


def test_the_clip_keeps_the_search_tool_pinned_and_always_load_tools(engine_name: str) -> None:
    reg = _registry(engine_name)
    reg.register(_tool("status", "Show the status of the workspace.", always_load=True))
    reg.declare_group("github", prefix="Mcp_Github_", dynamic=True, load="lazy")
    limits = SurfaceLimits(retrieval_top_k=1)
    surface = ToolSurface(reg, limits=limits, pinned={"shell"})
    plan = surface.plan(user_message="send a message on slack")
    assert plan.held_back == ("github",)
    assert {"ToolSearch", "shell", "status"} <= set(plan.names)
    assert "read_file" not in plan.names  # the clip did clip
    assert [n for n, s in zip(plan.names, plan.sources) if s == "clip"] == ["slack__send"]


# -- 7. groups describe themselves ---------------------------------------------------------------


def test_a_groups_description_is_shown_in_the_catalogue_and_the_group_listing(
    engine_name: str,
) -> None:
    reg = _registry(engine_name)
    reg.declare_group(
        "github",
        prefix="Mcp_Github_",
        dynamic=True,
        load="lazy",
        description="Issues and pull requests\n of GitHub repositories",
    )
    surface = ToolSurface(reg)
    first = surface.plan().catalogue
    assert (
        "- github (Issues and pull requests of GitHub repositories): Mcp_Github_create_issue"
        in first
    )
    assert surface.plan().catalogue == first  # byte-stable
    listing = surface.tool_search({"group": "gitlab"}).text
    assert "Held-back groups: github (Issues and pull requests of GitHub repositories)." in (
        listing
    )


def test_a_description_longer_than_a_line_is_refused_naming_the_field() -> None:
    reg = ToolRegistry()
    with pytest.raises(ValueError, match="group 'github': field 'description'"):
        reg.declare_group("github", description="x" * 201)


# -- 8. the system prompt can be cached across sessions ------------------------------------------


def test_two_sessions_send_the_same_system_prompt_with_rules(engine_name: str) -> None:
    reg = _registry(engine_name, rules="Name repositories as owner/name.")
    reg.declare_group("slack", prefix="slack__", dynamic=True, load="lazy")
    key = b"the host's own secret key"
    plans = [ToolSurface(reg, session_id=sid, mark_key=key).plan() for sid in ("monday", "tuesday")]
    assert "Rules of group github [" in plans[0].catalogue
    assert plans[0].system_text("Base.") == plans[1].system_text("Base.")
    per_session = [
        ToolSurface(reg, session_id=sid, mark_key=key, mark_scope="session").plan()
        for sid in ("monday", "tuesday")
    ]
    assert per_session[0].catalogue != per_session[1].catalogue


def test_a_rules_heading_printed_by_a_tool_result_does_not_carry_the_mark(
    engine_name: str,
) -> None:
    reg = _registry(engine_name, rules="Name repositories as owner/name.")
    key = b"the host's own secret key"
    surface = ToolSurface(reg, session_id="s", mark_key=key)
    catalogue = surface.plan().catalogue
    mark = surface.mark
    assert f"Rules of group github [{mark}]:" in catalogue
    # What a tool result could print: the heading with any mark it can compute without the
    # key (the same rules under another key, or none) is not the genuine one.
    other = ToolSurface(reg, session_id="s", mark_key=b"an attacker's guess key").mark
    unkeyed = ToolSurface(_registry(engine_name, rules="Name repositories as owner/name.")).mark
    assert mark not in (other, unkeyed)
    assert "without that mark" in catalogue
