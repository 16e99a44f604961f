"""Token counters for ``estimator=``: tiktoken's and Anthropic's, through the real packages.

tiktoken runs on an encoding the test builds (its public files are fetched at run time,
which tests must not need); Anthropic's counter goes through the real ``anthropic`` client
to a fake server on an httpx ``MockTransport``.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from importlib import metadata
from types import ModuleType
from typing import Any

import pytest

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import demo_catalogue
from toolsurface.providers.token_counters import (
    AnthropicTokenCounter,
    TiktokenCounter,
    definition_json,
)
from toolsurface.surface import estimate_tokens

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is a test dep (the [tiktoken] extra)")
anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK is a test dep")


def http_library(sdk: str) -> ModuleType:
    """The HTTP library the SDK is built on: httpx, or httpx2 in its newer releases (same API)."""
    names = {re.split(r"[^A-Za-z0-9_.-]", r, maxsplit=1)[0] for r in metadata.requires(sdk) or []}
    return importlib.import_module("httpx2" if "httpx2" in names else "httpx")


httpx = http_library("anthropic")

TOOL = Tool(
    name="docs.search",
    description="Search the docs. Ищет в документации.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
)


def byte_encoding(*merges: bytes) -> Any:
    """A real tiktoken encoding: every byte a token, then ``merges`` (each two earlier tokens)."""
    ranks = {bytes([i]): i for i in range(256)}
    for merge in merges:
        ranks[merge] = len(ranks)
    return tiktoken.Encoding(
        name="bytes",
        pat_str=r"""\s?[^\s]+|\s+""",
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": len(ranks)},
    )


def test_tiktoken_counts_the_definitions_json() -> None:
    plain = TiktokenCounter(byte_encoding())
    assert plain(TOOL) == len(definition_json(TOOL).encode("utf-8"))
    merged = TiktokenCounter(byte_encoding(b"na", b"me", b"name"))
    assert merged(TOOL) == plain(TOOL) - 3  # "name" is one token, not four
    # A special token in a third party's text is counted as text, never refused.
    odd = Tool(name="odd", description="ends <|endoftext|> here")
    assert plain(odd) == len(definition_json(odd).encode("utf-8"))


def test_the_default_stays_bytes_over_four_and_measures_the_same_json() -> None:
    for tool in demo_catalogue()[:20]:
        assert estimate_tokens(tool) == -(-len(definition_json(tool).encode("utf-8")) // 4)


def test_a_surface_budgets_with_the_counter_it_is_given() -> None:
    tools = demo_catalogue()
    registry = ToolRegistry(tools)
    for server in sorted({t.name.split("__")[0] for t in tools}):
        registry.declare_group(server, prefix=f"{server}__")  # held back only past the budget
    registry.register(tool_search_tool())
    limits = SurfaceLimits(window_tokens=140_000)  # a quarter for tools: 35,000
    by_default = ToolSurface(registry, limits=limits).plan()
    assert not by_default.held_back  # about 28,000 tokens at four bytes a token
    # A tokeniser that counts every byte finds four times as much: groups are held back.
    counted = ToolSurface(registry, limits=limits, estimator=TiktokenCounter(byte_encoding()))
    assert counted.plan().held_back


def test_tiktoken_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match=r"toolsurface\[tiktoken\]"):
        TiktokenCounter()


class FakeAnthropic:
    """The count_tokens endpoint: a token per 4 bytes of each tool's JSON, 20 for the turn."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.keys: list[str | None] = []  # the credential of each request

    def tokens(self, tools: list[dict[str, Any]]) -> int:
        return 20 + sum(len(json.dumps(t, separators=(",", ":"))) // 4 for t in tools)

    def __call__(self, request: Any) -> Any:
        if request.url.path != "/v1/messages/count_tokens":
            return httpx.Response(404, json={"type": "error", "error": {"type": "not_found"}})
        body = json.loads(request.content)
        self.bodies.append(body)
        # The key, as x-api-key or as a bearer token (newer SDKs).
        self.keys.append(request.headers.get("x-api-key") or request.headers.get("authorization"))
        return httpx.Response(200, json={"input_tokens": self.tokens(body["tools"])})


def _client(fake: FakeAnthropic) -> Any:
    http = httpx.Client(transport=httpx.MockTransport(fake))
    return anthropic.Anthropic(api_key="test-key", http_client=http, max_retries=0)


def test_anthropic_counts_what_a_tool_adds_through_the_real_client() -> None:
    fake = FakeAnthropic()
    counter = AnthropicTokenCounter(_client(fake), model="claude-sonnet-4-5")
    tokens = counter(TOOL)
    reference, sent = fake.bodies[-1]["tools"]
    assert sent["name"] != TOOL.name and "." not in sent["name"]  # the alias a plan sends
    assert sent["input_schema"] == TOOL.input_schema
    assert tokens == fake.tokens([reference, sent]) - fake.tokens([reference])
    assert all(b["model"] == "claude-sonnet-4-5" and b["messages"] for b in fake.bodies)
    assert all(key and key.endswith("test-key") for key in fake.keys)
    counter(Tool(name="ping", description="Ping."))
    assert len(fake.bodies) == 3  # the reference counted once, then a call per definition


def test_a_surface_asks_anthropic_once_per_tool() -> None:
    fake = FakeAnthropic()
    tools = demo_catalogue()[:30]
    counter = AnthropicTokenCounter(_client(fake), model="claude-sonnet-4-5")
    limits = SurfaceLimits(window_tokens=200_000)  # a window: the surface measures the tools
    surface = ToolSurface(
        ToolRegistry(tools), provider="anthropic", limits=limits, estimator=counter
    )
    surface.plan()
    surface.plan()
    asked = [b["tools"][-1]["name"] for b in fake.bodies[1:]]
    assert sorted(asked) == sorted(t.name for t in tools)


def test_an_anthropic_error_reaches_the_host_as_the_sdk_raised_it() -> None:
    def refuse(request: Any) -> Any:
        error = {"type": "authentication_error", "message": "invalid x-api-key"}
        return httpx.Response(401, json={"type": "error", "error": error})

    http = httpx.Client(transport=httpx.MockTransport(refuse))
    client = anthropic.Anthropic(api_key="bad", http_client=http, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        AnthropicTokenCounter(client, model="claude-sonnet-4-5")(TOOL)
