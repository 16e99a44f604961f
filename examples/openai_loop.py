"""The host loop against the official OpenAI SDK, with its HTTP answered by a local fake.

    python examples/openai_loop.py

The client is the real ``openai.OpenAI``; only its transport is fake: an
``httpx.MockTransport`` handler records each request body the SDK sends and answers with a
canned Chat Completions response holding the scripted ``tool_calls``. No network, no key.
Here the demo catalogue's groups are plain host groups (``auto``), not connected servers,
so OpenAI's limit of 128 tools decides what is held back: the largest groups first, with 8
slots kept free for loads. The model searches in Russian, calls the tool it loaded, then
asks for 80 calls at once.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolMessageParam

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

MODEL = "scripted-fake-model"  # the fake answers any name; a real host names an OpenAI model
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


HTTP = http_library("openai")


@dataclass
class FakeChatCompletions:
    """POST /v1/chat/completions, played locally: it keeps each body and answers from the script."""

    script: list[list[tuple[str, dict[str, Any]]]]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        """Record the request's JSON body and answer with the next scripted message."""
        if request.method != "POST" or request.url.path != "/v1/chat/completions":
            return HTTP.Response(404, json={"error": {"message": "not found", "type": "fake"}})
        self.bodies.append(json.loads(request.content))
        n = len(self.bodies)
        calls = self.script[n - 1] if n <= len(self.script) else []
        tool_calls = [
            {
                "id": f"call_{n:02}_{i:02}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for i, (name, args) in enumerate(calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        else:
            message["content"] = "Готово: два открытых пулреквеста, логи прочитаны."
        completion = {
            "id": f"chatcmpl-{n:02}",
            "object": "chat.completion",
            "created": 1_700_000_000 + n,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
        return HTTP.Response(200, json=completion)


@dataclass
class Run:
    """What the loop did: the bodies the SDK really sent, and the plan behind each of them."""

    bodies: list[dict[str, Any]]
    plans: list[RequestPlan]
    verdicts: list[list[Verdict]]


def build_registry() -> ToolRegistry:
    """The host's tool, the demo catalogue's groups as host groups, and ToolSearch."""
    registry = ToolRegistry()
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    registry.register(
        Tool(name="read_file", description="Read a workspace file.", input_schema=path)
    )
    catalogue = demo_catalogue()
    registry.register_many(catalogue)
    for prefix in sorted({tool.name.split("__")[0] for tool in catalogue}):
        registry.declare_group(prefix, prefix=f"{prefix}__")  # load="auto": held back for size
    registry.register(tool_search_tool())
    return registry


def run_tool(surface: ToolSurface, call: ToolCall) -> str:
    """Run an admitted call: ToolSearch on the surface, the other tools with canned answers."""
    if call.name == TOOL_SEARCH_NAME:
        return surface.tool_search(call.arguments).text
    if call.name == "github__list_pull_requests":
        return json.dumps([{"number": 412, "title": "Retry webhooks"}, {"number": 415}])
    return f"{call.arguments.get('path')}: 120 lines, build passed"


def run(script: list[list[tuple[str, dict[str, Any]]]] = SCRIPT) -> Run:
    """Play the script through the real SDK client and return what it sent."""
    fake = FakeChatCompletions(script)
    client = openai.OpenAI(
        api_key="test", http_client=HTTP.Client(transport=HTTP.MockTransport(fake))
    )
    surface = ToolSurface(build_registry(), provider="openai")  # at most 128 tools a request
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
    ]
    done = Run([], [], [])
    while True:
        plan = surface.plan()  # each request: the base, ToolSearch, then what was loaded
        done.plans.append(plan)
        messages[0] = {"role": "system", "content": plan.system_text(SYSTEM)}
        reply = client.chat.completions.create(
            model=MODEL, messages=messages, tools=plan.render("openai")
        )
        message = reply.choices[0].message
        function_calls = [c for c in message.tool_calls or [] if c.type == "function"]
        if not function_calls:
            messages.append({"role": "assistant", "content": message.content})
            surface.end_turn()
            break
        messages.append(
            {
                "role": "assistant",
                "content": message.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in function_calls
                ],
            }
        )
        calls = [
            ToolCall(c.function.name, json.loads(c.function.arguments or "{}"), c.id)
            for c in function_calls
        ]
        results: list[ChatCompletionToolMessageParam] = []
        verdicts = surface.admit(calls)  # unknown names and calls past the cap: not run
        for verdict in verdicts:
            text = run_tool(surface, verdict.call) if verdict.runs else verdict.message
            results.append({"role": "tool", "tool_call_id": verdict.call.id, "content": text})
        done.verdicts.append(verdicts)
        messages.extend(results)  # a result for every call, or the next request is refused
    done.bodies = fake.bodies
    return done


def main() -> None:
    """Run the loop and print, per request, the tools the SDK sent and the results returned."""
    done = run()
    for i, (body, plan) in enumerate(zip(done.bodies, done.plans)):
        names = [tool["function"]["name"] for tool in body["tools"]]
        print(f"request {i + 1}: {len(names)} tools (at most 128), held back: {plan.held_back}")
        print(f"  loaded: {[n for n, s in zip(plan.names, plan.sources) if s == 'loaded']}")
        print(f"  the plan's tools, in order: {names == list(plan.names)}")
        system = body["messages"][0]["content"]
        print(f"  catalogue in the system text: {'<tool_catalogue>' in system}")
        if i < len(done.verdicts):
            not_run = sum(v.never_ran for v in done.verdicts[i])
            print(f"  the model's answer: {len(done.verdicts[i])} calls, {not_run} not run")
    print(f"openai {openai.__version__}: {len(done.bodies)} requests sent through the SDK")


if __name__ == "__main__":
    main()
