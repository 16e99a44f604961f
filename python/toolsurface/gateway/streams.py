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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

__all__ = ["BUFFER", "KEEPALIVE", "EventStreams"]

_log = logging.getLogger("toolsurface.gateway")

#: Messages that may wait for a client before its stream is dropped.
BUFFER = 256
#: Seconds between keep-alive comments on an idle stream.
KEEPALIVE = 15.0

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _event(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as a server-sent ``message`` event."""
    data = json.dumps(message, separators=(",", ":"))
    return f"event: message\ndata: {data}\n\n".encode()


class EventStreams:
    """The open GET streams of this process, by session id."""

    def __init__(self, *, keepalive: float = KEEPALIVE) -> None:
        self.keepalive = keepalive
        self._open: dict[str, MemoryObjectSendStream[bytes]] = {}

    def sessions(self) -> list[str]:
        """The sessions with a stream open here."""
        return list(self._open)

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
        self, session_id: str, receive: Receive, send: Send, headers: list[Any]
    ) -> None:
        """Answer a GET: the session's event stream, until the client leaves or it is closed."""
        sender, receiver = anyio.create_memory_object_stream[bytes](BUFFER)
        old = self._open.get(session_id)
        if old is not None:  # one stream per session: the newer wins
            self._close(session_id, old)
        self._open[session_id] = sender
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
