"""Native delivery (issue 22): loads through Anthropic's and OpenAI Responses' own deferral.

Tested through the SDKs themselves: the rendered arrays and answers validate against the
SDK's typed params, and whole loops run through ``anthropic.Anthropic`` and
``openai.OpenAI`` clients against a local fake transport (httpx's ``MockTransport``), which
records every request the SDK sends and answers with a scripted model turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pydantic
import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
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
KEY = b"native delivery test key, fixed"


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
            tool_search_tool(),
        ]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True, description="GitHub issues and repos")
    reg.declare_group("slack", prefix="slack__", dynamic=True)
    return reg


def _surface(engine: str, provider: str, **kw: Any) -> ToolSurface:
    return _surface_over(_registry(engine), provider, **kw)


def _surface_over(registry: ToolRegistry, provider: str, **kw: Any) -> ToolSurface:
    return ToolSurface(
        registry,
        provider=provider,
        delivery="native",
        policy=lambda n: n != BLOCKED,
        session_id="native",
        mark_key=KEY,
        **kw,
    )


def _resumed(surface: ToolSurface) -> ToolSurface:
    """A new surface like ``surface``, over its registry, restored from its snapshot."""
    again = _surface_over(surface.registry, str(surface.provider))
    again.restore(surface.snapshot().to_json())
    return again


def _validate(param: Any, value: Any) -> None:
    pydantic.TypeAdapter(param).validate_python(value, strict=False)


# -- choosing the delivery ------------------------------------------------------------------


@pytest.mark.parametrize("provider", [None, "openai", "gemini"])
def test_native_delivery_where_a_provider_has_none_is_a_clear_error(provider: str | None) -> None:
    with pytest.raises(ValueError, match="delivery='native' needs a provider") as err:
        ToolSurface(ToolRegistry(), provider=provider, delivery="native")
    if provider is not None:
        assert repr(provider) in str(err.value)


# -- Anthropic: defer_loading and tool_reference ----------------------------------------------


def test_anthropic_array_holds_every_admitted_held_tool_deferred_and_stays_the_same(
    engine_name: str,
) -> None:
    surface = _surface(engine_name, "anthropic")
    first = surface.plan().render()
    _validate(list[anthropic_types.ToolParam], first)
    names = [t["name"] for t in first]
    deferred = [t["name"] for t in first if t.get("defer_loading")]
    assert names[:2] == ["read_file", "ToolSearch"]  # never deferred: at least one is not
    assert deferred == ["gh__create_issue", "gh__list_issues", "slack__send_message"]
    assert BLOCKED not in json.dumps(first)
    result = surface.tool_search({"query": "list the issues of a repository"})
    assert result.loaded[0] == "gh__list_issues"
    assert result.native[0]["type"] == "text" and "gh__list_issues" in result.native[0]["text"]
    refs = [{"type": "tool_reference", "tool_name": n} for n in result.loaded]
    assert result.native[1:] == refs
    _validate(
        anthropic_types.ToolResultBlockParam,
        {"type": "tool_result", "tool_use_id": "t1", "content": result.native},
    )
    after = surface.plan()
    assert after.render() == first  # a load does not touch the array
    assert after.loaded == result.loaded
    (v,) = surface.admit([ToolCall("gh__list_issues", {"repo": "a/b"}, id="c1")])
    assert v.runs and not v.blind  # its definition is in the history now


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_with_the_discovery_tool_blocked_no_tool_is_left_deferred(
    engine_name: str, provider: str
) -> None:
    # Deferred tools load only through ToolSearch: once the policy blocks it (mid-run, or
    # in a restore), the groups held earlier are listed whole, as a fresh run under that
    # policy lists them, and come back held when ToolSearch does.
    surface = _surface(engine_name, provider)
    assert surface.plan().held_back == ("gh", "slack")
    snapshot = surface.snapshot().to_json()
    without = {"read_file", "gh__list_issues", "gh__create_issue", "slack__send_message"}
    surface.set_policy(without)
    restored = _surface_over(surface.registry, provider)
    restored.set_policy(without)
    restored.restore(snapshot)
    for run in (surface, restored):
        plan = run.plan()
        array = plan.render()
        assert plan.held_back == () and set(plan.names) == without
        assert not [t for t in array if t.get("defer_loading") or t.get("type") == "namespace"]
        assert "ToolSearch" not in json.dumps(array)
    surface.set_policy(lambda n: n != BLOCKED)
    assert surface.plan().held_back == ("gh", "slack")


def test_anthropic_group_load_references_each_member_and_never_a_blocked_one(
    engine_name: str,
) -> None:
    surface = _surface(engine_name, "anthropic")
    surface.plan()
    result = surface.tool_search({"group": "gh"})
    refs = [b["tool_name"] for b in result.native if b["type"] == "tool_reference"]
    assert refs == ["gh__create_issue", "gh__list_issues"]
    assert BLOCKED not in json.dumps(result.native)


def test_a_blind_call_runs_without_being_loaded_and_compaction_unloads(engine_name: str) -> None:
    surface = _surface(engine_name, "anthropic")
    surface.plan()
    (v,) = surface.admit([ToolCall("slack__send_message", {}, id="c1")])
    assert v.runs and v.blind
    assert surface.loaded_entries() == []  # only a reference makes it visible
    surface.tool_search({"select": ["gh__create_issue"]})
    assert surface.discovered_tool_names() == ["gh__create_issue"]
    surface.compaction()  # the references went with the history
    assert surface.loaded_entries() == []
    assert surface.plan().loaded == ()


# -- OpenAI Responses: the client tool_search tool and tool_search_output --------------------


def test_responses_array_has_the_client_tool_search_and_no_held_tool(engine_name: str) -> None:
    surface = _surface(engine_name, "openai-responses")
    plan = surface.plan()
    tools = plan.render()
    _validate(list[responses_types.ToolParam], tools)
    assert [t.get("name", t["type"]) for t in tools] == ["read_file", "gh", "slack", "tool_search"]
    assert tools[-1]["execution"] == "client"
    gh, slack = tools[1], tools[2]
    assert gh["type"] == "namespace" and gh["description"] == "GitHub issues and repos"
    assert [f["name"] for f in gh["tools"]] == ["gh__create_issue", "gh__list_issues"]
    assert all(f["defer_loading"] for f in gh["tools"] + slack["tools"])
    assert slack["description"] == "Tools of the slack group."
    assert BLOCKED not in json.dumps(tools)
    assert "call the tool_search tool with query" in plan.catalogue
    call = {"type": "tool_search_call", "call_id": "ts_1", "arguments": {"query": "slack message"}}
    result = surface.tool_search(call)
    assert result.loaded == ("slack__send_message",)
    item = result.native
    _validate(responses_types.ResponseInputItemParam, item)
    assert item["type"] == "tool_search_output" and item["call_id"] == "ts_1"
    (space,) = item["tools"]  # back in the namespace that deferred it
    assert space["type"] == "namespace" and space["name"] == "slack"
    assert space["description"] == slack["description"]
    assert [t["name"] for t in space["tools"]] == ["slack__send_message"]
    assert surface.plan().render() == tools


def test_responses_loads_of_a_described_group_come_in_its_namespace(engine_name: str) -> None:
    surface = _surface(engine_name, "openai-responses")
    surface.plan()
    item = surface.tool_search({"type": "tool_search_call", "arguments": {"group": "gh"}}).native
    (space,) = item["tools"]
    assert space["type"] == "namespace" and space["name"] == "gh"
    assert space["description"] == "GitHub issues and repos"
    assert [t["name"] for t in space["tools"]] == ["gh__create_issue", "gh__list_issues"]
    assert BLOCKED not in json.dumps(item)


# -- whole loops through the SDK clients ---------------------------------------------------------


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


def _use(block_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": name, "input": arguments}


def _anthropic_loop(surface: ToolSurface, fake: _Fake, steps: int) -> None:
    client = anthropic.Anthropic(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(fake.handler))
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "list the issues of acme/api"}]
    for _ in range(steps):
        plan = surface.plan()
        reply = client.messages.create(
            model="claude-test",
            max_tokens=256,
            system=plan.system_text(SYSTEM),
            tools=plan.render(),
            messages=messages,  # type: ignore[arg-type]
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


def test_an_anthropic_loop_through_the_sdk_keeps_the_tools_array_byte_identical(
    engine_name: str,
) -> None:
    fake = _Fake(
        [
            _anthropic_turn([_use("t1", "ToolSearch", {"query": "issues"})]),
            _anthropic_turn([_use("t2", "gh__list_issues", {})]),
            _anthropic_turn([{"type": "text", "text": "Two open issues."}], stop="end_turn"),
        ]
    )
    surface = _surface(engine_name, "anthropic")
    _anthropic_loop(surface, fake, 3)
    arrays = [json.dumps(r["tools"], sort_keys=True) for r in fake.requests]
    systems = [r["system"] for r in fake.requests]
    assert len(set(arrays)) == 1 and len(set(systems)) == 1
    second = fake.requests[1]["messages"][-1]["content"][0]
    assert {"type": "tool_reference", "tool_name": "gh__list_issues"} in second["content"]
    assert fake.requests[2]["messages"][-1]["content"][0]["content"] == "2 open issues"
    # A snapshot and a resume send the same bytes next.
    mine, theirs = surface.plan(), _resumed(surface).plan()
    assert theirs.render() == mine.render() and theirs.system_text() == mine.system_text()
    assert theirs.loaded == mine.loaded and "gh__list_issues" in mine.loaded


def _responses_turn(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def _responses_loop(surface: ToolSurface, fake: _Fake, steps: int) -> list[Any]:
    client = openai.OpenAI(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(fake.handler))
    )
    items: list[Any] = [{"role": "user", "content": "post the status to slack"}]
    for _ in range(steps):
        plan = surface.plan()
        system, tools = plan.system_text(SYSTEM), plan.render()
        reply = client.responses.create(
            model="gpt-test", instructions=system, tools=tools, input=items
        )
        for out in reply.output:
            items.append(out.model_dump(exclude_none=True))
            if out.type == "tool_search_call":
                items.append(surface.tool_search(out).native)
            elif out.type == "function_call":
                (v,) = surface.admit([ToolCall(out.name, out.arguments, id=out.call_id)])
                text = "sent" if v.runs else v.message
                items.append(
                    {"type": "function_call_output", "call_id": out.call_id, "output": text}
                )
    return items


def test_a_responses_loop_through_the_sdk_answers_tool_search_calls(engine_name: str) -> None:
    search: Callable[[str], dict[str, Any]] = lambda q: {  # noqa: E731
        "type": "tool_search_call",
        "id": "tsc_1",
        "call_id": "ts_1",
        "execution": "client",
        "status": "completed",
        "arguments": {"query": q},
    }
    fake = _Fake(
        [
            _responses_turn([search("send a slack message")]),
            _responses_turn(
                [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "c1",
                        "name": "slack__send_message",
                        "arguments": "{}",
                        "status": "completed",
                    }
                ]
            ),
            _responses_turn(
                [
                    {
                        "type": "message",
                        "id": "m1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "Posted.", "annotations": []}],
                    }
                ]
            ),
        ]
    )
    surface = _surface(engine_name, "openai-responses")
    _responses_loop(surface, fake, 3)
    arrays = [json.dumps(r["tools"], sort_keys=True) for r in fake.requests]
    assert len(set(arrays)) == 1
    sent = fake.requests[1]["input"]
    output = next(i for i in sent if i.get("type") == "tool_search_output")
    assert output["call_id"] == "ts_1"
    assert [t["name"] for t in output["tools"]] == ["slack"]
    assert [t["name"] for t in output["tools"][0]["tools"]] == ["slack__send_message"]
    last = fake.requests[2]["input"][-1]
    assert last == {"type": "function_call_output", "call_id": "c1", "output": "sent"}
    assert BLOCKED not in json.dumps(fake.requests)
    # A snapshot and a resume send the same bytes next.
    mine, theirs = surface.plan(), _resumed(surface).plan()
    assert theirs.render() == mine.render() and theirs.system_text() == mine.system_text()
    assert theirs.loaded == mine.loaded == ("slack__send_message",)
