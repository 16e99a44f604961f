"""The static types of what ``RequestPlan.render(provider)`` returns, provider by provider.

Anthropic and OpenAI: the SDKs' own request types, so a rendered list goes straight into
``client.messages.create(tools=...)`` or ``client.responses.create(tools=...)`` and the type
checker follows it through:

======================  ==================================================================
``"anthropic"``         ``list[anthropic.types.ToolParam]`` (``defer_loading`` under native)
``"openai"``            ``list[openai.types.chat.ChatCompletionToolParam]``
``"openai-responses"``  ``list[openai.types.responses.ToolParam]`` (functions; under native
                        also ``namespace`` and the client ``tool_search`` tool)
``"gemini"``            :class:`GeminiTool`: the REST API's JSON (``functionDeclarations``)
======================  ==================================================================

The SDK types are imported for the type checker alone: nothing is imported when the program
runs, and a host without that SDK sees ``list[Any]`` there, as before. Gemini's payload is the
REST API's camelCase JSON, which google-genai's ``types.Tool`` also takes
(``types.Tool.model_validate(plan.render("gemini"))``); the SDK's own typed dicts spell the
keys in snake_case, so Gemini's are typed here. The tests check every shape against the
SDKs, statically with mypy and at run time with their validators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

if TYPE_CHECKING:
    from anthropic.types import ToolParam as AnthropicToolParam
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.responses import ToolParam as ResponsesToolParam

__all__ = [
    "AnthropicTools",
    "GeminiFunctionDeclaration",
    "GeminiTool",
    "OpenAIChatTools",
    "OpenAIResponsesTools",
]

#: ``render("anthropic")``: the Messages API's ``tools``.
AnthropicTools: TypeAlias = "list[AnthropicToolParam]"
#: ``render("openai")``: Chat Completions' ``tools``.
OpenAIChatTools: TypeAlias = "list[ChatCompletionToolParam]"
#: ``render("openai-responses")``: the Responses API's ``tools``.
OpenAIResponsesTools: TypeAlias = "list[ResponsesToolParam]"


class GeminiFunctionDeclaration(TypedDict):
    """One Gemini function: its parameters as JSON Schema (the API's ``parametersJsonSchema``)."""

    name: str
    description: str
    parametersJsonSchema: dict[str, Any]  # the API's JSON key, camelCase


class GeminiTool(TypedDict):
    """``render("gemini")``: one Gemini tool holding every function declaration."""

    functionDeclarations: list[GeminiFunctionDeclaration]  # the API's JSON key, camelCase
