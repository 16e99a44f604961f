"""The providers' tool formats and limits: render a plan for Anthropic, OpenAI or Gemini.

Each provider takes tools in its own shape and refuses a request whose tool names break its
rules or whose tools are too many. The table below is what the surface uses by name
(``provider="openai"``); a name a provider would refuse is reported before anything is
sent, naming the tool and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolsurface.errors import ToolsurfaceError
from toolsurface.models import Tool
from toolsurface.providers.gemini import gemini_parameters

__all__ = [
    "PROVIDERS",
    "ProviderName",
    "ProviderNameError",
    "ProviderSpec",
    "gemini_declaration",
    "name_problems",
    "provider_spec",
    "render_tools",
]

ProviderName = Literal["anthropic", "openai", "openai-responses", "gemini"]


class ProviderNameError(ToolsurfaceError, ValueError):
    """Tool names the provider would refuse; ``problems`` maps each name to the rule."""

    def __init__(self, provider: str, problems: dict[str, str]) -> None:
        shown = "; ".join(f"{n!r}: {why}" for n, why in list(problems.items())[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"{provider} would refuse {len(problems)} tool name(s): {shown}{more}")
        self.provider = provider
        self.problems = problems


@dataclass(frozen=True)
class ProviderSpec:
    """What a provider accepts: how many tools, which names, and where that is written."""

    name: str
    max_tools: int | None
    name_pattern: re.Pattern[str]
    name_rule: str
    source: str


PROVIDERS: dict[str, ProviderSpec] = {
    # OpenAI API reference, Chat Completions, `tools`: "A max of 128 functions are supported";
    # `function.name`: "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a
    # maximum length of 64." (platform.openai.com/docs/api-reference/chat/create)
    "openai": ProviderSpec(
        "openai",
        128,
        re.compile(r"[a-zA-Z0-9_-]{1,64}"),
        "1 to 64 of a-z, A-Z, 0-9, '_' or '-'",
        "OpenAI API reference, chat/create: tools, function.name",
    ),
    # The Responses API takes the same function tools, flattened (no `function` wrapper).
    # (platform.openai.com/docs/api-reference/responses/create)
    "openai-responses": ProviderSpec(
        "openai-responses",
        128,
        re.compile(r"[a-zA-Z0-9_-]{1,64}"),
        "1 to 64 of a-z, A-Z, 0-9, '_' or '-'",
        "OpenAI API reference, responses/create: tools",
    ),
    # Anthropic Messages API reference, `tools[].name`: ^[a-zA-Z0-9_-]{1,128}$ (older tool-use
    # guides said {1,64}; names over 64 are best avoided). No limit on the number of tools is
    # documented; the window is the limit. (docs.anthropic.com/en/api/messages)
    "anthropic": ProviderSpec(
        "anthropic",
        None,
        re.compile(r"[a-zA-Z0-9_-]{1,128}"),
        "1 to 128 of a-z, A-Z, 0-9, '_' or '-'",
        "Anthropic Messages API reference: tools[].name",
    ),
    # Gemini API reference, FunctionDeclaration.name: "Must be a-z, A-Z, 0-9, or contain
    # underscores, colons, dots, and dashes, with a maximum length of 64"; Vertex AI adds
    # "Must start with a letter or an underscore". Gemini documents up to 128 function
    # declarations per request in its function-calling guide.
    # (ai.google.dev/api/caching#FunctionDeclaration, cloud.google.com/vertex-ai docs)
    "gemini": ProviderSpec(
        "gemini",
        128,
        re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}"),
        "a letter or '_' first, then up to 63 of a-z, A-Z, 0-9, '_', '.', ':' or '-'",
        "Gemini API reference: FunctionDeclaration.name",
    ),
}


def provider_spec(name: str) -> ProviderSpec:
    """The spec of a provider by name; an unknown name lists the known ones."""
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(f"unknown provider {name!r}: expected one of {known}") from None


def name_problems(names: Iterable[str], provider: str) -> dict[str, str]:
    """Names the provider would refuse, each with the rule it breaks."""
    spec = provider_spec(provider)
    return {
        n: f"{spec.name} names must be {spec.name_rule}"
        for n in names
        if not spec.name_pattern.fullmatch(n)
    }


def render_tools(tools: Sequence[Tool], provider: str, *, deferred: bool = False) -> Any:
    """The tools in the provider's request shape, in order; refused names raise first.

    Anthropic and OpenAI take a list; Gemini takes one tool object holding
    ``functionDeclarations``. Only name, description and schema leave: group data never does.
    ``deferred`` tools (native delivery) do not count against the provider's tool limit,
    which is on what the model is shown.
    """
    spec = provider_spec(provider)
    problems = name_problems((t.name for t in tools), provider)
    if problems:
        raise ProviderNameError(spec.name, problems)
    if not deferred and spec.max_tools is not None and len(tools) > spec.max_tools:
        raise ValueError(f"{spec.name} accepts at most {spec.max_tools} tools, got {len(tools)}")
    if provider == "anthropic":
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
    if provider == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in tools
        ]
    if provider == "openai-responses":
        # The SDK's FunctionToolParam requires ``strict``; strict mode would also demand
        # every property required and ``additionalProperties: false``, which MCP schemas
        # seldom are, so it is off.
        return [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
                "strict": False,
            }
            for t in tools
        ]
    return {"functionDeclarations": [gemini_declaration(t) for t in tools]}


def gemini_declaration(tool: Tool) -> dict[str, Any]:
    """One Gemini function declaration: the tool's own JSON Schema as ``parametersJsonSchema``.

    Gemini reads JSON Schema there as it is (``$defs``, ``$ref``, ``anyOf``, type lists); what
    the rendering leaves out (a root ``$schema``, which the API refuses) is listed by
    ``gemini_parameters`` and reported by ``toolsurface doctor``.
    """
    parameters, _ = gemini_parameters(tool.input_schema)
    return {"name": tool.name, "description": tool.description, "parametersJsonSchema": parameters}
