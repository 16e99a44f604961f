"""Catalogue readers: each format detected, a wrong file told what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsurface import CatalogueFormatError
from toolsurface.catalogue import demo_catalogue, load_catalogue, parse_catalogue

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        ({"tools": [{"name": "a", "description": "A.", "inputSchema": SCHEMA}]}, "mcp"),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"tools": [{"name": "a", "inputSchema": SCHEMA}]},
            },
            "mcp",
        ),
        (
            [
                {
                    "type": "function",
                    "function": {"name": "a", "description": "A.", "parameters": SCHEMA},
                }
            ],
            "openai-chat",
        ),
        (
            [{"type": "function", "name": "a", "description": "A.", "parameters": SCHEMA}],
            "openai-responses",
        ),
        ([{"name": "a", "description": "A.", "input_schema": SCHEMA}], "anthropic"),
        (
            {"functionDeclarations": [{"name": "a", "description": "A.", "parameters": SCHEMA}]},
            "gemini",
        ),
        (
            [{"server": "srv", "name": "a", "description": "A.", "input_schema": SCHEMA}],
            "server-records",
        ),
    ],
)
def test_formats_detected(data: object, fmt: str) -> None:
    found, tools = parse_catalogue(json.dumps(data))
    assert found == fmt
    assert tools[0].name in ("a", "srv__a")
    assert tools[0].input_schema["required"] == ["q"]


def test_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text(
        json.dumps({"name": "a", "input_schema": SCHEMA})
        + "\n\n"
        + json.dumps({"type": "function", "name": "b", "parameters": {"type": "dict"}})
        + "\n",
        encoding="utf-8",
    )
    fmt, tools = load_catalogue(path)
    assert fmt == "jsonl" and [t.name for t in tools] == ["a", "b"]
    assert tools[1].input_schema["type"] == "object"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "is empty"),
        ("{not json", "not JSON"),
        ('{"servers": []}', "without a 'tools' list"),
        ("[1, 2]", "item 0 is not a tool definition"),
        ('"tools"', "a JSON string"),
        ('{"a": 1}\n{"name": "ok"}', "line 1: not a tool definition"),
        ('{"name": "ok"}\n{broken', "line 2: not JSON"),
        ('{"tools": [{"name": "ok"}, {"name": "bad name"}]}', "tools[1]): field 'name'"),
        ('[{"name": "a"},\n {"name": "b"}\n {"name": "c"}]', "f.json: not JSON"),
    ],
)
def test_wrong_files_say_what_was_expected(text: str, fragment: str) -> None:
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(text, source="f.json")
    assert fragment in str(err.value)
    if "expected" not in fragment and "field" not in fragment:
        assert "expected" in str(err.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CatalogueFormatError, match="not UTF-8"):
        load_catalogue(path)


def test_demo_catalogue_is_large_and_varied() -> None:
    tools = demo_catalogue()
    services = {t.name.split("__")[0] for t in tools}
    assert len(tools) >= 150 and len(services) >= 10
    assert len({t.name for t in tools}) == len(tools)


def test_real_catalogue_reads_with_server_prefix(mcp_tools: list) -> None:  # type: ignore[type-arg]
    assert len(mcp_tools) == 1635
    assert "github__create_pull_request" in {t.name for t in mcp_tools}


def test_a_broken_pretty_printed_file_names_the_line_and_column_at_fault() -> None:
    tools = [{"name": f"tool_{i}", "description": f"Tool number {i}."} for i in range(20)]
    text = json.dumps(tools, indent=2)
    lines = text.splitlines()
    # Drop the comma after the fifth item: the break is on that line, not on line 1.
    at = [i for i, line in enumerate(lines) if line == "  },"][4]
    lines[at] = "  }"
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue("\n".join(lines), source="pretty.json")
    assert f"at line {at + 2} column" in str(err.value)
    assert "line 1:" not in str(err.value)


def test_a_one_line_json_lines_file_is_one_tool() -> None:
    fmt, tools = parse_catalogue(
        '{"name": "get_weather", "description": "Get the weather for a city."}',
        source="one.jsonl",
    )
    assert fmt == "jsonl" and [t.name for t in tools] == ["get_weather"]
    openai = '{"type": "function", "function": {"name": "f", "description": "Does f."}}'
    assert [t.name for t in parse_catalogue(openai)[1]] == ["f"]


def test_duplicate_names_name_both_places() -> None:
    text = '{"name": "a", "description": "Alpha."}\n\n{"name": "b"}\n{"name": "a"}'
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(text, source="dup.jsonl")
    assert "dup.jsonl line 4: tool 'a' is defined twice, first at dup.jsonl line 1" in str(
        err.value
    )
    with pytest.raises(CatalogueFormatError, match=r"tools\[2\].*first at f.json tools\[0\]"):
        parse_catalogue('{"tools": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}', source="f.json")


def test_gemini_tools_arrays_and_capitalised_types() -> None:
    decl = {
        "name": "get_weather",
        "description": "Get the weather for a city.",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "city": {"type": "STRING"},
                "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
            },
            "required": ["city"],
        },
    }
    other = {"name": "get_time", "description": "Get the time.", "parameters": {"type": "OBJECT"}}
    shapes = [
        [{"functionDeclarations": [decl]}, {"functionDeclarations": [other]}],
        {"tools": [{"functionDeclarations": [decl, other]}]},
        {"functionDeclarations": [decl, other]},
    ]
    for data in shapes:
        fmt, tools = parse_catalogue(json.dumps(data), source="g.json")
        assert fmt == "gemini"
        assert [t.name for t in tools] == ["get_weather", "get_time"]
        schema = tools[0].input_schema
        assert schema["type"] == "object"
        assert schema["properties"]["days"] == {"type": "array", "items": {"type": "integer"}}
    bad = json.dumps({"tools": [{"functionDeclarations": [decl, {"name": "bad name"}]}]})
    with pytest.raises(CatalogueFormatError, match=r"g.json tools\[0\].functionDeclarations\[1\]"):
        parse_catalogue(bad, source="g.json")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1"])
def test_json_nested_past_the_parser_is_the_files_fault(text: str) -> None:
    with pytest.raises(CatalogueFormatError, match=r"deep\.json: JSON nested too deeply"):
        parse_catalogue(text, source="deep.json")


def test_gemini_built_in_tools_are_passed_over_and_bad_parameters_named() -> None:
    decl = {"name": "get_weather", "description": "Get the weather.", "parameters": {}}
    for data in (
        {"tools": [{"googleSearch": {}}, {"functionDeclarations": [decl]}]},
        [{"functionDeclarations": [decl]}, {"codeExecution": {}}],
    ):
        fmt, tools = parse_catalogue(json.dumps(data), source="g.json")
        assert fmt == "gemini" and [t.name for t in tools] == ["get_weather"]
    bad = {"functionDeclarations": [{"name": "f", "description": "F.", "parameters": 5}]}
    with pytest.raises(CatalogueFormatError, match=r"functionDeclarations\[0\].*input_schema"):
        parse_catalogue(json.dumps(bad), source="g.json")


def test_the_tool_list_is_found_as_the_format_was() -> None:
    # A status string under "result" beside a tools list: the list is read, not result.
    fmt, tools = parse_catalogue('{"result": "ok", "tools": [{"name": "a", "description": "A."}]}')
    assert fmt == "mcp" and [t.name for t in tools] == ["a"]
    mixed = {"tools": "see below", "functionDeclarations": [{"name": "b", "parameters": {}}]}
    fmt, tools = parse_catalogue(json.dumps(mixed))
    assert fmt == "gemini" and [t.name for t in tools] == ["b"]


_DIGITS = "9" * 5000


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[" * 100_000 + "]" * 100_000, "f.json: JSON nested too deeply"),
        (f'[{{"name": "a", "x": {_DIGITS}}}]', "f.json: an integer of more than"),
        (f'{{"name": "a"}}\n{{"name": "b", "x": {_DIGITS}}}', "f.json line 2: an integer"),
        ('[{"name": "a", "x": NaN}]', "f.json: NaN is not JSON (JSON has no NaN or infinity) at"),
        ('{"name": "a"}\n{"name": "b", "x": -Infinity}', "f.json line 2: -Infinity is not JSON"),
        ("Infinity", "f.json: Infinity is not JSON"),
        ("null", "f.json: a JSON null; expected"),
        ("5", "f.json: a JSON number; expected"),
        ('{"tools": 5}', "f.json: a JSON object without a 'tools' list; expected"),
        ('[{"name": "a"}, 5]', "f.json item 1: a tool must be a JSON object, got number"),
    ],
)
def test_unreadable_json_is_the_catalogue_error_naming_the_place(text: str, fragment: str) -> None:
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(text, source="f.json")
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (
            b'[{"name": "a", "description": "\xff"}]',
            "not UTF-8 text (invalid start byte at byte 31)",
        ),
        (f'[{{"name": "a", "x": {_DIGITS}}}]'.encode(), "an integer of more than"),
        (b'[{"name": "a", "x": NaN}]', "NaN is not JSON"),
        (b"[" * 100_000, "JSON nested too deeply"),
        (b'"tools"', "a JSON string; expected"),
    ],
)
def test_catalogue_files_name_themselves(tmp_path: Path, data: bytes, fragment: str) -> None:
    path = tmp_path / "cat.json"
    path.write_bytes(data)
    with pytest.raises(CatalogueFormatError) as err:
        load_catalogue(path)
    assert str(err.value).startswith(f"{path}:") and fragment in str(err.value)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("name", 123, "field 'name' must be a string, got number"),
        ("name", None, "field 'name' must be a non-empty string"),
        ("name", "", "field 'name' must be a non-empty string"),
        ("name", True, "field 'name' must be a string, got boolean"),
        ("name", {"a": 1}, "field 'name' must be a string, got object"),
        ("server", None, "field 'server' must be a non-empty string"),
        ("description", ["x"], "field 'description' must be a string, got array"),
        ("description", 0, "field 'description' must be a string, got number"),
    ],
)
def test_a_server_record_whose_name_or_text_is_no_string_is_refused_naming_it(
    field: str, value: object, fragment: str
) -> None:
    """Nothing is turned into text the file never had (``github__123``, ``None__x``)."""
    good = {"server": "github", "name": "list_issues", "description": "List issues."}
    records = [good, {**good, "name": "get_issue", field: value}, {**good, "name": "x"}]
    with pytest.raises(CatalogueFormatError, match="item 1") as err:
        parse_catalogue(json.dumps(records), source="records.json")
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    "item",
    [
        {"name": "a", "description": 5, "inputSchema": SCHEMA},
        {"type": "function", "function": {"name": "a", "description": [], "parameters": {}}},
        {"name": "a", "description": {}, "parameters": {}},
    ],
)
def test_a_description_that_is_no_string_is_refused_in_every_format(item: object) -> None:
    with pytest.raises(CatalogueFormatError, match=r"description'? must be a string"):
        parse_catalogue(json.dumps([item]), source="c.json")


_DECL = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "OBJECT"}}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (
            {
                "tools": [
                    {"functionDeclarations": [_DECL]},
                    {"googleSearch": {}},
                    {"functionDeclaration": [{"name": "x"}]},
                ]
            },
            "g.json tools[2]: unknown key 'functionDeclaration' (did you mean "
            "'functionDeclarations'?); expected a Gemini tool",
        ),
        (
            [{"functionDeclarations": [_DECL]}, {"googleSearch": {}, "codeExecution": {}}],
            "g.json item 1: no 'functionDeclarations' list, and a built-in tool has one key, not 2"
            " ('googleSearch', 'codeExecution')",
        ),
        (
            {"tools": [{"functionDeclarations": [_DECL]}, {"functionDeclarations": {"name": "x"}}]},
            "g.json tools[1]: field 'functionDeclarations' must be a list, got object",
        ),
        (
            [{"functionDeclarations": [_DECL]}, {"googleSearch": True}],
            "g.json item 1: built-in tool 'googleSearch' must be an object, got boolean",
        ),
        (
            [{"functionDeclarations": [_DECL]}, "codeExecution"],
            "g.json item 1: a Gemini tool must be a JSON object, got string",
        ),
    ],
)
def test_a_bad_entry_of_a_gemini_tools_array_is_named(data: object, fragment: str) -> None:
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(json.dumps(data), source="g.json")
    assert fragment in str(err.value)
    assert "[0]" not in str(err.value) and "item 0" not in str(err.value)


def test_a_gemini_array_beside_a_tool_of_another_shape_keeps_its_old_reading() -> None:
    # A named tool in the list: not read as Gemini, so the wrapper is the item at fault.
    data = [{"name": "a", "description": "A."}, {"functionDeclarations": [_DECL]}]
    with pytest.raises(CatalogueFormatError, match=r"g\.json item 1: not a tool definition"):
        parse_catalogue(json.dumps(data), source="g.json")


@pytest.mark.parametrize("field", ["always_load", "read_only"])
@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("yes", "string"),
        ("false", "string"),
        ("off", "string"),
        (1, "number"),
        (0.0, "number"),
        ([], "array"),
        ({}, "object"),
    ],
)
@pytest.mark.parametrize("shape", ["anthropic", "openai-chat", "server-records", "jsonl"])
def test_tool_flags_must_be_true_or_false(field: str, value: object, kind: str, shape: str) -> None:
    """Not "yes", "off" or 0.0 read as a bool: the file, the item and the field are named."""

    def item(name: str, flag: object) -> dict[str, object]:
        if shape == "openai-chat":
            return {"type": "function", "function": {"name": name}, field: flag}
        server = {"server": "srv"} if shape == "server-records" else {}
        return {**server, "name": name, "input_schema": SCHEMA, field: flag}

    good, bad = item("ok", True), item("t", value)
    if shape == "jsonl":
        text, where = json.dumps(good) + "\n" + json.dumps(bad), "c.json line 2"
    else:
        text, where = json.dumps([good, bad]), "c.json item 1"
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(text, source="c.json")
    assert f"{where}: field {field!r} must be true or false, got {kind}" in str(err.value)


def test_tool_flags_read_true_false_and_an_unsaid_read_only() -> None:
    items = [
        {"name": "a", "always_load": True, "read_only": False},
        {"name": "b", "always_load": False, "read_only": True},
        {"name": "c", "read_only": None},
    ]
    _, tools = parse_catalogue(json.dumps(items))
    assert [(t.always_load, t.read_only) for t in tools] == [
        (True, False),
        (False, True),
        (False, None),
    ]
    with pytest.raises(
        CatalogueFormatError, match="field 'always_load' must be true or false, got null"
    ):
        parse_catalogue(json.dumps([{"name": "a", "always_load": None}]), source="c.json")
