"""The streamable-HTTP GET stream of each session this process holds: the server's own news.

A client opens ``GET /mcp`` with its session id after ``initialize``; the gateway keeps the
response open as a server-sent event stream and pushes on it what no request asked for:
``notifications/tools/list_changed`` when an upstream came, went or changed its tools and
the session's list moved, ``resources/list_changed`` and ``prompts/list_changed``, and
``resources/updated`` of a subscribed resource. A stream lives in the process that serves
it (the process whose upstreams changed tells the streams it holds; every process watches
its own upstreams, so each stream hears of each change). A session has one stream: a
second GET replaces the first (MCP: a message goes on one stream only). A client that
does not read its stream is dropped once :data:`BUFFER` messages wait (it reconnects), so a
slow client never holds the gateway back; a comment line every :data:`KEEPALIVE` seconds
keeps proxies from closing an idle stream.

The stream is also the back-channel for an upstream's requests to the client (sampling,
elicitation, roots), which the stateless POST transport has none of: :meth:`ask` sends the
request on the session's stream under an id of the gateway's own, and the client's answer,
a POST of a JSON-RPC response, is handed to :meth:`answer` by the HTTP layer. The answer
must reach the process that asked (a process holds the streams it serves).

Each stream remembers the client (of a tokens file) whose request opened it, so that what
is pushed on it is what that client's policy admits (:meth:`client_of`).
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp import MCPError
from mcp_types import INVALID_REQUEST, REQUEST_TIMEOUT

from toolsurface.gateway.clients import Client

__all__ = ["ASK_TIMEOUT", "BUFFER", "KEEPALIVE", "EventStreams"]

_log = logging.getLogger("toolsurface.gateway")

#: Messages that may wait for a client before its stream is dropped.
BUFFER = 256
#: Seconds between keep-alive comments on an idle stream.
KEEPALIVE = 15.0
#: The longest wait for a client's answer to a request sent on its stream (seconds).
ASK_TIMEOUT = 600.0
#: The prefix of the ids of the requests the gateway sends on a stream.
ASK_PREFIX = "toolsurface-ask-"

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _event(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as a server-sent ``message`` event."""
    data = json.dumps(message, separators=(",", ":"))
    return f"event: message\ndata: {data}\n\n".encode()


class _Asked:
    """One request sent on a stream: the client's reply, and the event its asker waits on."""

    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.reply: dict[str, Any] = {}

    def settle(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.done.set()


class EventStreams:
    """The open GET streams of this process, by session id."""

    def __init__(self, *, keepalive: float = KEEPALIVE) -> None:
        self.keepalive = keepalive
        self._open: dict[str, MemoryObjectSendStream[bytes]] = {}
        #: The client whose request opened each stream (None: no tokens file).
        self._clients: dict[str, Client | None] = {}
        #: The requests sent on a stream and not answered yet: id to (session, slot).
        self._asked: dict[str, tuple[str, _Asked]] = {}
        self._ids = itertools.count(1)

    async def ask(
        self,
        session_id: str,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float = ASK_TIMEOUT,
    ) -> dict[str, Any]:
        """Send the session's client a request on its stream; its result.

        Raises ``MCPError``: the client's error answer, no stream, or no answer in time.
        """
        rid = f"{ASK_PREFIX}{next(self._ids)}"
        slot = _Asked()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self._asked[rid] = (session_id, slot)
        try:
            if not self.push(session_id, message):
                raise MCPError(
                    INVALID_REQUEST,
                    f"Cannot send {method!r}: the client's session has no GET stream open "
                    "on this gateway process to carry it",
                )
            with anyio.fail_after(timeout):
                await slot.done.wait()
        except TimeoutError:
            raise MCPError(
                REQUEST_TIMEOUT, f"{method!r}: the client did not answer in {timeout:g} s"
            ) from None
        finally:
            self._asked.pop(rid, None)
        reply = slot.reply
        error = reply.get("error")
        if isinstance(error, dict):
            raise MCPError(int(error.get("code", -32603)), str(error.get("message", "")))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def awaiting(self, session_id: str) -> bool:
        """Whether a request sent to this session's client waits for its answer."""
        return any(session == session_id for session, _ in self._asked.values())

    def answer(self, session_id: str, body: bytes) -> bool:
        """Whether a POST body is the session's answer to a request of ours (then taken)."""
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        rid = message.get("id")
        asked = self._asked.get(rid) if isinstance(rid, str) else None
        if asked is None or asked[0] != session_id:  # never another session's to answer
            return False
        asked[1].settle(message)
        return True

    def sessions(self) -> list[str]:
        """The sessions with a stream open here."""
        return list(self._open)

    def client_of(self, session_id: str) -> Client | None:
        """The client whose request opened the session's stream (None: none, or no stream)."""
        return self._clients.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._open

    def push(self, session_id: str, message: dict[str, Any]) -> bool:
        """Queue a JSON-RPC message on the session's stream; whether it has one that reads."""
        stream = self._open.get(session_id)
        if stream is None:
            return False
        try:
            stream.send_nowait(_event(message))
        except anyio.WouldBlock:  # the client stopped reading: drop it, it reconnects
            _log.warning("toolsurface gateway: session's GET stream is not read; closed")
            self._close(session_id, stream)
            return False
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._close(session_id, stream)
            return False
        return True

    def notify(self, session_id: str, method: str, params: dict[str, Any] | None = None) -> bool:
        """Queue a notification on the session's stream; whether it has one."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.push(session_id, message)

    def _close(self, session_id: str, stream: MemoryObjectSendStream[bytes]) -> None:
        if self._open.get(session_id) is stream:
            del self._open[session_id]
            self._clients.pop(session_id, None)
        stream.close()

    def close(self, session_id: str) -> None:
        """Close the session's stream (the session ended)."""
        stream = self._open.get(session_id)
        if stream is not None:
            self._close(session_id, stream)

    def close_all(self) -> None:
        """Close every stream (the gateway is stopping)."""
        for session_id in list(self._open):
            self.close(session_id)

    async def serve(
        self,
        session_id: str,
        receive: Receive,
        send: Send,
        headers: list[Any],
        client: Client | None = None,
    ) -> None:
        """Answer a GET: the session's event stream, until the client leaves or it is closed.

        ``client`` is the client whose request this is (what it may be told is its policy's).
        """
        sender, receiver = anyio.create_memory_object_stream[bytes](BUFFER)
        old = self._open.get(session_id)
        if old is not None:  # one stream per session: the newer wins
            self._close(session_id, old)
        self._open[session_id] = sender
        self._clients[session_id] = client
        head = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache, no-transform"),
            (b"x-accel-buffering", b"no"),
            *headers,
        ]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": head})
            await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
            async with anyio.create_task_group() as tasks:

                async def left() -> None:  # the client went away: stop writing
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tasks.cancel_scope.cancel()

                tasks.start_soon(left)
                async with receiver:
                    while True:
                        with anyio.move_on_after(self.keepalive):
                            try:
                                chunk = await receiver.receive()
                            except anyio.EndOfStream:
                                break
                            await send(
                                {"type": "http.response.body", "body": chunk, "more_body": True}
                            )
                            continue
                        await send(
                            {"type": "http.response.body", "body": b": ping\n\n", "more_body": True}
                        )
                with anyio.CancelScope(shield=True):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                tasks.cancel_scope.cancel()
        except OSError:  # the connection broke under a write
            pass
        finally:
            self._close(session_id, sender)
