"""The gateway's call lane: its requests on an upstream's transport, its answers off it.

The transport here is a pair of the SDK's in-memory streams with a scripted upstream on
the far end, so each test sets exactly what the upstream answers (a result, an error, a
late answer, nothing) and reads exactly what the gateway wrote.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra (pip install toolsurface[mcp])")

from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from toolsurface.gateway.lane import CallLane, LaneClosedError, UpstreamReplyError, WatchedStream

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

Upstream = Callable[[JSONRPCRequest], Awaitable[JSONRPCResponse | JSONRPCError | None]]


async def _with_upstream(
    answer: Upstream, body: Callable[[CallLane, WatchedStream, list[Any]], Awaitable[None]]
) -> list[Any]:
    """Run ``body`` against a lane whose upstream answers each request with ``answer``.

    Returns every message the gateway wrote, in order.
    """
    to_up_send, to_up_recv = anyio.create_memory_object_stream[SessionMessage](8)
    from_up_send, from_up_recv = anyio.create_memory_object_stream[Any](8)
    written: list[Any] = []
    lane = CallLane(to_up_send)
    ended: list[bool] = []
    watched = WatchedStream(from_up_recv, lambda: ended.append(True), lane)

    async def upstream() -> None:
        async with to_up_recv:
            async for item in to_up_recv:
                written.append(item.message)
                if isinstance(item.message, JSONRPCRequest):
                    reply = await answer(item.message)
                    if reply is not None:
                        await from_up_send.send(SessionMessage(reply))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(upstream)
        await body(lane, watched, ended)
        tasks.cancel_scope.cancel()
    return written


async def _pump(watched: WatchedStream, into: list[Any]) -> None:
    """The session's receive loop: whatever the lane does not take."""
    try:
        while True:
            into.append(await watched.receive())
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        pass


def test_a_call_goes_out_under_the_lanes_id_and_its_result_comes_back_as_sent() -> None:
    result = {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1}}

    async def answer(req: JSONRPCRequest) -> JSONRPCResponse:
        return JSONRPCResponse(jsonrpc="2.0", id=req.id, result=result)

    got: list[Any] = []
    session_saw: list[Any] = []

    async def body(lane: CallLane, watched: WatchedStream, ended: list[bool]) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_pump, watched, session_saw)
            got.append(await lane.call("get", {"id": "x"}))
            got.append(await lane.call("get", {"id": "y"}))
            tasks.cancel_scope.cancel()
        assert lane.pending == 0

    written = anyio.run(_with_upstream, answer, body)
    assert got == [result, result]
    assert [(m.id, m.method, m.params) for m in written] == [
        ("toolsurface-1", "tools/call", {"name": "get", "arguments": {"id": "x"}}),
        ("toolsurface-2", "tools/call", {"name": "get", "arguments": {"id": "y"}}),
    ]
    assert session_saw == []  # the lane's answers never reach the session


def test_answers_the_lane_did_not_ask_for_go_to_the_session() -> None:
    async def main() -> list[Any]:
        send, recv = anyio.create_memory_object_stream[Any](8)
        lane = CallLane(anyio.create_memory_object_stream[SessionMessage](8)[0])
        watched = WatchedStream(recv, lambda: None, lane)
        theirs = [
            SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=3, result={})),
            SessionMessage(JSONRPCResponse(jsonrpc="2.0", id="someone-else", result={})),
            SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/x")),
            ValueError("a line that did not parse"),
        ]
        for item in theirs:
            await send.send(item)
        send.close()
        seen: list[Any] = []
        await _pump(watched, seen)
        assert seen == theirs
        return seen

    anyio.run(main)


def test_an_error_reply_raises_the_upstreams_error_whatever_its_code() -> None:
    async def answer(req: JSONRPCRequest) -> JSONRPCError:
        # -32000 is also the SDK's CONNECTION_CLOSED: an upstream's reply is still its reply.
        error = ErrorData(
            code=CONNECTION_CLOSED, message="Unknown tool: nope", data={"tool": "nope"}
        )
        return JSONRPCError(jsonrpc="2.0", id=req.id, error=error)

    async def body(lane: CallLane, watched: WatchedStream, ended: list[bool]) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_pump, watched, [])
            with pytest.raises(UpstreamReplyError) as caught:
                await lane.call("nope", {})
            tasks.cancel_scope.cancel()
        assert (caught.value.code, caught.value.message) == (-32000, "Unknown tool: nope")
        assert not isinstance(caught.value, ConnectionError)
        assert caught.value.data == {"tool": "nope"}

    anyio.run(_with_upstream, answer, body)


def test_a_call_given_up_is_cancelled_upstream_and_its_late_answer_dropped() -> None:
    held: list[JSONRPCRequest] = []

    async def answer(req: JSONRPCRequest) -> None:
        held.append(req)  # no answer yet

    session_saw: list[Any] = []

    async def body(lane: CallLane, watched: WatchedStream, ended: list[bool]) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_pump, watched, session_saw)
            with anyio.move_on_after(0.2):
                await lane.call("slow", {})
            assert lane.pending == 0
            await anyio.sleep(0.05)
            # The upstream answers after all: the lane drops it, the session never sees it.
            late = JSONRPCResponse(jsonrpc="2.0", id=held[0].id, result={"content": []})
            assert lane.take(SessionMessage(late)) is True
            tasks.cancel_scope.cancel()

    written = anyio.run(_with_upstream, answer, body)
    assert [type(m).__name__ for m in written] == ["JSONRPCRequest", "JSONRPCNotification"]
    notice = written[1]
    assert notice.method == "notifications/cancelled"
    assert notice.params["requestId"] == written[0].id
    assert session_saw == []


def test_the_transport_ending_fails_every_waiting_call_as_closed() -> None:
    async def main() -> None:
        to_up_send, to_up_recv = anyio.create_memory_object_stream[SessionMessage](8)
        from_up_send, from_up_recv = anyio.create_memory_object_stream[Any](8)
        lane = CallLane(to_up_send)
        ended: list[bool] = []
        watched = WatchedStream(from_up_recv, lambda: ended.append(True), lane)
        errors: list[LaneClosedError] = []

        async def one(name: str) -> None:
            try:
                await lane.call(name, {})
            except LaneClosedError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(one, "a")
            tasks.start_soon(one, "b")
            await anyio.sleep(0.05)
            assert lane.pending == 2
            from_up_send.close()  # the child's stdout ended
            await _pump(watched, [])
        assert ended == [True]
        assert len(errors) == 2
        with pytest.raises(LaneClosedError):  # and a call after the end fails at once
            await lane.call("c", {})
        to_up_recv.close()

    anyio.run(main)


def test_a_transport_closed_under_the_write_is_a_closed_connection() -> None:
    async def main() -> None:
        send, recv = anyio.create_memory_object_stream[SessionMessage](0)
        recv.close()
        lane = CallLane(send)
        with pytest.raises(LaneClosedError):
            await lane.call("a", {})
        assert lane.pending == 0

    anyio.run(main)
