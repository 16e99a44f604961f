"""Gemini's parameters: the tool's own JSON Schema, less the root ``$schema`` the API refuses."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from toolsurface import Tool
from toolsurface.catalogue import parse_catalogue
from toolsurface.providers import render_tools
from toolsurface.providers.gemini import gemini_parameters
from toolsurface.providers.schemas import schema_issues

genai_types = pytest.importorskip("google.genai.types", reason="google-genai is a test dep")

#: What a pydantic-built MCP server sends: $schema, $defs and $ref, a nullable type list.
PYDANTIC = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "where": {"$ref": "#/$defs/Place"},
        "tag": {"type": ["string", "null"], "default": None},
        "mode": {"oneOf": [{"enum": ["fast"]}, {"enum": ["safe"]}]},
    },
    "required": ["where"],
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def _declaration(schema: dict[str, Any]) -> Any:
    tool = Tool(name="go", description="Go somewhere.", input_schema=schema)
    (declaration,) = genai_types.Tool.model_validate(
        render_tools([tool], "gemini")
    ).function_declarations
    return declaration


def test_the_schema_goes_as_it_is_but_for_the_root_schema_keyword() -> None:
    declaration = _declaration(PYDANTIC)
    expected = {k: v for k, v in PYDANTIC.items() if k != "$schema"}
    assert declaration.parameters_json_schema == expected
    assert declaration.parameters is None  # never both: the API takes one or the other
    # The SDK's model of the JSON Schema Gemini reads refuses $schema and takes the rest
    # ($defs, $ref, oneOf, a type list).
    with pytest.raises(pydantic.ValidationError, match=r"\$schema"):
        genai_types.JSONSchema.model_validate(PYDANTIC)
    genai_types.JSONSchema.model_validate(declaration.parameters_json_schema)


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"type": "object", "properties": {"$schema": {"type": "string"}}}
    assert gemini_parameters(schema) == (schema, [])


def test_what_is_left_out_is_noted_for_the_doctor() -> None:
    assert gemini_parameters(PYDANTIC)[1] == ["$: $schema left out (the Gemini API refuses it)"]
    tool = Tool(name="go", description="Go somewhere.", input_schema=PYDANTIC)
    (issue,) = [i for i in schema_issues([tool]) if i.provider == "gemini"]
    assert issue.changes == ("$: $schema left out (the Gemini API refuses it)",)


def test_a_rendered_gemini_request_reads_back_as_the_same_tools() -> None:
    tool = Tool(name="go", description="Go somewhere.", input_schema=PYDANTIC)
    text = json.dumps(render_tools([tool], "gemini"))
    fmt, (back,) = parse_catalogue(text, source="gemini.json")
    assert fmt == "gemini" and back.name == "go"
    assert back.input_schema == {k: v for k, v in PYDANTIC.items() if k != "$schema"}
