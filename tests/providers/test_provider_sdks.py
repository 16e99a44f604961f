"""Rendered tools validate against each provider SDK's own types, for every real tool.

The SDKs are the judges: anthropic's ``ToolParam``, openai's ``ChatCompletionToolParam`` and
``FunctionToolParam`` (typed dicts, checked with pydantic the way the SDKs' own models are),
and google-genai's ``Tool`` / ``FunctionDeclaration`` models, which refuse keywords Gemini
does not take.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pydantic
import pytest

from toolsurface import Tool
from toolsurface.catalogue import demo_catalogue
from toolsurface.providers import gemini_declaration, name_problems, render_tools
from toolsurface.providers.names import alias_for

anthropic_types = pytest.importorskip("anthropic.types", reason="the anthropic SDK is a test dep")
openai_chat = pytest.importorskip("openai.types.chat", reason="the openai SDK is a test dep")
openai_responses = pytest.importorskip("openai.types.responses", reason="the openai SDK")
genai_types = pytest.importorskip("google.genai.types", reason="google-genai is a test dep")


def _list_of(param: Any) -> Callable[[Any], Any]:
    adapter = pydantic.TypeAdapter(list[param])  # type: ignore[valid-type]
    return lambda rendered: adapter.validate_python(rendered, strict=False)


VALIDATORS: dict[str, Callable[[Any], Any]] = {
    "anthropic": _list_of(anthropic_types.ToolParam),
    "openai": _list_of(openai_chat.ChatCompletionToolParam),
    "openai-responses": _list_of(openai_responses.FunctionToolParam),
    "gemini": genai_types.Tool.model_validate,
}


def _refusals(tools: Sequence[Tool], provider: str) -> dict[str, str]:
    """Each tool whose rendering the provider's SDK refuses, with the SDK's first error."""
    refused: dict[str, str] = {}
    for tool in tools:
        # As a plan renders it: a name the provider refuses goes as its stable alias.
        sent = tool.model_copy(update={"name": alias_for(tool.name, provider)})
        assert not name_problems([sent.name], provider)
        try:
            VALIDATORS[provider](render_tools([sent], provider))
        except (pydantic.ValidationError, ValueError, TypeError, AttributeError) as exc:
            refused[tool.name] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return refused


@pytest.mark.parametrize("provider", sorted(VALIDATORS))
def test_every_demo_tool_validates_in_the_sdk(provider: str) -> None:
    tools = demo_catalogue()
    assert _refusals(tools, provider) == {}
    # And the whole request's tools at once, as a host sends them (within the count limit).
    VALIDATORS[provider](render_tools(tools[:128], provider))


@pytest.mark.slow
@pytest.mark.parametrize("provider", sorted(VALIDATORS))
def test_every_real_tool_validates_in_the_sdk(provider: str, mcp_tools: list[Tool]) -> None:
    assert _refusals(mcp_tools, provider) == {}


def test_the_real_schemas_go_to_gemini_as_json_schema(mcp_tools: list[Tool]) -> None:
    # Through the OpenAPI-style ``parameters`` the SDK refuses ($schema, $ref, $defs, oneOf,
    # allOf) or crashes on (a list of types) hundreds of the real schemas as they are; through
    # ``parametersJsonSchema`` it takes every one, and what it holds is the tool's own schema
    # less the root $schema the API refuses.
    raw_refused = 0
    for tool in mcp_tools:
        try:
            genai_types.FunctionDeclaration.model_validate(
                {"name": "f", "description": "", "parameters": tool.input_schema}
            )
        except Exception:  # the SDK crashes with AttributeError on a type list
            raw_refused += 1
    assert raw_refused > 300
    for tool in mcp_tools:
        declaration = genai_types.FunctionDeclaration.model_validate(gemini_declaration(tool))
        own = {k: v for k, v in tool.input_schema.items() if k != "$schema"}
        assert declaration.parameters_json_schema == own, tool.name


def test_the_doctor_names_every_tool_sent_to_gemini_without_its_schema_keyword(
    mcp_tools: list[Tool],
) -> None:
    from toolsurface.providers.schemas import schema_issues

    carrying = {t.name for t in mcp_tools if "$schema" in t.input_schema}
    noted = {
        s.name
        for s in schema_issues(mcp_tools)
        if s.provider == "gemini" and any("$schema left out" in c for c in s.changes)
    }
    assert carrying and noted == carrying
