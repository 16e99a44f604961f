"""The stdio pass-through: which lines it takes from the SDK, and what it writes back.

The gateway's stdio tests (test_gateway.py, test_gateway_upstreams.py) run every call after
the first ``tools/list`` through it, with a real client; these pin the edges: only a plain
``tools/call`` on a version it serves is taken, a failure is a JSON-RPC error as the SDK
writes it, ``list_changed`` goes before the response, a cancelled call is not answered.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")


from gateway_procs import INIT, write_config

from toolsurface.gateway.fastpath import FastCalls, Notify, _plain_call

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic


def _request(rid: Any = 1, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_only_a_plain_tools_call_is_taken() -> None:
    assert _plain_call(_request(7, name="a", arguments={"x": 1})) == (7, "a", {"x": 1})
    assert _plain_call(_request("r", name="a")) == ("r", "a", {})
    assert _plain_call(_request(1, name="a", arguments=None)) == (1, "a", {})
    for refused in (
        _request(1, name="a", _meta={"progressToken": 1}),
        _request(True, name="a"),
        _request(None, name="a"),
        _request(1, name="a", arguments=[1]),
        _request(1, name=3),
        {**_request(1, name="a"), "method": "tools/list"},
        {**_request(1, name="a"), "jsonrpc": "1.0"},
        {**_request(1, name="a"), "extra": 1},
        [],
    ):
        assert _plain_call(refused) is None, refused


def _run(lines: list[bytes], call: Any, version: str = "2025-11-25") -> list[Any]:
    written: list[Any] = []

    async def write(text: str) -> None:
        assert text.endswith("\n")
        written.append(json.loads(text))

    async def main() -> list[bool]:
        fast = FastCalls(call)
        fast.enable(version)
        taken = []
        async with anyio.create_task_group() as tasks:
            fast.attach(tasks, write)
            for line in lines:
                taken.append(fast.take(line))
                await anyio.sleep(0.05)
        return taken

    return [anyio.run(main), written]


def test_a_taken_call_is_answered_with_list_changed_first() -> None:
    async def call(name: str, arguments: Mapping[str, Any], notify: Notify) -> Any:
        await notify()
        # As the upstream sent it (the wire's names), which the pass-through shapes.
        return {
            "content": [{"type": "text", "text": f"{name} {arguments['x']}"}],
            "structuredContent": {"x": arguments["x"]},
        }

    line = json.dumps(_request(5, name="ops__a", arguments={"x": "д"})).encode()
    taken, written = _run([line, b'{"jsonrpc":"2.0","id":6,"method":"tools/list"}'], call)
    assert taken == [True, False]
    assert written == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {
                "content": [{"type": "text", "text": "ops__a д"}],
                "structuredContent": {"x": "д"},
            },
        },
    ]


def test_a_failed_call_is_an_error_and_a_cancelled_one_is_not_answered() -> None:
    async def call(name: str, arguments: Mapping[str, Any], notify: Notify) -> Any:
        if name == "slow":
            await anyio.sleep(10)
        raise RuntimeError("no store")

    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    lines = [json.dumps(_request(1, name="bad")), json.dumps(_request(2, name="slow"))]
    lines += [json.dumps(cancel), json.dumps({**cancel, "params": {"requestId": 9}})]
    taken, written = _run([x.encode() for x in lines], call)
    assert taken == [True, True, True, False]
    assert written == [{"jsonrpc": "2.0", "id": 1, "error": {"code": 0, "message": "no store"}}]


def test_nothing_is_taken_on_a_version_it_does_not_serve() -> None:
    async def call(name: str, arguments: Mapping[str, Any], notify: Notify) -> Any:
        raise AssertionError("not taken")

    line = json.dumps(_request(1, name="a")).encode()
    for version in ("2024-11-05", "2025-03-26", "2026-07-28"):
        assert _run([line], call, version) == [[False], []]


def test_a_call_nested_too_deeply_to_read_is_refused_by_its_id_and_the_gateway_lives() -> None:
    """A client's arguments nested past the parser's recursion answer a parse error (the
    SDK's reader would drop the line unanswered); before, the stdio gateway exited."""

    async def call(name: str, arguments: Mapping[str, Any], notify: Notify) -> Any:
        return {"content": [{"type": "text", "text": "ran"}]}

    deep = "[" * 100_000 + "]" * 100_000
    lines = [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"x":'
        + deep.encode()
        + b"}}}",
        b'{"jsonrpc": "2.0", "method": "tools/call", "id": "r-1", "params": '
        + deep.encode()
        + b"}",
        b'{"params": ' + deep.encode() + b', "jsonrpc":"2.0","id":8,"method":"tools/call"}',
        json.dumps(_request(9, name="a")).encode(),
    ]
    taken, written = _run(lines, call)
    # The id read where it opens the line; one after a nested value is left to the SDK.
    assert taken == [True, True, False, True]
    error = {"code": -32700, "message": "Parse error: the request is nested too deeply"}
    assert written == [
        {"jsonrpc": "2.0", "id": 7, "error": error},
        {"jsonrpc": "2.0", "id": "r-1", "error": error},
        {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "ran"}]}},
    ]


def test_a_request_id_mcp_does_not_allow_is_refused_from_the_first_line() -> None:
    """The SDK validates a request with an object, fractional, null or boolean id as a
    notification and answers nothing; refused here with -32600 and id null, before any
    handshake; a good id (first or after the params) and a notification pass to the SDK."""

    async def call(name: str, arguments: Mapping[str, Any], notify: Notify) -> Any:
        raise AssertionError("no call is taken here")

    bad = [{"a": 1}, 1.5, None, True, [1]]
    lines = [json.dumps({"jsonrpc": "2.0", "id": b, "method": "initialize"}).encode() for b in bad]
    lines.append(b'{"jsonrpc":"2.0","id":1.0e3,"method":"tools/list"}')
    lines.append(b'{"jsonrpc":"2.0","\\u0069d":null,"method":"tools/list"}')
    lines.append(b'{"jsonrpc":"2.0","id":-Infinity,"method":"tools/list"}')
    good = [
        b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","method":"tools/list","params":{"id":1.5},"id":"x"}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","method":"notifications/x","params":{"id":null}}',
        # A notification with a stray id is served by the SDK as the notification it is.
        b'{"jsonrpc":"2.0","method":"notifications/initialized","id":null}',
    ]
    taken, written = _run(lines + good, call, version="1999-01-01")
    assert taken == [True] * len(lines) + [False] * len(good)
    kinds = ["an object", "a number with a fraction", "null", "a boolean", "an array"]
    kinds += ["a number with a fraction", "null", "a number that is not finite"]
    said = "Invalid Request: a request's id must be a string or an integer, not "
    assert written == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": said + k}}
        for k in kinds
    ]


def test_over_stdio_a_bad_id_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    """A real stdio gateway fed raw lines: the bad request is answered with -32600 and the
    good ones beside it as before (the SDK answered nothing, and a client waited)."""
    config, _ = write_config(tmp_path)
    argv = [sys.executable, "-m", "toolsurface.cli", "gateway", "--config", str(config)]
    sent = [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in sent))
        proc.stdin.flush()
        lines: queue.Queue[bytes] = queue.Queue()
        out = proc.stdout
        threading.Thread(target=lambda: [lines.put(x) for x in out], daemon=True).start()
        answers = []
        with contextlib.suppress(queue.Empty):
            for _ in range(3):
                answers.append(json.loads(lines.get(timeout=30)))
        proc.stdin.close()
        proc.wait(timeout=60)
    by_id = {json.dumps(a["id"]): a for a in answers}  # answers need not come in order
    assert set(by_id) == {"1", "null", "2"}
    assert "result" in by_id["1"]
    assert by_id["null"]["error"]["code"] == -32600
    assert "ToolSearch" in json.dumps(by_id["2"]["result"])


def test_a_well_formed_line_is_not_parsed_to_look_for_a_bad_id() -> None:
    """Most request lines hold a good id, wherever a client puts it (the TypeScript SDK
    writes it last): the bytes are scanned, and only a line that may hold a bad id is
    parsed again before the SDK parses it."""
    from toolsurface.gateway.request_ids import may_have_bad_id

    params = json.dumps({"name": "x", "arguments": {"text": "a" * 10_000, "n": 1.5}})
    good = [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}',
        ('{"method":"tools/call","params":' + params + ',"jsonrpc":"2.0","id":7}').encode(),
        b'{"method":"tools/call","params":{},"jsonrpc":"2.0","id":"a-very-long-string-id"}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}',
    ]
    bad = [
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        b'{"method":"tools/list","jsonrpc":"2.0","id" : 1e3}',
        b'{"method":"tools/list","params":{},"jsonrpc":"2.0","id":-2.5}',
        b'{"jsonrpc":"2.0","id":7,"method":"tools/list","id":{"x":1}}',
        # The key spelled with escapes is "id" to the SDK's parser too.
        b'{"jsonrpc":"2.0","\\u0069d":null,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","i\\u0064":true,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","\\u0069\\u0064":[1],"method":"tools/list"}',
        # Read as numbers by Python's and the SDK's parsers alike.
        b'{"jsonrpc":"2.0","id":NaN,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":Infinity,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","\\u0069d":-Infinity,"method":"tools/list"}',
    ]
    assert [may_have_bad_id(line) for line in good] == [False] * len(good)
    assert [may_have_bad_id(line) for line in bad] == [True] * len(bad)
