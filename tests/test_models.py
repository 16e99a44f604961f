"""Tool and settings validation: errors name the tool and the field."""

from __future__ import annotations

import array
import json

import pytest
from pydantic import ValidationError

from toolsurface import RetrievalSettings, Tool, ToolDefinitionError, ToolRegistry, ToolSurface
from toolsurface.models import FieldValues, tool_from_mapping


@pytest.mark.parametrize(
    ("data", "field", "fragment"),
    [
        ({"name": "has space"}, "name", "MCP's rule"),
        ({"name": "x" * 129}, "name", "MCP's rule"),
        ({"name": ""}, "name", "MCP's rule"),
        ({"name": "ok", "description": 5}, "description", "string"),
        ({"name": "ok", "input_schema": {"type": "string"}}, "input_schema", "object"),
        ({"name": "ok", "input_schema": {"properties": []}}, "input_schema", "properties"),
        ({"name": "ok", "input_schema": {"required": "a"}}, "input_schema", "required"),
        ({"name": "ok", "colour": "red"}, "colour", "Extra"),
        ({"name": "ok", "group": "  "}, "group", "letters, digits"),
    ],
)
def test_bad_tools_name_tool_and_field(data: dict[str, object], field: str, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError) as err:
        tool_from_mapping(data, where="servers.json item 3")
    assert err.value.field == field
    assert field in str(err.value) and fragment in str(err.value)
    assert "servers.json item 3" in str(err.value)


def test_not_a_mapping() -> None:
    with pytest.raises(ToolDefinitionError, match="must be an object, got list"):
        tool_from_mapping(["name"])


def test_tool_is_frozen_and_schema_copied() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = Tool(name="t", input_schema=schema)
    schema["properties"]["b"] = {}
    assert "b" not in tool.input_schema["properties"]
    with pytest.raises(ValidationError):
        tool.name = "u"  # type: ignore[misc]


def _deep(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_a_schema_too_deep_to_send_is_refused_when_registered() -> None:
    """It fails registration, naming the tool, rather than every request that carries it."""
    # Too deep to send on every supported Python (3.13 serialises 1,000 levels, 3.11 not 400).
    deep = _deep(100_000)
    with pytest.raises(RecursionError):
        json.dumps(deep)
    with pytest.raises(ToolDefinitionError) as err:
        tool_from_mapping({"name": "deep_tool", "input_schema": deep})
    assert err.value.tool == "deep_tool" and err.value.field == "input_schema"
    assert "nested too deeply" in str(err.value)
    reg = ToolRegistry([{"name": "ok_tool", "input_schema": _deep(120)}], engine="pure")
    plan = ToolSurface(reg).plan()
    assert plan.definitions()[0]["input_schema"] == _deep(120)
    assert plan.render("anthropic")[0]["input_schema"] == _deep(120)


def test_schema_values_json_cannot_send_are_refused_not_copied() -> None:
    """An array or a bytearray would register and then break every request that carries it."""
    for value in (array.array("q", [1, 2, 3]), bytearray(b"ab")):
        schema = {"type": "object", "properties": {"x": {"default": value}}}
        with pytest.raises(ValidationError, match=r"\$\.properties\.x\.default: a .* not JSON"):
            Tool(name="t", input_schema=schema)


def test_settings_validated_frozen_hashable() -> None:
    s = RetrievalSettings()
    assert hash(s) == hash(RetrievalSettings())
    assert {s: 1}[RetrievalSettings()] == 1
    with pytest.raises(ValidationError, match="k1"):
        RetrievalSettings(k1=0)
    with pytest.raises(ValidationError, match="b of body"):
        RetrievalSettings(
            b=FieldValues(name=0.3, search_hint=0.5, summary=0.5, body=1.5, params=0.5)
        )
    with pytest.raises(ValidationError, match="weight of params"):
        RetrievalSettings(weights=FieldValues(name=1, search_hint=1, summary=1, body=1, params=-1))
    with pytest.raises(ValidationError):
        RetrievalSettings(expansion_weight=float("nan"))
    with pytest.raises(ValidationError):
        s.k1 = 2.0  # type: ignore[misc]
