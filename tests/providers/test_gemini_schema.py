"""JSON Schema to Gemini's Schema subset: what is kept, rewritten, dropped, and said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsurface.providers.gemini import MAX_DEPTH, gemini_parameters

genai_types = pytest.importorskip("google.genai.types", reason="google-genai is a test dep")


def convert(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    params, notes = gemini_parameters(schema)
    if params is not None:
        genai_types.Schema.model_validate(params)  # the SDK takes every result
    return params, notes


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_references_are_inlined_with_their_siblings_winning() -> None:
    schema = {
        **obj(where={"$ref": "#/$defs/Place", "description": "Where to go."}),
        "$defs": {"Place": {**obj(city={"type": "string"}), "description": "A place."}},
    }
    params, notes = convert(schema)
    assert params is not None
    assert params["properties"]["where"] == {
        "type": "OBJECT",
        "properties": {"city": {"type": "STRING"}},
        "description": "Where to go.",
    }
    assert "$defs" not in json.dumps(params)
    assert notes == [
        '$.where: reference "#/$defs/Place" inlined',
        "$: $defs dropped (what the references name is inlined)",
    ]


def test_a_recursive_reference_is_cut_to_an_object_with_its_description() -> None:
    node = {**obj(child={"$ref": "#/definitions/Node"}), "description": "A tree node."}
    params, notes = convert(
        {**obj(root={"$ref": "#/definitions/Node"}), "definitions": {"Node": node}}
    )
    assert params is not None
    child = params["properties"]["root"]["properties"]["child"]
    assert child == {"type": "OBJECT", "description": "A tree node."}
    assert notes == [
        '$.root: reference "#/definitions/Node" inlined',
        '$.root.child: recursive reference "#/definitions/Node" cut',
        "$: definitions dropped (what the references name is inlined)",
    ]


def test_a_missing_reference_is_dropped_and_named() -> None:
    params, notes = convert(obj(x={"$ref": "#/$defs/Nope"}))
    assert params is not None and params["properties"]["x"] == {"type": "OBJECT"}
    assert notes == ['$.x: reference "#/$defs/Nope" not found, dropped']


def test_unions_become_anyof_and_null_becomes_nullable() -> None:
    params, notes = convert(
        obj(
            a={"type": ["string", "null"]},
            b={"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "B."},
            c={"oneOf": [{"type": "string"}, {"type": "number"}]},
            d={"type": ["string", "integer"]},
        )
    )
    assert params is not None
    p = params["properties"]
    assert p["a"] == {"type": "STRING", "nullable": True}
    assert p["b"] == {"type": "INTEGER", "nullable": True, "description": "B."}
    assert p["c"] == {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}
    assert p["d"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert "$.c: oneOf sent as anyOf" in notes
    assert '$.d: type list ["string", "integer"] sent as anyOf' in notes


def test_allof_is_merged() -> None:
    params, notes = convert(
        obj(
            x={
                "allOf": [
                    obj(a={"type": "string"}),
                    {**obj(b={"type": "integer"}), "required": ["b"]},
                ]
            }
        )
    )
    assert params is not None
    assert params["properties"]["x"] == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}, "b": {"type": "INTEGER"}},
        "required": ["b"],
    }
    assert notes == ["$.x: allOf merged into one schema"]


def test_enums_const_and_non_string_enums() -> None:
    params, notes = convert(
        obj(
            colour={"type": "string", "enum": ["red", "green"]},
            sure={"const": "yes"},
            level={"type": "integer", "enum": [1, 2, 3], "description": "Level."},
        )
    )
    assert params is not None
    p = params["properties"]
    assert p["colour"] == {"type": "STRING", "enum": ["red", "green"]}
    assert p["sure"] == {"enum": ["yes"], "type": "STRING"}
    assert p["level"] == {"type": "INTEGER", "description": "Level. (one of: 1, 2, 3)"}
    assert notes == [
        "$.sure: const sent as a one-value enum",
        "$.level: enum of non-strings written into the description",
    ]


def test_unsupported_keywords_and_formats_are_dropped_and_named() -> None:
    params, notes = convert(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **obj(
                url={"type": "string", "format": "uri", "maxLength": 2048},
                when={"type": "string", "format": "date-time"},
                n={"type": "integer", "exclusiveMinimum": 0, "minimum": 1},
            ),
            "additionalProperties": False,
        }
    )
    assert params is not None
    p = params["properties"]
    assert p["url"] == {"type": "STRING", "maxLength": 2048}
    assert p["when"] == {"type": "STRING", "format": "date-time"}
    assert p["n"] == {"type": "INTEGER", "minimum": 1}
    assert sorted(notes) == [
        "$.n: dropped exclusiveMinimum",
        '$.url: format "uri" dropped',
        "$: dropped $schema",
        "$: dropped additionalProperties",
    ]


def test_no_parameters_means_none() -> None:
    assert convert({}) == (None, [])
    assert convert({"type": "object", "properties": {}}) == (None, [])
    assert convert({"type": "string"})[0] is None


def test_depth_is_bounded_and_output_is_deterministic() -> None:
    deep: dict[str, Any] = {"type": "string", "description": "leaf"}
    for _ in range(MAX_DEPTH + 10):
        deep = obj(x=deep)
    first = convert(deep)
    assert first == convert(deep)
    assert any("nested deeper than" in n for n in first[1])
    assert json.dumps(first[0]).count('"properties"') <= MAX_DEPTH + 1


def test_tuple_items_keep_the_first() -> None:
    params, notes = convert(
        obj(pair={"type": "array", "items": [{"type": "number"}, {"type": "string"}]})
    )
    assert params is not None
    assert params["properties"]["pair"] == {"type": "ARRAY", "items": {"type": "NUMBER"}}
    assert notes == ["$.pair: tuple items sent as the first item's schema"]
