"""Tool and settings validation: errors name the tool and the field."""

from __future__ import annotations

import array
import json
from collections.abc import Callable

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
        with pytest.raises(ToolDefinitionError, match=r"\$\.properties\.x\.default: a .* not JSON"):
            Tool(name="t", input_schema=schema)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Tool(name="has space", description=5, colour="red"),  # type: ignore[arg-type, call-arg]
        lambda: Tool.model_validate({"name": "has space", "description": 5, "colour": "red"}),
        lambda: Tool.model_validate_json('{"name": "has space", "description": 5, "colour": 1}'),
    ],
    ids=["init", "model_validate", "model_validate_json"],
)
def test_building_a_bad_tool_raises_the_projects_error(build: Callable[[], Tool]) -> None:
    """Every bad field named, with the tool's name; no pydantic error or link."""
    with pytest.raises(ToolDefinitionError) as err:
        build()
    assert not isinstance(err.value, ValidationError)
    assert isinstance(err.value, ValueError)
    message = str(err.value)
    assert message.startswith("tool 'has space': field 'name': must be 1 to 128 characters")
    assert "field 'description': Input should be a valid string" in message
    assert "field 'colour': Extra inputs are not permitted" in message
    assert "pydantic" not in message and "http" not in message and "Value error" not in message
    assert err.value.tool == "has space" and err.value.field == "name"
    assert [f for f, _ in err.value.problems] == ["name", "description", "colour"]
    assert err.value.__suppress_context__  # the traceback shows ours alone


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: Tool(description="x"), "a tool: field 'name': Field required"),  # type: ignore[call-arg]
        (lambda: Tool.model_validate({"name": 7}), "a tool: field 'name': Input should be"),
        (lambda: Tool.model_validate(["x"]), "a tool: Input should be a valid dictionary"),
        (lambda: Tool.model_validate_json("{"), "a tool: Invalid JSON"),
        (lambda: Tool(name="x" * 5000), "tool '" + "x" * 128 + "...': field 'name'"),
    ],
    ids=["no name", "name not text", "not a mapping", "bad json", "long name cut"],
)
def test_a_tool_without_a_readable_name_is_a_tool(build: Callable[[], Tool], said: str) -> None:
    with pytest.raises(ToolDefinitionError) as err:
        build()
    assert str(err.value).startswith(said), str(err.value)
    assert len(str(err.value)) < 400


def test_registering_and_building_say_the_same() -> None:
    """A mapping registered says where it came from; otherwise the two messages are one."""
    data = {"name": "weather", "input_schema": {"type": "string"}}
    with pytest.raises(ToolDefinitionError) as built:
        Tool(**data)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError) as registered:
        ToolRegistry(engine="pure").register(data, where="servers.json item 3")
    assert str(built.value) == (
        "tool 'weather': field 'input_schema': must be a JSON Schema of type 'object', not 'string'"
    )
    assert str(registered.value) == str(built.value).replace(
        "tool 'weather':", "tool 'weather' (servers.json item 3):"
    )


def test_good_tools_still_build_every_way() -> None:
    tool = Tool(name="t", description="d")
    assert Tool.model_validate({"name": "t", "description": "d"}) == tool
    assert Tool.model_validate_json(tool.model_dump_json()) == tool
    assert Tool.model_validate(tool) == tool
    assert tool.model_copy(update={"description": "e"}).description == "e"


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


def test_a_group_is_validated_frozen_and_copied_through_the_dataclass_functions() -> None:
    """What the changelog tells a host to use on a group instead of a model's methods."""
    import dataclasses

    from pydantic import TypeAdapter

    from toolsurface import ToolGroup

    group = ToolGroup(name="gh", prefix="gh__", aliases=["Git  Hub", "Git Hub"])
    assert group.aliases == ("Git Hub",)  # folded and deduplicated, as declared
    with pytest.raises(dataclasses.FrozenInstanceError):
        group.name = "other"  # type: ignore[misc]
    assert dataclasses.asdict(group)["prefix"] == "gh__"
    lazy = dataclasses.replace(group, load="lazy")
    assert (lazy.load, group.load, lazy.name) == ("lazy", "auto", "gh")
    with pytest.raises(ValidationError, match="name"):
        dataclasses.replace(group, name="not a name")  # replace validates again
    with pytest.raises(ValidationError, match="bogus"):
        ToolGroup(name="gh", bogus=1)  # type: ignore[call-arg]
    adapter = TypeAdapter(ToolGroup)
    assert adapter.validate_json(adapter.dump_json(group)) == group
    assert len({group, ToolGroup(name="gh", prefix="gh__", aliases=("Git Hub",))}) == 1
