"""The gateway's stdio transport to an upstream (``gateway/stdio_upstream.py``).

Lines are assembled from the pipe's pieces once, whatever their length; a real server
answering a line of megabytes is read whole, as the SDK's own client reads it, and the
server is gone once the transport is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types

from toolsurface.gateway.stdio_upstream import (
    REFUSALS_WAITING_MAX,
    _JunkLog,
    _parse,
    _Refusals,
    stdio_upstream,
)
from toolsurface.gateway.upstream_lines import Overlong, lines_of

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = [
    pytest.mark.engine_agnostic,
    pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the processes from /proc"),
]

BIG = Path(__file__).resolve().parent / "big_server.py"
LINGER = Path(__file__).resolve().parent / "linger_server.py"


def test_lines_are_joined_from_their_pieces_wherever_the_pipe_cuts_them() -> None:
    data = b'{"a":1}\n\n{"b":' + b"2" * 100_000 + b"}\r\n  \n" + b'{"c":3}\n{"partial"'

    async def run(cut: int) -> list[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](1_000_000)
        async with send:
            for at in range(0, len(data), cut):
                send.send_nowait(data[at : at + cut])
        return [line async for line in lines_of(receive)]

    expected = [b'{"a":1}', b'{"b":' + b"2" * 100_000 + b"}\r", b'{"c":3}']
    for cut in (1, 7, 4096, len(data)):
        assert anyio.run(run, cut) == expected, cut


def _read(data: bytes, cut: int, max_bytes: int) -> list[bytes | Overlong]:
    async def run() -> list[bytes | Overlong]:
        send, receive = anyio.create_memory_object_stream[bytes](1_000_000)
        async with send:
            for at in range(0, len(data), cut):
                send.send_nowait(data[at : at + cut])
        return [line async for line in lines_of(receive, max_bytes)]

    return anyio.run(run)


def test_a_line_past_the_bound_is_counted_and_dropped_and_the_next_is_whole() -> None:
    """A line of the bound's length is a line; one byte more and only its size and exact
    edges are kept, wherever the bound falls and the pipe cuts; the lines around it are
    untouched."""
    body = bytes(b"abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7) % 36] for i in range(5000))
    long = b'{"jsonrpc":"2.0","id":7,"result":"' + body + b'"}'
    for over_by in (1, 5, 300, 511, 512, 600, 4000):
        bound = len(long) - over_by
        kept = bytes(b"k"[0] for _ in range(bound))
        data = b'{"a":1}\n' + kept + b"\n" + long + b"\n" + b'{"c":3}\n'
        for cut in (1, 7, 97, 600, 4096, len(data)):
            got = _read(data, cut, max_bytes=bound)
            assert got[0] == b'{"a":1}' and got[1] == kept and got[3] == b'{"c":3}', cut
            over = got[2]
            assert isinstance(over, Overlong), (over_by, cut)
            assert over.size == len(long), (over_by, cut)
            assert over.head == long[:512], (over_by, cut)
            assert over.tail == long[-512:], (over_by, cut)
            assert over.answered_id() == 7


def test_an_answer_whose_id_comes_last_is_found_however_little_follows_the_bound() -> None:
    """The TypeScript SDK's order: the id is in the line's last bytes, which must be the
    line's own even when the bound is crossed a few bytes before its end."""
    body = b'{"result":{"content":[{"type":"text","text":"' + b"y" * 3000 + b'"}],"x":{"id":9}}'
    long = body + b',"jsonrpc":"2.0","id":77}'
    for over_by in (1, 20, 200, 511):
        for cut in (1, 13, 64, 1000):
            got = _read(long + b"\n", cut, max_bytes=len(long) - over_by)
            assert isinstance(got[0], Overlong) and got[0].answered_id() == 77, (over_by, cut)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # The Python SDK writes the id first, the TypeScript SDK last.
        (b'{"jsonrpc":"2.0","id":12,"result":{"content":[', 12),
        (b'{"jsonrpc": "2.0", "id": "call-\\"9\\"", "error": {"code": 1', 'call-"9"'),
        (b'{"result":{"content":[{"type":"text"}]},"jsonrpc":"2.0","id":41}', 41),
        (b'  {"error":{"code":-1,"message":"m"},"jsonrpc":"2.0","id":"a"}\r', "a"),
        # A request or notification from the server answers nothing.
        (b'{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{', None),
        (b'{"method":"notifications/message","params":{"id":5}}', None),
        (b'{"method":"x","params":{},"jsonrpc":"2.0","id":5}', None),
        # An id inside the result is not the answer's.
        (b'{"result":{"items":[{"id":5}]}}', None),
        (b'{"result":{"id":5}}', None),
        (b"not json at all", None),
    ],
)
def test_a_dropped_lines_request_is_found_only_where_the_sdks_write_its_id(
    line: bytes, expected: object
) -> None:
    head, tail = line[:512], line[-512:]
    assert Overlong(10**9, head, tail).answered_id() == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{', 3),
        (b'{"method":"sampling/createMessage","params":{"a":1},"jsonrpc":"2.0","id":"s-1"}', "s-1"),
        # Notifications have no id; answers are no requests.
        (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":5}}', None),
        (b'{"method":"notifications/message","params":{"data":{"id":5}},"jsonrpc":"2.0"}', None),
        (b'{"method":"n","params":{"x":{"id":5}}}', None),
        (b'{"jsonrpc":"2.0","id":12,"result":{"content":[', None),
        (b'{"result":{},"jsonrpc":"2.0","id":41}', None),
    ],
)
def test_a_dropped_request_from_the_server_is_told_from_a_notification(
    line: bytes, expected: object
) -> None:
    head, tail = line[:512], line[-512:]
    assert Overlong(10**9, head, tail).request_id() == expected


def test_lines_that_are_no_message_are_logged_a_few_then_counted(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = _JunkLog("chatty-server")
    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        results = [_parse(b"log line %d" % i, junk) for i in range(100)]
        assert all(isinstance(r, Exception) for r in results)
        assert len(caplog.records) == 5
        assert all("chatty-server" in r.getMessage() for r in caplog.records)
        later = time.monotonic() + 61
        monkeypatch.setattr(time, "monotonic", lambda: later)
        _parse(b"one more", junk)
        assert len(caplog.records) == 6
        assert "96 more lines" in caplog.records[-1].getMessage()
        for i in range(3):
            _parse(b"and more %d" % i, junk)
        assert len(caplog.records) == 6  # counted, not yet a minute on
        junk.flush()  # the connection ends
        junk.flush()
    assert len(caplog.records) == 7
    assert "3 more lines" in caplog.records[-1].getMessage()


def test_a_real_servers_answer_past_the_bound_fails_its_call_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The call is answered with an error naming the size, long before its timeout, and
    the session goes on: the next call's answer is read whole."""
    params = StdioServerParameters(command=sys.executable, args=[str(BIG)])

    async def run() -> tuple[str, str, float]:
        with (tmp_path / "errlog").open("w") as log:
            upstream = stdio_upstream(params, log, line_max_bytes=1_000_000)
            async with upstream as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                started = time.monotonic()
                with anyio.fail_after(30), pytest.raises(MCPError) as refused:
                    await session.call_tool("dump", {"size": 3_000_000})
                seconds = time.monotonic() - started
                after = await session.call_tool("dump", {"size": 400_000})
        texts = [c.text for c in after.content if c.type == "text"]
        return str(refused.value), texts[0], seconds

    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        refusal, after, seconds = asyncio.run(run())
    assert "over the gateway's limit of 1,000,000 bytes" in refusal
    size = re.search(r"answer is ([\d,]+) bytes", refusal)
    assert size is not None and int(size.group(1).replace(",", "")) > 3_000_000
    assert len(after) == 400_000 and after.endswith("END")
    assert seconds < 10
    assert any("dropped and request" in r.getMessage() for r in caplog.records)
    assert _servers() == []


def test_a_servers_request_past_the_bound_is_refused_to_the_server(tmp_path: Path) -> None:
    """A sampling request too long is answered with an error to the server, at once; the
    client's callback never sees it, and a short one still reaches it."""
    params = StdioServerParameters(command=sys.executable, args=[str(BIG)])
    asked: list[int] = []

    async def sampling(context: Any, request: types.CreateMessageRequestParams) -> Any:
        text = request.messages[0].content
        asked.append(len(text.text) if isinstance(text, types.TextContent) else -1)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="4"), model="m"
        )

    async def run() -> tuple[str, str]:
        with (tmp_path / "errlog").open("w") as log:
            upstream = stdio_upstream(params, log, line_max_bytes=100_000)
            async with (
                upstream as (read, write),
                ClientSession(read, write, sampling_callback=sampling) as session,
            ):
                await session.initialize()
                with anyio.fail_after(20):
                    big = await session.call_tool("ask", {"size": 300_000})
                    small = await session.call_tool("ask", {"size": 20})
        return _text_of(big), _text_of(small)

    big, small = asyncio.run(run())
    assert big.startswith("refused: the request is ") and "limit of 100,000 bytes" in big
    assert small == "answered: 4"
    assert asked == [20]
    assert _servers() == []


def test_refusals_waiting_on_a_server_that_reads_nothing_are_capped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server flooding over-long requests without reading its stdin costs at most the
    cap's waiting sends; the rest are logged, and the waiting ones go once it reads."""
    from mcp.shared.message import SessionMessage

    def refusal(i: int) -> SessionMessage:
        error = types.ErrorData(code=types.INTERNAL_ERROR, message="too large")
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=i, error=error))

    async def run() -> tuple[int, list[Any], int]:
        send, receive = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tasks:
            refusals = _Refusals(send, tasks, "'flood'")
            for i in range(REFUSALS_WAITING_MAX + 4):
                refusals.send(refusal(i))
            await anyio.sleep(0.05)
            waiting = refusals.waiting
            got = [(await receive.receive()).message for _ in range(REFUSALS_WAITING_MAX)]
            await anyio.sleep(0.05)
        return waiting, [getattr(m, "id", None) for m in got], refusals.waiting

    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        waiting, ids, after = anyio.run(run)
    assert waiting == REFUSALS_WAITING_MAX and after == 0
    assert sorted(ids) == list(range(REFUSALS_WAITING_MAX))
    dropped = [r.getMessage() for r in caplog.records]
    assert len(dropped) == 4 and all("'flood' is not reading its stdin" in m for m in dropped)


def _text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def test_the_gateways_client_is_told_the_tool_answered_too_much(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Through the gateway's upstream set: the call is a tool error saying what happened
    (not that the tool failed), the log names the upstream, and the upstream stays up."""
    from toolsurface.gateway import upstream_lines as module
    from toolsurface.gateway.config import Upstream
    from toolsurface.gateway.upstreams import UpstreamSet
    from toolsurface.registry import ToolRegistry

    monkeypatch.setattr(module, "LINE_MAX_BYTES", 1_000_000)
    spec = Upstream(name="dumps", command=sys.executable, args=(str(BIG),))

    async def run() -> tuple[dict[str, Any], dict[str, Any], str | None]:
        async with UpstreamSet(ToolRegistry(), [spec]) as upstreams:
            big = await upstreams.call("dumps__dump", {"size": 3_000_000})
            small = await upstreams.call("dumps__dump", {"size": 10})
            return big, small, upstreams.state("dumps")

    with caplog.at_level("WARNING", logger="toolsurface.gateway"):
        big, small, state = anyio.run(run)
    text = big["content"][0]["text"]
    assert big["isError"] is True
    assert text.startswith("Tool 'dumps__dump' answered ") and "failed" not in text
    assert "the gateway passes at most 1,000,000, so none of it was passed on" in text
    assert small["content"][0]["text"] == "0123456END"
    assert small.get("isError") is not True and state == "up"
    assert any("upstream 'dumps' wrote a line of" in r.getMessage() for r in caplog.records)


def test_a_line_of_megabytes_is_read_whole_and_the_server_is_gone_after(tmp_path: Path) -> None:
    """The same answer as the SDK's own client reads, and no server process left behind."""
    params = StdioServerParameters(command=sys.executable, args=[str(BIG)])
    size = 6_000_000

    async def through(transport: Transport) -> tuple[str, int]:
        with (tmp_path / "errlog").open("w") as log:
            async with transport(params, log) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                result = await s.call_tool("dump", {"size": size})
                running = len(_servers())
        texts = [c.text for c in result.content if c.type == "text"]
        return texts[0], running

    ours, running = asyncio.run(through(stdio_upstream))
    sdk, _ = asyncio.run(through(lambda p, log: stdio_client(p, errlog=log)))
    assert len(ours) == size and ours.endswith("END") and ours == sdk
    assert running == 1  # the server ran while the session was open
    assert _servers() == []


def test_a_server_that_ignores_stdin_and_sigterm_is_killed_and_reaped(tmp_path: Path) -> None:
    """Stdin closed, then SIGTERM to the group, both ignored: the group's SIGKILL ends it,
    and it is reaped (no zombie), within the two grace periods."""
    params = StdioServerParameters(command=sys.executable, args=[str(LINGER), "stubborn"])

    async def run() -> list[str]:
        with (tmp_path / "errlog").open("w") as log:
            async with stdio_upstream(params, log):
                await anyio.sleep(0.5)  # started
                running = _processes(LINGER)
        return running

    running = asyncio.run(run())
    assert len(running) == 1
    assert not [pid for pid in running if _alive(pid)]


def test_a_child_holding_the_servers_stdout_leaks_no_descriptor(tmp_path: Path) -> None:
    """A server whose child inherited its stdout exits, the child keeps the pipe: the
    transport closes its end anyway (the SDK's client does too), connection after
    connection."""
    params = StdioServerParameters(command=sys.executable, args=[str(LINGER), "orphan"])

    async def connections(count: int) -> None:
        with (tmp_path / "errlog").open("w") as log:
            for _ in range(count):
                async with stdio_upstream(params, log):
                    await anyio.sleep(0.3)  # the child started

    asyncio.run(connections(1))  # the first connection's one-off descriptors
    gc.collect()
    # The collector would close a leaked pipe when it frees the transport, some time later
    # (with a ResourceWarning): counted with it paused, a leak shows.
    gc.disable()
    try:
        before = len(os.listdir("/proc/self/fd"))
        asyncio.run(connections(3))
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        gc.enable()
        gc.collect()
        for pid in _processes("time.sleep(30)"):
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)


Transport = Callable[[StdioServerParameters, TextIO], AbstractAsyncContextManager[Any]]


def _servers() -> list[str]:
    """The ids of this machine's live processes running ``big_server.py``."""
    return [pid for pid in _processes(BIG) if _alive(pid)]


def _processes(marker: str | Path) -> list[str]:
    """The ids of this machine's processes whose command line holds ``marker`` (/proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if str(marker).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def _alive(pid: str) -> bool:
    """Whether process ``pid`` exists and is no zombie (a zombie's command line is empty,
    so ``_processes`` finds it only while it runs: its state is read here)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
