"""ToolSearch's arguments: what a model gets back when it writes them wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.tools.toolsearch import (
    ARGUMENTS_MAX_CHARS,
    ARGUMENTS_MAX_DEPTH,
    ARGUMENTS_MAX_INT_DIGITS,
    REFUSAL,
    SELECT_MAX_ITEMS,
    parse_tool_search_arguments,
    refusal_text,
)


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


def test_a_blank_query_asks_for_a_listing_and_nothing_at_all_is_refused() -> None:
    for arguments in ({"query": ""}, {"query": "   "}, '{"query": ""}'):
        request = parse_tool_search_arguments(arguments)
        assert request.blank_query and not request.empty, arguments
    for arguments in ({}, {"query": None}, {"query": "", "select": "gh__list_issues"}):
        assert not parse_tool_search_arguments(arguments).blank_query, arguments
    assert parse_tool_search_arguments({}).empty


def test_the_refusal_names_what_was_wrong(surface: ToolSurface) -> None:
    result = surface.tool_search({"query": 123})
    assert result.refused
    assert "query must be a string, got number" in result.text
    for form in ("query", "select", "group"):
        assert form in result.text


def _hostile() -> list[tuple[str, Any, str]]:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    huge = int("9" * 4000)  # str() of it is within Python's limit; of 5,000 digits it raises
    huge_key: dict[Any, Any] = {10**5000: 1}
    return [
        ("nested JSON", '{"select": ' + "[" * 20_000 + "]" * 20_000 + "}", "more than 32 levels"),
        ("a 5,000-digit integer", '{"query": ' + "9" * 5000 + "}", "more than 20 digits"),
        ("a 21-digit integer", '{"select": [' + "1" * 21 + "]}", "more than 20 digits"),
        ("NaN", '{"query": NaN}', "NaN is not JSON"),
        ("-Infinity", b'{"query": -Infinity}', "-Infinity is not JSON"),
        ("long JSON text", '{"query": "' + "x" * 70_000 + '"}', "at most 65,536 characters"),
        ("long JSON bytes", b'{"query": "' + b"x" * 70_000 + b'"}', "at most 65,536 bytes"),
        ("invalid UTF-8", b'{"query": "\xff\xfe"}', "got bytes that are not JSON"),
        ("10 million select items", {"select": ["a"] * 10_000_000}, "got 10,000,000 items"),
        ("a select string of many names", {"select": "a," * 5000}, "at most 1,024 tools"),
        ("long select names", {"select": ["x" * 40_000] * 2}, "at most 65,536 characters"),
        ("a long query", {"query": "x" * 100_000}, "query must be at most 65,536"),
        ("a long group", {"group": "g" * 100_000}, "group must be at most 65,536"),
        ("a huge select item", {"select": [10**5000]}, "select[0] must be a tool name"),
        ("an int past 64 bits", {"select": [huge]}, "select[0] must be a tool name"),
        ("a deep mapping", {"query": {"a": deep}, "select": deep}, "query must be a string"),
        ("a huge key", huge_key, "unknown argument a key of type number"),
        ("a set", {"select": {"a", "b"}}, "got set"),
    ]


@pytest.mark.parametrize(
    ("arguments", "note"), [(a, n) for _, a, n in _hostile()], ids=[i for i, _, _ in _hostile()]
)
def test_hostile_arguments_are_refused_with_the_usage(
    surface: ToolSurface, arguments: Any, note: str
) -> None:
    before = (surface.snapshot(), surface.plan().names)
    result = surface.tool_search(arguments)
    assert result.refused
    assert note in result.text
    assert result.text.endswith(REFUSAL)
    assert (surface.snapshot(), surface.plan().names) == before


def test_ten_million_select_items_cost_nothing() -> None:
    # Refused on the list's length, before any item is read (no timing asserted).
    class Unreadable(list[Any]):
        def __iter__(self) -> Any:
            raise AssertionError("select was iterated")

        def __getitem__(self, i: Any) -> Any:
            raise AssertionError("select was indexed")

    items = Unreadable()
    items.extend([""] * (SELECT_MAX_ITEMS + 1))
    request = parse_tool_search_arguments({"select": items})
    assert request.empty and f"at most {SELECT_MAX_ITEMS:,} names" in request.notes[0]


def test_many_unknown_keys_are_counted_not_read() -> None:
    (note,) = parse_tool_search_arguments({f"k{i}": 1 for i in range(100_000)}).notes
    assert note.endswith("and 99995 more: ToolSearch takes query, select, group")


def test_bounds_are_the_documented_ones() -> None:
    from pathlib import Path

    limits = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text("utf-8")
    for name, value in [
        ("ARGUMENTS_MAX_CHARS", ARGUMENTS_MAX_CHARS),
        ("ARGUMENTS_MAX_DEPTH", ARGUMENTS_MAX_DEPTH),
        ("ARGUMENTS_MAX_INT_DIGITS", ARGUMENTS_MAX_INT_DIGITS),
        ("SELECT_MAX_ITEMS", SELECT_MAX_ITEMS),
    ]:
        row = next(line for line in limits.splitlines() if name in line)
        assert f"{value:,}" in row, name
