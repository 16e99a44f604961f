"""Every tool is checked at the door: what cannot be sent as JSON or UTF-8 never registers.

Before, a lone surrogate in a parameter name, a cyclic schema, bytes, a set, a datetime or
NaN registered fine and then broke every plan of every run on that registry.
"""

from __future__ import annotations

import datetime
import decimal
import json
import unicodedata
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from toolsurface import CatalogueFormatError, Tool, ToolDefinitionError, ToolRegistry, ToolSurface
from toolsurface._internal.json_check import json_problem
from toolsurface.catalogue import load_catalogue, parse_catalogue
from toolsurface.models import tool_from_mapping


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def cyclic() -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object"}
    node["properties"] = {"self": node}
    return node


BAD: list[tuple[str, Any, str]] = [
    ("surrogate key", schema(**{"q\ud800": {"type": "string"}}), "$.properties: key"),
    ("surrogate enum", schema(q={"enum": ["ok", "x\udfff"]}), "$.properties.q.enum[1]"),
    ("cycle", cyclic(), "refers back to itself (a cycle)"),
    ("bytes", schema(q={"default": b"raw"}), "$.properties.q.default: a bytes"),
    ("set", schema(q={"enum": {1, 2}}), "$.properties.q.enum: a set"),
    ("datetime", schema(q={"default": datetime.date(2026, 1, 1)}), "a date is not JSON"),
    ("decimal", schema(q={"maximum": decimal.Decimal("1.5")}), "a Decimal is not JSON"),
    ("object", schema(q={"default": object()}), "a object is not JSON"),
    ("nan", schema(q={"maximum": float("nan")}), "$.properties.q.maximum: NaN"),
    ("inf", schema(q={"minimum": float("-inf")}), "NaN or an infinity"),
    ("huge int", schema(q={"maximum": 2**70}), "an integer of 71 bits"),
    ("key not str", {"type": "object", "properties": {1: {}}}, "key 1 is a int"),
]


@pytest.mark.parametrize(("what", "bad", "said"), BAD, ids=[b[0] for b in BAD])
def test_a_schema_that_cannot_be_sent_is_refused_naming_the_path(
    what: str, bad: dict[str, Any], said: str
) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool_from_mapping({"name": "weather", "input_schema": bad}, where="item 3")
    message = str(caught.value)
    assert "tool 'weather' (item 3): field 'input_schema'" in message
    assert said in message, message
    assert caught.value.tool == "weather"


def test_json_problem_walks_deeper_than_the_recursion_limit() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(10_000):
        node["x"] = {}
        node = node["x"]
    problem = json_problem(deep)
    assert (
        problem == "..." + ("$" + ".x" * 257)[-160:] + ": nested too deeply (more than 256 levels)"
    )


def test_text_fields_with_a_lone_surrogate_are_refused() -> None:
    # pydantic's own str check refuses them, naming the field.
    with pytest.raises(ToolDefinitionError, match="description"):
        Tool(name="t", description="ok \ud83d broken")
    with pytest.raises(ToolDefinitionError, match="search_hint"):
        Tool(name="t", search_hint="\udc00")
    assert Tool(name="t", description="Погода 🌦 в городе").description.endswith("городе")


def test_what_json_can_carry_is_kept_as_it_is() -> None:
    good = schema(
        q={"enum": ("a", "b"), "maximum": 2**63, "minimum": -(2**63), "default": None},
        r=OrderedDict(type="string", description="Город, 🌦"),
    )
    tool = Tool(name="t", input_schema=good)
    json.dumps(tool.input_schema, allow_nan=False)  # standard JSON, always
    assert tool.input_schema["properties"]["q"]["maximum"] == 2**63


def test_one_refused_tool_leaves_the_registry_and_its_runs_working() -> None:
    registry = ToolRegistry([Tool(name="ok", description="Fine.")])
    surface = ToolSurface(registry)
    before = surface.plan().names
    with pytest.raises(ToolDefinitionError, match="item 1"):
        registry.register_many(
            [
                {"name": "other", "description": "Also fine."},
                {"name": "bad", "input_schema": cyclic()},
            ]
        )
    assert registry.names() == ["ok"]  # the batch is all or nothing
    assert surface.plan().names == before
    json.dumps(surface.plan().render("anthropic"), allow_nan=False)


def test_catalogue_files_refuse_nan_and_numbers_json_cannot_read(tmp_path: Path) -> None:
    nan = (
        '[{"name": "a", "input_schema": {"type": "object", "properties": {"n": {"maximum": NaN}}}}]'
    )
    with pytest.raises(CatalogueFormatError, match="NaN"):
        parse_catalogue(nan, source="nan.json")
    digits = "9" * 5000
    path = tmp_path / "digits.json"
    path.write_text(f'[{{"name": "a", "input_schema": {{"maximum": {digits}}}}}]', "utf-8")
    with pytest.raises(
        CatalogueFormatError, match=r"digits\.json: an integer of more than \d+ digits"
    ):
        load_catalogue(path)


def test_invisible_characters_in_a_tools_own_text_never_reach_the_provider() -> None:
    hidden = "Read a file.\u202e\u200b\x07 Never\u2066 delete.\nSecond line.\u2028Third."
    reg = ToolRegistry([Tool(name="read", description=hidden, search_hint="zero\u200bwidth")])
    (definition,) = ToolSurface(reg).plan().definitions()
    assert definition["description"] == "Read a file. Never delete.\nSecond line.\nThird."
    assert reg.get("read").search_hint == "zerowidth"
    kept = reg.get("read").description
    assert all(unicodedata.category(c) not in ("Cf", "Cc") or c == "\n" for c in kept)


def test_brackets_inside_a_string_left_open_are_not_nesting() -> None:
    # The depth check runs before parsing: brackets in a string never count, closed or
    # left open (a model's broken arguments), and a string left open is read to the end
    # in one pass, however many escaped quotes it holds.
    from toolsurface._internal.json_check import JsonTextError, loads

    for text in ('["[[[[[[[[', '["\\"[[[[[[[[[', '{"a": "]]]]' + '\\"' * 50_000):
        with pytest.raises(json.JSONDecodeError):
            loads(text, max_depth=4)
    with pytest.raises(JsonTextError, match="more than 4 levels deep"):
        loads("[" * 5 + '"' + '\\"' * 50_000, max_depth=4)
