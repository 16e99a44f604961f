"""A forwarded call's own lane to its upstream, beside the SDK's client session.

The SDK's ``ClientSession.call_tool`` builds the request from its models, runs it through
its dispatcher (a span, a pending slot, a timeout clock), validates the result twice for
the negotiated version and once more against the tool's output schema, and hands back a
model the gateway then dumps again for its client: most of what a forwarded call costs the
gateway. On the lane, a ``tools/call`` goes out on the session's own transport (its write
stream) under a request id of the lane's own (a string starting ``toolsurface-``, which the
session, numbering its requests with integers, never uses), and its response is taken off
the transport's read stream (:class:`WatchedStream`) before the session would see it. The
result travels on as the JSON the upstream sent; the gateway validates it once, for the
protocol version of the client it answers (and against the tool's output schema where the
upstream declares one, as the session would).

Invariants: every response the lane did not ask for goes to the session untouched; a call
cancelled or timed out sends the upstream ``notifications/cancelled`` for its id, as the
session does; when the transport ends, every call waiting on the lane fails at once with
:class:`LaneLostMidCallError` (the call may have run), so the supervisor sees the loss at
once, while a call that found the transport already gone fails with :class:`LaneClosedError`
(it never ran); an error the upstream
answers is :class:`UpstreamReplyError`, whatever its code, so it is never taken for a loss.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from mcp import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

__all__ = [
    "CallLane",
    "LaneClosedError",
    "LaneLostMidCallError",
    "UpstreamReplyError",
    "WatchedStream",
]

_log = logging.getLogger("toolsurface.gateway")

#: What a transport raises when its connection is gone (beside MCPError CONNECTION_CLOSED).
CLOSED: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
)
#: The prefix of the lane's request ids: a string, so never one of the session's integers.
ID_PREFIX = "toolsurface-"
#: How long a cancellation notice may take to write before it is given up (seconds).
CANCEL_WRITE_TIMEOUT = 2.0


class UpstreamReplyError(MCPError):
    """The error an upstream answered a call with: its own, never a sign of a lost connection.

    (An upstream may answer any code, the SDK's ``CONNECTION_CLOSED`` among them: -32000, the
    first of JSON-RPC's server-error codes, is a common choice for a plain failure.)
    """


class LaneClosedError(ConnectionError):
    """The upstream's transport ended, or had ended, while a call needed it."""


class LaneLostMidCallError(LaneClosedError):
    """The transport ended after a call was sent and before it was answered: it may have run."""


_Outcome = dict[str, Any] | UpstreamReplyError | LaneClosedError


def _closed() -> LaneClosedError:
    return LaneClosedError("the upstream's connection is closed")


class _Waiter:
    """One call's slot: its outcome, set once, and the event its caller waits on."""

    __slots__ = ("done", "outcome")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.outcome: _Outcome | None = None

    def settle(self, outcome: _Outcome) -> None:
        """Hand the caller its outcome (never waits: :meth:`take` runs in the read loop)."""
        self.outcome = outcome
        self.done.set()


class CallLane:
    """``tools/call`` requests written on an upstream's transport, answered by :meth:`take`."""

    def __init__(self, write: Any) -> None:
        self._write = write
        self._ids = itertools.count(1)
        self._pending: dict[str, _Waiter] = {}
        self._ended = False

    @property
    def pending(self) -> int:
        """How many calls wait for their response."""
        return len(self._pending)

    async def call(
        self, name: str, arguments: Mapping[str, Any], *, progress_token: str | None = None
    ) -> dict[str, Any]:
        """Call ``name`` upstream (asking for progress under ``progress_token``); its result.

        Raises :class:`UpstreamReplyError` for the upstream's error reply and
        :class:`LaneClosedError` when the transport is gone.
        """
        if self._ended:
            raise _closed()
        rid = f"{ID_PREFIX}{next(self._ids)}"
        waiter = self._pending[rid] = _Waiter()
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        message = JSONRPCRequest(jsonrpc="2.0", id=rid, method="tools/call", params=params)
        try:
            try:
                # From here a write cut short may still have reached the upstream.
                await self._write.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise _closed() from None
            await waiter.done.wait()
        except BaseException:
            if self._pending.pop(rid, None) is not None and not self._ended:
                await self._cancel(rid)
            raise
        outcome = waiter.outcome
        if isinstance(outcome, Exception):
            raise outcome
        assert outcome is not None  # set before done
        return outcome

    async def _cancel(self, rid: str) -> None:
        """Tell the upstream a call it may be running was abandoned (best effort, bounded)."""
        notice = JSONRPCNotification(
            jsonrpc="2.0",
            method="notifications/cancelled",
            params={"requestId": rid, "reason": "the gateway's caller gave up"},
        )
        with anyio.move_on_after(CANCEL_WRITE_TIMEOUT, shield=True):
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._write.send(SessionMessage(notice))

    def take(self, item: object) -> bool:
        """Whether ``item`` (read off the transport) answered a call of the lane's."""
        if not isinstance(item, SessionMessage):
            return False
        message = item.message
        if not isinstance(message, JSONRPCResponse | JSONRPCError):
            return False
        rid = message.id
        if not isinstance(rid, str) or not rid.startswith(ID_PREFIX):
            return False
        waiter = self._pending.pop(rid, None)
        if waiter is None:  # a late answer to a call already given up: not the session's
            return True
        if isinstance(message, JSONRPCResponse):
            waiter.settle(message.result)
        else:
            error = message.error
            waiter.settle(UpstreamReplyError(error.code, error.message, error.data))
        return True

    def end(self) -> None:
        """The transport ended: every waiting call fails now, and later calls at once."""
        self._ended = True
        pending, self._pending = self._pending, {}
        for waiter in pending.values():  # each was sent, or was being sent: it may have run
            waiter.settle(
                LaneLostMidCallError("the upstream's connection was lost during the call")
            )


def _progress_params(item: object) -> Mapping[str, Any] | None:
    """The params of a ``notifications/progress`` read off the transport, else None."""
    if not isinstance(item, SessionMessage):
        return None
    message = item.message
    if isinstance(message, JSONRPCNotification) and message.method == "notifications/progress":
        return message.params or {}
    return None


class WatchedStream:
    """A transport's read stream as the session reads it: its end seen, the lane's answers kept.

    The session's receive loop reads through it, so the end of the child's stdout (the
    process exited) or of the HTTP stream is seen at once, not at the next ping or call,
    a response to one of the lane's calls goes to the lane instead of the session, and
    progress that ``on_progress`` takes (a lane call's) is passed on in order.
    """

    def __init__(
        self,
        inner: Any,
        on_end: Callable[[], None],
        lane: CallLane,
        on_progress: Callable[[Mapping[str, Any]], Awaitable[bool]] | None = None,
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._lane = lane
        self._on_progress = on_progress

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _ended(self) -> None:
        self._lane.end()
        self._on_end()

    async def receive(self) -> Any:
        """The next message for the session; the end of the stream is reported."""
        while True:
            try:
                item = await self._inner.receive()
            except BaseException as exc:
                if isinstance(exc, CLOSED):
                    self._ended()
                raise
            if self._lane.take(item):
                continue
            # Progress of a lane call is passed on here, in the order read: before the call's
            # response is (the session would run it in a task of its own, maybe after).
            hook = self._on_progress
            params = _progress_params(item) if hook is not None else None
            if params is not None and hook is not None and await hook(params):
                continue
            return item

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._ended()
        await self._inner.__aexit__(*exc)
