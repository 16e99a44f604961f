"""ToolSearch's arguments: what a model gets back when it writes them wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.tools.toolsearch import REFUSAL, parse_tool_search_arguments, refusal_text


def _tool(name: str) -> Tool:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    return Tool(name=name, description=f"Does {name}.", input_schema=schema)


@pytest.fixture
def surface(engine_name: str) -> ToolSurface:
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many([_tool("read_file"), _tool("gh__list_issues"), _tool("gh__create_issue")])
    reg.declare_group("gh", prefix="gh__", dynamic=True)
    reg.register(tool_search_tool())
    out = ToolSurface(reg)
    out.plan()
    return out


@pytest.mark.parametrize(
    ("arguments", "note"),
    [
        ({"query": 123}, "query must be a string, got number"),
        ({"query": ["x"]}, "query must be a string, got array"),
        ({"query": True}, "query must be a string, got boolean"),
        ({"select": {"a": 1}}, "select must be a list of tool names or a string, got object"),
        ({"select": ["gh__x", 5.5]}, "select[1] must be a tool name (a string), got number"),
        ({"group": 5}, "group must be a string, got number"),
        (
            {"selct": "gh__list_issues"},
            "unknown argument 'selct' (did you mean select?): "
            "ToolSearch takes query, select, group",
        ),
        (["query"], "arguments must be an object, got array"),
        (None, "arguments must be an object, got null"),
        ("list issues", "arguments must be a JSON object, got a string that is not JSON"),
        ('["x"]', "arguments must be a JSON object, got a string holding array"),
    ],
)
def test_wrong_arguments_are_named(arguments: Any, note: str) -> None:
    request = parse_tool_search_arguments(arguments)
    assert note in request.notes
    assert note in request.refusal and request.refusal.endswith(REFUSAL)


def test_a_json_object_string_is_read_like_the_object(surface: ToolSurface) -> None:
    text = json.dumps({"select": ["gh__list_issues"]})  # OpenAI's function.arguments
    assert parse_tool_search_arguments(text) == parse_tool_search_arguments(json.loads(text))
    result = surface.tool_search(text)
    assert not result.refused and result.loaded == ("gh__list_issues",)


def test_nulls_count_as_absent() -> None:
    request = parse_tool_search_arguments({"query": None, "select": "gh__a", "group": None})
    assert request.names == ("gh__a",) and request.notes == ()


def test_many_unknown_keys_are_named_up_to_five() -> None:
    (note,) = parse_tool_search_arguments({k: 1 for k in "abcdefg"} | {"query": "x"}).notes
    assert note.startswith("unknown arguments 'a', 'b', 'c', 'd', 'e' and 2 more")


def test_a_wrong_field_beside_a_good_one_is_noted_in_the_result(surface: ToolSurface) -> None:
    result = surface.tool_search({"select": "gh__create_issue", "group": 7, "limit": 3})
    assert result.loaded == ("gh__create_issue",)
    assert "Note: group must be a string, got number." in result.text
    assert "Note: unknown argument 'limit'" in result.text


def test_a_refusal_without_notes_is_the_three_forms() -> None:
    assert refusal_text() == REFUSAL
    assert parse_tool_search_arguments({}).refusal == REFUSAL


def test_the_refusal_names_what_was_wrong(surface: ToolSurface) -> None:
    result = surface.tool_search({"query": 123})
    assert result.refused
    assert "query must be a string, got number" in result.text
    for form in ("query", "select", "group"):
        assert form in result.text
