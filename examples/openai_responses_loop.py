"""The host loop on OpenAI's Responses API in native delivery, its HTTP answered by a fake.

    python examples/openai_responses_loop.py

The client is the real ``openai.OpenAI`` and its ``responses.create``; only its transport is
fake (an ``httpx.MockTransport`` handler that records each body and answers with the next
scripted output). The surface runs with ``delivery="native"``: the tools array holds the
listed functions and the client ``tool_search`` tool and never changes; the model's
``tool_search_call`` goes to ``surface.tool_search``, whose ``result.native`` is the
``tool_search_output`` item carrying the loaded definitions; then the model calls the tool
it found. No network, no key.
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

from toolsurface import (
    RequestPlan,
    Tool,
    ToolCall,
    ToolRegistry,
    ToolSurface,
    Verdict,
    tool_search_tool,
)
from toolsurface.catalogue import demo_catalogue

MODEL = "scripted-fake-model"  # the fake answers any name; a real host names a gpt-5.4+ model
SYSTEM = "You are an engineering assistant. Answer in the user's language."
USER = "Покажи открытые пулреквесты в acme/api."
#: The fake model's output items, one list a request.
SCRIPT: list[list[dict[str, Any]]] = [
    [
        {
            "type": "tool_search_call",
            "id": "tsc_1",
            "call_id": "search_1",
            "execution": "client",
            "status": "completed",
            "arguments": {"query": "покажи открытые пулреквесты"},
        }
    ],
    [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "github__list_pull_requests",
            "arguments": json.dumps({"owner": "acme", "repo": "api"}),
            "status": "completed",
        }
    ],
    [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Два открытых.", "annotations": []}],
        }
    ],
]


def http_library(sdk: str) -> ModuleType:
    """The HTTP library the SDK is built on: httpx, or httpx2 in its newer releases (same API)."""
    names = {re.split(r"[^A-Za-z0-9_.-]", r, maxsplit=1)[0] for r in metadata.requires(sdk) or []}
    return importlib.import_module("httpx2" if "httpx2" in names else "httpx")


HTTP = http_library("openai")


@dataclass
class FakeResponses:
    """POST /v1/responses, played locally: it keeps each body and answers from the script."""

    script: list[list[dict[str, Any]]]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        """Record the request's JSON body and answer with the next scripted output."""
        if request.method != "POST" or request.url.path != "/v1/responses":
            return HTTP.Response(404, json={"error": {"message": "not found", "type": "fake"}})
        self.bodies.append(json.loads(request.content))
        output = self.script[min(len(self.bodies), len(self.script)) - 1]
        response = {
            "id": f"resp_{len(self.bodies):02}",
            "object": "response",
            "created_at": 1_700_000_000,
            "model": MODEL,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
        return HTTP.Response(200, json=response)


@dataclass
class Run:
    """The bodies the SDK really sent, the plan behind each, and the verdicts of the calls."""

    bodies: list[dict[str, Any]]
    plans: list[RequestPlan]
    verdicts: list[Verdict]


def build_registry() -> ToolRegistry:
    """The host's tool, the demo catalogue as connected servers, and ToolSearch."""
    registry = ToolRegistry([Tool(name="read_file", description="Read a workspace file.")])
    catalogue = demo_catalogue()
    registry.register_many(catalogue)
    for prefix in sorted({tool.name.split("__")[0] for tool in catalogue}):
        registry.declare_group(prefix, prefix=f"{prefix}__", dynamic=True)
    registry.register(tool_search_tool())
    return registry


def run() -> Run:
    """Play the script through the real SDK client and return what it sent."""
    fake = FakeResponses(SCRIPT)
    client = openai.OpenAI(
        api_key="test", http_client=HTTP.Client(transport=HTTP.MockTransport(fake))
    )
    surface = ToolSurface(build_registry(), provider="openai-responses", delivery="native")
    items: list[Any] = [{"role": "user", "content": USER}]
    done = Run([], [], [])
    for _ in SCRIPT:
        plan = surface.plan()  # the same tools array every time: loads come as output items
        done.plans.append(plan)
        reply = client.responses.create(
            model=MODEL, instructions=plan.system_text(SYSTEM), tools=plan.render(), input=items
        )
        for out in reply.output:
            items.append(out.model_dump(exclude_none=True))
            if out.type == "tool_search_call":
                items.append(surface.tool_search(out).native)  # the tool_search_output item
            elif out.type == "function_call":
                (verdict,) = surface.admit([ToolCall(out.name, out.arguments, out.call_id)])
                done.verdicts.append(verdict)
                text = '[{"number": 412}, {"number": 415}]' if verdict.runs else verdict.message
                result = {"type": "function_call_output", "call_id": out.call_id, "output": text}
                items.append(result)
    surface.end_turn()
    done.bodies = fake.bodies
    return done


def main() -> None:
    """Run the loop and print what each request carried."""
    done = run()
    for i, (body, plan) in enumerate(zip(done.bodies, done.plans)):
        kinds = [t.get("name", t["type"]) for t in body["tools"]]
        print(f"request {i + 1}: tools {', '.join(kinds)}; held back: {len(plan.held_back)} groups")
        same = body["tools"] == done.bodies[0]["tools"]
        print(f"  the same tools array as the first request: {same}")
        print(f"  loaded through tool_search_output: {', '.join(plan.loaded) or 'none'}")
    print(f"openai {openai.__version__}: {len(done.bodies)} requests sent through the SDK")


if __name__ == "__main__":
    main()
