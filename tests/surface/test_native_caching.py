"""Prompt caching and a bounded history under native delivery (issue 41), through the SDKs.

Breakpoints and keys are checked in the requests the official ``anthropic`` and ``openai``
clients send (a local ``MockTransport`` records each body), and every array, system block
and trimmed history validates against the SDK's own typed params.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK is a test dep")
openai = pytest.importorskip("openai", reason="the openai SDK is a test dep")
try:  # the SDKs' HTTP library: httpx2 in their newer releases, httpx before (same API)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]
from anthropic import types as anthropic_types  # noqa: E402
from openai.types import responses as responses_types  # noqa: E402

SYSTEM = "You are an operations assistant."
BLOCKED = "gh__delete_repo"


def _tool(name: str, text: str) -> Tool:
    return Tool(
        name=name,
        description=text,
        input_schema={"type": "object", "properties": {"repo": {"type": "string"}}},
    )


def _registry(engine: str) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(
        [
            _tool("read_file", "Read a file from the workspace."),
            _tool("gh__list_issues", "List the issues of a GitHub repository."),
            _tool("gh__create_issue", "Create an issue in a GitHub repository."),
            _tool(BLOCKED, "Delete a GitHub repository."),
            _tool("slack__send_message", "Send a message to a Slack channel."),
            _tool("slack__list_channels", "List the channels of a Slack workspace."),
            tool_search_tool(),
        ]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True, description="GitHub issues and repos")
    reg.declare_group("slack", prefix="slack__", dynamic=True)
    return reg


def _surface(registry: ToolRegistry, provider: str, **kw: Any) -> ToolSurface:
    return ToolSurface(
        registry,
        provider=provider,
        delivery=kw.pop("delivery", "native"),
        policy=lambda n: n != BLOCKED,
        session_id="caching",
        **kw,
    )


def _validate(param: Any, value: Any) -> None:
    pydantic.TypeAdapter(param).validate_python(value, strict=False)


def _marked(tools: list[dict[str, Any]]) -> list[str]:
    return [t.get("name", t.get("type", "")) for t in tools if "cache_control" in t]


# -- where the breakpoints go ------------------------------------------------------------------


def test_anthropic_breakpoint_is_on_the_last_shown_tool_never_a_deferred_one(
    engine_name: str,
) -> None:
    plan = _surface(_registry(engine_name), "anthropic").plan()
    plain, cached = plan.render(), plan.render(cache=True)
    assert _marked(plain) == []  # off by default: the array as before
    _validate(list[anthropic_types.ToolParam], cached)
    assert cached[-1]["defer_loading"]  # the usual "last tool" is deferred here
    assert _marked(cached) == ["ToolSearch"]
    assert not any("cache_control" in t for t in cached if t.get("defer_loading"))
    assert [{k: v for k, v in t.items() if k != "cache_control"} for t in cached] == plain
    assert _marked(plan.render()) == []  # the marked copy is the host's, not the plan's
    blocks = plan.system_blocks(SYSTEM, cache=True)
    _validate(list[anthropic_types.TextBlockParam], blocks)
    assert blocks == [
        {"type": "text", "text": plan.system_text(SYSTEM), "cache_control": {"type": "ephemeral"}}
    ]
    assert plan.system_blocks(SYSTEM) == [{"type": "text", "text": plan.system_text(SYSTEM)}]


def test_anthropic_append_delivery_marks_its_last_tool(engine_name: str) -> None:
    surface = _surface(_registry(engine_name), "anthropic", delivery="append")
    surface.tool_search({"select": ["gh__list_issues"]})
    tools = surface.plan().render(cache=True)
    _validate(list[anthropic_types.ToolParam], tools)
    assert _marked(tools) == [tools[-1]["name"]] == ["gh__list_issues"]


def test_other_providers_arrays_are_unchanged_by_the_switch(engine_name: str) -> None:
    plan = _surface(_registry(engine_name), "openai-responses").plan()
    assert plan.render(cache=True) == plan.render()
    chat = _surface(_registry(engine_name), "openai", delivery="append").plan()
    assert chat.render(cache=True) == chat.render()


def test_the_cache_key_is_one_per_catalogue(engine_name: str) -> None:
    reg = _registry(engine_name)
    surface = _surface(reg, "openai-responses")
    first = surface.plan().cache_key
    assert first.startswith("toolsurface-") and len(first) <= 64
    surface.tool_search({"select": ["gh__list_issues"]})
    assert surface.plan().cache_key == first  # a load keeps the key
    assert _surface(reg, "openai-responses").plan().cache_key == first  # another session
    append = _surface(reg, "openai", delivery="append")
    before = append.plan().cache_key
    append.tool_search({"select": ["gh__list_issues"]})
    assert append.plan().cache_key == before  # append's loads keep it too
    narrower = ToolSurface(
        reg,
        provider="openai-responses",
        delivery="native",
        policy=lambda n: not n.startswith("slack__"),
    )
    assert narrower.plan().cache_key != first  # another catalogue, another key


# -- through the SDK clients ---------------------------------------------------------------------


class _Fake:
    """A local transport: records each request body, answers with the next scripted turn."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns: Iterator[dict[str, Any]] = iter(turns)
        self.requests: list[dict[str, Any]] = []

    def handler(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content))
        return httpx.Response(200, json=next(self.turns))


def _anthropic_turn(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(_breakpoints(v) for v in value)
    return 0


def test_an_anthropic_loop_with_breakpoints_sends_the_same_cached_prefix(
    engine_name: str,
) -> None:
    use = lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a}  # noqa: E731
    fake = _Fake(
        [
            _anthropic_turn([use("t1", "ToolSearch", {"query": "list issues"})]),
            _anthropic_turn([use("t2", "gh__list_issues", {})]),
            _anthropic_turn([{"type": "text", "text": "Two open issues."}], stop="end_turn"),
        ]
    )
    surface = _surface(_registry(engine_name), "anthropic")
    client = anthropic.Anthropic(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(fake.handler))
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "list the issues of acme/api"}]
    for _ in range(3):
        plan = surface.plan()
        reply = client.messages.create(
            model="claude-test",
            max_tokens=256,
            system=plan.system_blocks(SYSTEM, cache=True),  # type: ignore[arg-type]
            tools=plan.render(cache=True),
            messages=plan.trim_history(messages),  # type: ignore[arg-type]
        )
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        results = []
        for block in reply.content:
            if block.type != "tool_use":
                continue
            if block.name == "ToolSearch":
                content: Any = surface.tool_search(block.input).native
            else:
                (v,) = surface.admit([ToolCall(block.name, block.input, id=block.id)])
                content = "2 open issues" if v.runs else v.message
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        if results:
            messages.append({"role": "user", "content": results})
    heads = {json.dumps([r["tools"], r["system"]], sort_keys=True) for r in fake.requests}
    assert len(heads) == 1  # tools and system: one cached prefix for the whole loop
    for body in fake.requests:
        assert 1 <= _breakpoints(body) <= 4  # the API's limit; the host has two left
        assert [t["name"] for t in body["tools"] if "cache_control" in t] == ["ToolSearch"]
    second = fake.requests[1]["messages"][-1]["content"][0]["content"]
    assert {"type": "tool_reference", "tool_name": "gh__list_issues"} in second


def test_a_responses_request_carries_the_catalogue_key(engine_name: str) -> None:
    fake = _Fake(
        [
            {
                "id": "resp_1",
                "object": "response",
                "created_at": 0,
                "model": "gpt-test",
                "status": "completed",
                "output": [],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
            }
        ]
    )
    client = openai.OpenAI(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(fake.handler))
    )
    plan = _surface(_registry(engine_name), "openai-responses").plan()
    client.responses.create(
        model="gpt-test",
        instructions=plan.system_text(SYSTEM),
        tools=plan.render(cache=True),
        input="post the status to slack",
        prompt_cache_key=plan.cache_key,
    )
    (body,) = fake.requests
    assert body["prompt_cache_key"] == plan.cache_key
    assert body["tools"] == plan.render()


# -- the loaded set as a budget: unloads reach the history --------------------------------------


def _anthropic_history(surface: ToolSurface, picks: list[str]) -> list[dict[str, Any]]:
    """One turn per pick: the model selects it, the host answers, the turn ends."""
    messages: list[dict[str, Any]] = []
    for i, name in enumerate(picks):
        messages.append({"role": "user", "content": f"step {i}"})
        content = surface.tool_search({"select": [name]}).native
        use = {"type": "tool_use", "id": f"t{i}", "name": "ToolSearch", "input": {}}
        messages.append({"role": "assistant", "content": [use]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": content}
        messages.append({"role": "user", "content": [result]})
        messages.append({"role": "assistant", "content": "Done."})
        surface.end_turn()
    return messages


def _references(messages: list[Any]) -> list[str]:
    return [
        r["tool_name"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and isinstance(b["content"], list)
        for r in b["content"]
        if r["type"] == "tool_reference"
    ]


def test_anthropic_unloads_leave_the_history_at_a_safe_point(engine_name: str) -> None:
    limits = SurfaceLimits(max_loaded_entries=2, load_reserve=0)
    surface = _surface(_registry(engine_name), "anthropic", limits=limits)
    picks = ["gh__list_issues", "gh__create_issue", "slack__send_message"]
    messages = _anthropic_history(surface, picks)
    plan = surface.plan()
    assert len(plan.loaded) <= 2 and "slack__send_message" in plan.loaded
    trimmed = plan.trim_history(messages)
    _validate(list[anthropic_types.MessageParam], trimmed)
    assert _references(messages) == picks  # the host's own list is left alone
    assert _references(trimmed) == [n for n in picks if n in plan.loaded]
    assert len(trimmed) == len(messages)  # every tool_use keeps its tool_result
    untouched = [m for m, t in zip(messages, trimmed) if m is t]
    assert len(untouched) >= len(messages) - 2  # only the unloaded picks' results changed
    # Nothing more to trim: the same objects, so the cached prefix stands.
    again = surface.plan().trim_history(trimmed)
    assert all(a is b for a, b in zip(again, trimmed))


def test_responses_unloads_leave_the_history_at_a_safe_point(engine_name: str) -> None:
    limits = SurfaceLimits(max_loaded_entries=2, load_reserve=0)
    surface = _surface(_registry(engine_name), "openai-responses", limits=limits)
    items: list[Any] = []
    picks = ["gh__list_issues", "gh__create_issue", "slack__send_message"]
    for i, name in enumerate(picks):
        call = {"type": "tool_search_call", "call_id": f"ts_{i}", "arguments": {"select": [name]}}
        items += [{"role": "user", "content": f"step {i}"}, call]
        items.append(surface.tool_search(call).native)
        surface.end_turn()
    plan = surface.plan()
    trimmed = plan.trim_history(items)
    _validate(list[responses_types.ResponseInputItemParam], trimmed)

    def functions(item: dict[str, Any]) -> list[str]:
        out = []
        for t in item["tools"]:
            out += [f["name"] for f in t["tools"]] if t["type"] == "namespace" else [t["name"]]
        return out

    outputs = [i for i in trimmed if i.get("type") == "tool_search_output"]
    assert len(outputs) == 3  # every call keeps its output
    kept = [n for o in outputs for n in functions(o)]
    assert kept == [n for n in picks if n in plan.loaded] and len(kept) <= 2
    assert all(t["tools"] for o in outputs for t in o["tools"] if t["type"] == "namespace")


def test_append_delivery_leaves_the_history_alone(engine_name: str) -> None:
    surface = _surface(_registry(engine_name), "anthropic", delivery="append")
    messages = [{"role": "user", "content": "hi"}]
    assert surface.plan().trim_history(messages) == messages


# -- Responses: a load comes back in the namespace that deferred it -----------------------------


def test_a_load_comes_back_in_the_namespace_that_defers_it(engine_name: str) -> None:
    surface = _surface(_registry(engine_name), "openai-responses")
    array = surface.plan().render()
    spaces = {t["name"]: t for t in array if t["type"] == "namespace"}
    for query, name in (
        ("send a slack message", "slack__send_message"),
        ("list the issues of a repository", "gh__list_issues"),
    ):
        item = surface.tool_search({"type": "tool_search_call", "arguments": {"query": query}})
        _validate(responses_types.ResponseInputItemParam, item.native)
        (space,) = [
            t for t in item.native["tools"] if name in [f["name"] for f in t.get("tools", [])]
        ]
        deferring = spaces[space["name"]]
        assert name in [f["name"] for f in deferring["tools"]]
        assert space["description"] == deferring["description"]


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_a_load_names_the_tool_as_the_array_does(engine_name: str, provider: str) -> None:
    """A name the provider refuses goes as its alias in the array, and so in every load."""
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many(
        [
            _tool("read_file", "Read a file from the workspace."),
            _tool("docs__find.page", "Find a page of the docs."),
            tool_search_tool(),
        ]
    )
    reg.declare_group("docs", prefix="docs__", dynamic=True)
    surface = _surface(reg, provider)
    array = json.dumps(surface.plan().render())
    native = surface.tool_search({"select": ["docs__find.page"]}).native
    if provider == "anthropic":
        (ref,) = [b["tool_name"] for b in native if b["type"] == "tool_reference"]
        named = [ref]
        history: list[Any] = [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": native}],
            }
        ]
        _validate(list[anthropic_types.MessageParam], history)
    else:
        named = [f["name"] for t in native["tools"] for f in t.get("tools", [t])]
        history = [native]
    assert named != ["docs__find.page"] and all(f'"name": "{n}"' in array for n in named)
    assert surface.plan().trim_history(history) == history  # loaded: nothing to take out
    (v,) = surface.admit([ToolCall(named[0], {}, id="c1")])
    assert v.runs and v.call.name == "docs__find.page"
