"""Token counters a surface takes as ``estimator=``: tiktoken's, and Anthropic's count_tokens.

A :class:`~toolsurface.surface.ToolSurface` measures each tool definition against the token
budget with its ``estimator`` (a ``Tool`` in, a whole number of tokens out), once per
registered tool object. The default, ``toolsurface.surface.estimate_tokens``, is the
definition's compact JSON (:func:`definition_json`) in UTF-8 bytes over four: no tokeniser,
no network, and within a few tens of percent of real tokenisers on English JSON. A host that
wants its model's own figures passes one of these instead:

- :class:`TiktokenCounter`: OpenAI's tokeniser through the ``tiktoken`` package (the
  ``[tiktoken]`` extra). Offline once the encoding's file is in tiktoken's cache (tiktoken
  downloads it on first use), or given a ``tiktoken.Encoding`` the host built.
- :class:`AnthropicTokenCounter`: Anthropic's ``messages.count_tokens`` through the host's
  own ``anthropic`` client, which needs the network and a key (a call per new definition).

Gemini's counters are left out: ``models.count_tokens`` needs the network as Anthropic's
does, and google-genai's local tokenizer downloads its model at run time.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolsurface.models import Tool
from toolsurface.providers.names import alias_for

if TYPE_CHECKING:
    import tiktoken

__all__ = ["AnthropicTokenCounter", "TiktokenCounter", "definition_json"]


def definition_json(tool: Tool) -> str:
    """A definition as the counters measure it: compact JSON of its name, description, schema.

    >>> definition_json(Tool(name="ping", description="Ping."))
    '{"name":"ping","description":"Ping.","input_schema":{"type":"object","properties":{}}}'
    """
    payload = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


class TiktokenCounter:
    """A definition's tokens by a tiktoken encoding (``o200k_base``, GPT-4o's, by default).

    ``encoding`` is an encoding's name, loaded with ``tiktoken.get_encoding`` (which fetches
    its file once into tiktoken's cache), or a ``tiktoken.Encoding`` the host built. Special
    tokens in a description are counted as plain text, never refused.
    """

    def __init__(self, encoding: str | tiktoken.Encoding = "o200k_base") -> None:
        try:
            import tiktoken
        except ImportError:
            raise ImportError(
                "TiktokenCounter needs the tiktoken package: pip install 'toolsurface[tiktoken]'"
            ) from None
        self.encoding = tiktoken.get_encoding(encoding) if isinstance(encoding, str) else encoding

    def __call__(self, tool: Tool) -> int:
        """The definition's tokens (at least 1)."""
        return max(1, len(self.encoding.encode(definition_json(tool), disallowed_special=())))


#: The request the Anthropic counter measures tools in: one short user turn.
_MESSAGES = [{"role": "user", "content": "."}]
#: A tool every count includes, so a tool's figure is what it adds to a request with tools,
#: not the fixed tool-use prompt a request's first tool brings.
_REFERENCE = {"name": "reference", "description": "", "input_schema": {"type": "object"}}


class AnthropicTokenCounter:
    """A definition's tokens as Anthropic counts them, through ``client.messages.count_tokens``.

    ``client`` is the host's ``anthropic.Anthropic`` (its key, base URL and transport);
    ``model`` the model the requests go to. A tool's figure is what it adds to a request that
    already has tools: the count with it and a reference tool, less the count with the
    reference tool alone (counted once). Each new definition costs a call; the surface asks
    once per registered tool object. A name Anthropic refuses is counted under the alias a
    plan sends.
    """

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model
        self._baseline: int | None = None

    def _count(self, tools: list[dict[str, Any]]) -> int:
        answer = self.client.messages.count_tokens(
            model=self.model, messages=_MESSAGES, tools=tools
        )
        return int(answer.input_tokens)

    def __call__(self, tool: Tool) -> int:
        """The tokens the definition adds to a request (at least 1)."""
        if self._baseline is None:
            self._baseline = self._count([_REFERENCE])
        sent = {
            "name": alias_for(tool.name, "anthropic"),
            "description": tool.description,
            "input_schema": tool.input_schema,
        }
        return max(1, self._count([_REFERENCE, sent]) - self._baseline)
