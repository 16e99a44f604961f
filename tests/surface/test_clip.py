"""The per-message clip keeps its way back (ToolSearch) and fills up to k in order."""

from __future__ import annotations

import pytest

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool


def _tool(name: str, text: str) -> Tool:
    return Tool(name=name, description=text, input_schema={"type": "object", "properties": {}})


@pytest.fixture
def reg() -> ToolRegistry:
    """Nothing held back (no groups): only the clip can leave a tool off."""
    return ToolRegistry(
        [
            _tool("fs_read", "Read a file from disk."),
            _tool("fs_write", "Write text to a file on disk."),
            _tool("deploy_app", "Deploy the application to production."),
            _tool("send_mail", "Send an email message."),
            _tool("shell", "Run a shell command."),
            _tool("weather", "Tell the weather forecast for a city."),
            tool_search_tool(),
        ]
    )


def _clipped(reg: ToolRegistry, k: int = 2, **kw: object) -> ToolSurface:
    return ToolSurface(reg, pinned={"shell"}, limits=SurfaceLimits(retrieval_top_k=k, **kw))


def test_the_clip_lists_toolsearch_when_it_hides_tools(reg: ToolRegistry) -> None:
    plan = _clipped(reg).plan(user_message="deploy the application")
    assert plan.held_back == ()
    assert "weather" not in plan.names
    assert plan.names[-1] == "ToolSearch"
    assert plan.sources[-1] == "discovery"
    # Without the clip nothing is hidden and the list is the host's own, ToolSearch aside.
    plain = ToolSurface(reg).plan(user_message="deploy the application")
    assert "ToolSearch" not in plain.names
    # A clip whose unpinned tools all fit hides nothing and adds nothing.
    roomy = ToolSurface(reg, limits=SurfaceLimits(retrieval_top_k=50)).plan(user_message="x")
    assert roomy.names == plain.names


def test_a_clipped_tool_loads_through_toolsearch_and_stays(reg: ToolRegistry) -> None:
    surface = _clipped(reg)
    plan = surface.plan(user_message="deploy the application")
    assert "weather" not in plan.names
    assert "ToolSearch" in plan.names  # the model has the way back
    found = surface.tool_search({"query": "weather forecast"})
    assert found.loaded == ("weather",)
    for message in ("deploy the application", "send an email", ""):
        plan = surface.plan(user_message=message)
        assert plan.sources[plan.names.index("weather")] == "loaded"
    selected = surface.tool_search({"select": "send_mail"})
    assert selected.loaded == ("send_mail",)
    assert "send_mail" in surface.plan(user_message="weather in Paris").names


def test_the_toolsearch_slot_fits_under_the_count_limit(reg: ToolRegistry) -> None:
    plan = _clipped(reg, k=2, max_advertised_tools=4).plan(user_message="deploy the application")
    assert len(plan.names) == 4
    assert plan.names[-1] == "ToolSearch"
    assert "shell" in plan.names


@pytest.mark.parametrize("message", ["", "   ", "the", "?!", "of the"])
def test_an_empty_message_fills_the_clip_in_order_after_pinned(
    reg: ToolRegistry, message: str
) -> None:
    plan = _clipped(reg, k=3).plan(user_message=message)
    assert plan.names == ("fs_read", "fs_write", "deploy_app", "shell", "ToolSearch")
    assert plan.sources == ("clip", "clip", "clip", "pinned", "discovery")


def test_a_message_finding_fewer_than_k_fills_the_rest_in_order(reg: ToolRegistry) -> None:
    plan = _clipped(reg, k=3).plan(user_message="weather forecast")
    kept = [n for n, s in zip(plan.names, plan.sources) if s == "clip"]
    assert kept == ["fs_read", "fs_write", "weather"]  # the find, then the first in order


def test_toolsearch_with_an_empty_query_answers_the_first_tools(reg: ToolRegistry) -> None:
    surface = ToolSurface(reg, limits=SurfaceLimits(retrieval_top_k=1, search_loads=2))
    surface.plan(user_message="")
    listed = set(surface.last_plan_names())
    assert listed == {"fs_read", "ToolSearch"}
    for query in ("", "  ", "the"):
        result = surface.tool_search({"query": query})
        assert not result.refused, query
        assert result.matches[:3] == ("fs_read", "fs_write", "deploy_app"), query
    first = ToolSurface(reg, limits=SurfaceLimits(retrieval_top_k=1, search_loads=2))
    first.plan(user_message="")
    result = first.tool_search({"query": ""})
    assert result.loaded == ("fs_write", "deploy_app")  # the load cap holds
    assert result.already_listed[0] == "fs_read"
    assert first.tool_search({}).refused  # asking for nothing is still refused
