"""The host loop against the official Anthropic SDK, with its HTTP answered by a local fake.

    python examples/anthropic_loop.py

The client is the real ``anthropic.Anthropic``; only its transport is fake: an
``httpx.MockTransport`` handler records each request body the SDK sends and answers with a
canned Messages response holding the scripted ``tool_use`` blocks. No network, no key.

It runs in native delivery (``delivery="native"``): the tools array from ``plan.render()``
holds every held-back tool with ``defer_loading`` and never changes, and ToolSearch's
``tool_result`` carries a ``tool_reference`` per loaded tool (``result.native``). The
system text comes from ``plan.system_text()``; the model searches in Russian, calls the
tool it loaded, then asks for 80 calls at once.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

import anthropic
from anthropic.types import MessageParam, ToolResultBlockParam

from toolsurface import (
    TOOL_SEARCH_NAME,
    RequestPlan,
    Tool,
    ToolCall,
    ToolRegistry,
    ToolSurface,
    Verdict,
    tool_search_tool,
)
from toolsurface.catalogue import demo_catalogue

MODEL = "scripted-fake-model"  # the fake answers any name; a real host names a Claude model
SYSTEM = "You are an engineering assistant. Answer in the user's language."
USER = "Покажи открытые пулреквесты в acme/api, потом прочитай 80 логов сборки."
#: The fake model's messages: the tool calls of each; an empty one is its closing text.
SCRIPT: list[list[tuple[str, dict[str, Any]]]] = [
    [(TOOL_SEARCH_NAME, {"query": "покажи открытые пулреквесты"})],
    [("github__list_pull_requests", {"owner": "acme", "repo": "api"})],
    [("read_file", {"path": f"logs/build-{i:02}.log"}) for i in range(80)],  # past the cap
    [],
]


def http_library(sdk: str) -> ModuleType:
    """The HTTP library the SDK is built on: httpx, or httpx2 in its newer releases (same API)."""
    names = {re.split(r"[^A-Za-z0-9_.-]", r, maxsplit=1)[0] for r in metadata.requires(sdk) or []}
    return importlib.import_module("httpx2" if "httpx2" in names else "httpx")


HTTP = http_library("anthropic")


@dataclass
class FakeMessagesApi:
    """POST /v1/messages, played locally: it keeps each body sent and answers from the script."""

    script: list[list[tuple[str, dict[str, Any]]]]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        """Record the request's JSON body and answer with the next scripted message."""
        if request.method != "POST" or request.url.path != "/v1/messages":
            return HTTP.Response(404, json={"type": "error", "error": {"type": "not_found_error"}})
        self.bodies.append(json.loads(request.content))
        n = len(self.bodies)
        calls = self.script[n - 1] if n <= len(self.script) else []
        uses = [
            {"type": "tool_use", "id": f"toolu_{n:02}_{i:02}", "name": name, "input": args}
            for i, (name, args) in enumerate(calls)
        ]
        text = "Смотрю." if calls else "Готово: два открытых пулреквеста, логи прочитаны."
        message = {
            "id": f"msg_{n:02}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": text}, *uses],
            "stop_reason": "tool_use" if uses else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(request.content) // 4, "output_tokens": 20 * n},
        }
        return HTTP.Response(200, json=message)


@dataclass
class Run:
    """What the loop did: the bodies the SDK really sent, and the plan behind each of them."""

    bodies: list[dict[str, Any]]
    plans: list[RequestPlan]
    verdicts: list[list[Verdict]]


def build_registry() -> ToolRegistry:
    """The host's tool, the demo catalogue as connected servers, and ToolSearch."""
    registry = ToolRegistry()
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    registry.register(
        Tool(name="read_file", description="Read a workspace file.", input_schema=path)
    )
    catalogue = demo_catalogue()
    registry.register_many(catalogue)
    for prefix in sorted({tool.name.split("__")[0] for tool in catalogue}):
        registry.declare_group(prefix, prefix=f"{prefix}__", dynamic=True)
    registry.register(tool_search_tool())
    return registry


def run_tool(surface: ToolSurface, call: ToolCall) -> Any:
    """Run an admitted call: ToolSearch on the surface, the other tools with canned answers.

    ToolSearch's result is its native content: the text, then a reference to each load.
    """
    if call.name == TOOL_SEARCH_NAME:
        return surface.tool_search(call.arguments).native
    if call.name == "github__list_pull_requests":
        return json.dumps([{"number": 412, "title": "Retry webhooks"}, {"number": 415}])
    return f"{call.arguments.get('path')}: 120 lines, build passed"


def run(script: list[list[tuple[str, dict[str, Any]]]] = SCRIPT) -> Run:
    """Play the script through the real SDK client and return what it sent."""
    fake = FakeMessagesApi(script)
    client = anthropic.Anthropic(
        api_key="test", http_client=HTTP.Client(transport=HTTP.MockTransport(fake))
    )
    surface = ToolSurface(build_registry(), provider="anthropic", delivery="native")
    messages: list[MessageParam] = [{"role": "user", "content": USER}]
    done = Run([], [], [])
    while True:
        plan = surface.plan()  # each request: the base, ToolSearch, every held tool deferred
        done.plans.append(plan)
        reply = client.messages.create(
            model=MODEL,
            max_tokens=1024,
            system=plan.system_text(SYSTEM),
            tools=plan.render(),
            messages=messages,
        )
        messages.append({"role": "assistant", "content": reply.content})
        calls = [ToolCall(b.name, b.input, b.id) for b in reply.content if b.type == "tool_use"]
        if not calls:
            surface.end_turn()
            break
        results: list[ToolResultBlockParam] = []
        verdicts = surface.admit(calls)  # unknown names and calls past the cap: not run
        for verdict in verdicts:
            text = run_tool(surface, verdict.call) if verdict.runs else verdict.message
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": verdict.call.id,
                    "content": text,
                    "is_error": verdict.never_ran,
                }
            )
        done.verdicts.append(verdicts)
        messages.append({"role": "user", "content": results})  # a result for every call
    done.bodies = fake.bodies
    return done


def main() -> None:
    """Run the loop and print, per request, the tools the SDK sent and the results returned."""
    done = run()
    first = done.bodies[0]["tools"]
    for i, (body, plan) in enumerate(zip(done.bodies, done.plans)):
        listed = [tool["name"] for tool in body["tools"] if not tool.get("defer_loading")]
        deferred = len(body["tools"]) - len(listed)
        print(f"request {i + 1}: {', '.join(listed)}, and {deferred} tools deferred")
        print(f"  the same tools array as the first request: {body['tools'] == first}")
        print(f"  loaded (referenced): {', '.join(plan.loaded) or 'none'}")
        print(f"  catalogue in the system text: {'<tool_catalogue>' in body['system']}")
        if i < len(done.verdicts):
            not_run = sum(v.never_ran for v in done.verdicts[i])
            print(f"  the model's answer: {len(done.verdicts[i])} calls, {not_run} not run")
    print(f"anthropic {anthropic.__version__}: {len(done.bodies)} requests sent through the SDK")


if __name__ == "__main__":
    main()
