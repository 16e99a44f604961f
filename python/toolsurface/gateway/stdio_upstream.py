"""An upstream MCP server over stdio, its lines read in time linear in their length.

The MCP SDK's stdio client joins a line's pieces as they arrive (the buffer so far plus the
next 64 KiB piece, split again), which is quadratic in the line's length, on the event
loop: a tool result of 20 MB (a log file read whole) held the gateway's event loop, every
client's, for seconds. Here the pieces are kept apart until the line ends and joined once.
A line is parsed on the loop, as the SDK parses it: pydantic-core holds the interpreter
while it parses, so a worker thread would free nothing. The rest is the SDK's: the same
environment, a process group of its own, the same messages on the same kind of streams
(a line that does not parse, or is not UTF-8, is an error on the read stream, logged), and
the shutdown MCP describes (stdin closed, a grace period, then the process group
terminated). On Windows, where the SDK spawns through a job object, the SDK's own client
is used.

Unlike the SDK's client, a line is bounded (``upstream_lines.py``): past the bound its
bytes are counted and dropped as they arrive, never held. An answer the line was is
answered to the session as an error for its request, so the call fails at once instead
of at its timeout; a request from the server the line was is answered to the server with
an error; either id is read from the line's start or end, where the MCP SDKs write it.
Lines that are no JSON-RPC message are logged a few at a time, not one warning a line.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator
from typing import Any, TextIO

import anyio
import anyio.abc
from mcp import StdioServerParameters, stdio_client, types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from toolsurface.gateway import upstream_lines
from toolsurface.gateway.upstream_lines import STREAM_GONE, Overlong, lines_of

__all__ = ["GRACE_SECONDS", "REFUSALS_WAITING_MAX", "TOO_LARGE", "stdio_upstream"]

_log = logging.getLogger("toolsurface.gateway")

#: How long a server has to exit once its stdin is closed, then again once its process
#: group is sent SIGTERM (after which it is killed): the SDK's figures.
GRACE_SECONDS = 2.0
#: How often the process is looked at while waiting for it to exit.
_POLL_SECONDS = 0.01
#: The ``reason`` in the data of the errors that answer for a dropped line: for an answer,
#: the gateway then tells the client the tool's answer was too large, not that the tool
#: failed; for a server's request, the server's error says the request was too large.
TOO_LARGE = "toolsurface/message-too-large"
#: Errors for a server's dropped requests waiting to be written at once; past it one is
#: dropped and logged, so a server that floods them without reading its stdin costs the
#: gateway no more than this many waiting sends.
REFUSALS_WAITING_MAX = 16
#: Lines that are no message, logged one by one before the rest are only counted, and how
#: often the count is logged: a server printing its log to stdout floods no log.
_JUNK_LOGGED = 5
_JUNK_EVERY_SECONDS = 60.0


class _JunkLog:
    """Logs lines that are no message: the first few each, then a count now and then."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.seen = 0
        self.unlogged = 0
        self.next_count = 0.0

    def flush(self) -> None:
        """Log the count of lines not logged yet (the connection is ending)."""
        if self.unlogged:
            self._count()

    def _count(self) -> None:
        _log.warning(
            "toolsurface gateway: upstream %s wrote %d more lines that are no JSON-RPC "
            "message (only the first %d are shown)",
            self.upstream,
            self.unlogged,
            _JUNK_LOGGED,
        )
        self.unlogged = 0
        self.next_count = time.monotonic() + _JUNK_EVERY_SECONDS

    def __call__(self, what: str, line: bytes) -> None:
        self.seen += 1
        if self.seen <= _JUNK_LOGGED:
            _log.warning("toolsurface gateway: upstream %s wrote %s: %r", self.upstream, what, line)
            if self.seen == _JUNK_LOGGED:
                self.next_count = time.monotonic() + _JUNK_EVERY_SECONDS
            return
        self.unlogged += 1
        if time.monotonic() >= self.next_count:
            self._count()


def _parse(line: bytes, junk: _JunkLog) -> SessionMessage | Exception:
    """One line as a message, or the error the session reports (as the SDK's client does).

    The error is logged with the line's start: a server printing to stdout is seen.
    """
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        junk("a line that is no JSON-RPC message", line[:120])
        return exc


def _too_large(what: str, line: Overlong, max_bytes: int) -> types.ErrorData:
    """The error that answers for a dropped line: what it was, its size and the limit."""
    return types.ErrorData(
        code=types.INTERNAL_ERROR,
        message=(
            f"{what} is {line.size:,} bytes, over the gateway's limit of {max_bytes:,} bytes "
            "for one message; nothing of it was passed on"
        ),
        data={"reason": TOO_LARGE, "bytes": line.size, "limit": max_bytes},
    )


def _overlong(
    line: Overlong, upstream: str, max_bytes: int
) -> tuple[SessionMessage | None, SessionMessage | None]:
    """The errors a dropped line is answered with: (for the session, for the server).

    The session's is for the call the line answers, the server's for the request the line
    is; ``None`` for either not due. Either way the drop is logged, naming the server and
    the line's size.
    """
    answered, asked = line.answered_id(), line.request_id()
    _log.warning(
        "toolsurface gateway: upstream %s wrote a line of %s bytes, over the gateway's "
        "limit of %s; it was dropped%s",
        upstream,
        f"{line.size:,}",
        f"{max_bytes:,}",
        (
            f" and request {answered!r} answered with an error"
            if answered is not None
            else f" and its request {asked!r} answered with an error"
            if asked is not None
            else ""
        ),
    )
    to_session = to_server = None
    if answered is not None:
        error = _too_large("the server's answer", line, max_bytes)
        to_session = SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=answered, error=error))
    elif asked is not None:
        error = _too_large("the request", line, max_bytes)
        to_server = SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=asked, error=error))
    return to_session, to_server


class _Refusals:
    """Sends a server the errors for its dropped requests, never waiting on one.

    Each is written by a task of its own, through the writer: a server not reading its
    stdin must not stop the reader reading its stdout. At most
    :data:`REFUSALS_WAITING_MAX` wait at once; past that one is dropped and logged.
    """

    def __init__(
        self,
        to_server: anyio.abc.ObjectSendStream[SessionMessage],
        tasks: anyio.abc.TaskGroup,
        upstream: str,
    ) -> None:
        self.to_server = to_server
        self.tasks = tasks
        self.upstream = upstream
        self.waiting = 0

    def send(self, refusal: SessionMessage) -> None:
        """Have ``refusal`` written to the server, or drop it if too many are waiting."""
        if self.waiting >= REFUSALS_WAITING_MAX:
            _log.warning(
                "toolsurface gateway: upstream %s is not reading its stdin: the error for "
                "its request %r was not sent",
                self.upstream,
                getattr(refusal.message, "id", None),
            )
            return
        self.waiting += 1
        self.tasks.start_soon(self._write, refusal)

    async def _write(self, refusal: SessionMessage) -> None:
        try:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self.to_server.send(refusal)
        finally:
            self.waiting -= 1


async def _count_at_end(
    lines: AsyncIterator[bytes | Overlong], junk: _JunkLog
) -> AsyncIterator[bytes | Overlong]:
    """``lines``, and the junk lines' count logged when they end, however they end."""
    try:
        async for line in lines:
            yield line
    finally:
        junk.flush()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the process exits within ``seconds``.

    Its return code is polled: waiting on it also waits for its pipes, which a child of the
    server that inherited them may hold.
    """
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(_POLL_SECONDS)
        return True
    return False


async def _stop(process: anyio.abc.Process) -> None:
    """Close the server's stdin, give it ``GRACE_SECONDS`` to exit, then end its group."""
    from mcp.os.posix.utilities import terminate_posix_process_tree

    if process.stdin is not None:
        with contextlib.suppress(*STREAM_GONE):
            await process.stdin.aclose()
    if not await _exited(process, GRACE_SECONDS):
        await terminate_posix_process_tree(process, GRACE_SECONDS)
        await _exited(process, GRACE_SECONDS)
    if process.stdout is not None:
        with contextlib.suppress(*STREAM_GONE):
            await process.stdout.aclose()
    _close_pipes(process)


def _close_pipes(process: anyio.abc.Process) -> None:
    """Close the process's pipes for good, as the SDK's client does.

    Closing anyio's stdout stream does not close the pipe, which a child of the server
    that inherited it may keep open: each connection would leak a descriptor and an
    unclosed transport. Nothing public reaches asyncio's subprocess transport, hence the
    attribute walk (no-op on other event loops).
    """
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):  # re-killing a setuid child, <= 3.12
            close()


@contextlib.asynccontextmanager
async def stdio_upstream(
    params: StdioServerParameters,
    errlog: TextIO,
    *,
    name: str | None = None,
    line_max_bytes: int | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The server ``params`` names, started, as the read and write streams of a session.

    A line (one message) longer than ``line_max_bytes`` (``upstream_lines.LINE_MAX_BYTES`` when
    not given) is dropped as it arrives: the call it answers, if any, fails with an error, and a
    request from the server it was is answered to the server with one. Logs call the
    server ``name`` (its command when not given).
    """
    upstream = repr(name) if name is not None else params.command
    max_bytes = upstream_lines.LINE_MAX_BYTES if line_max_bytes is None else line_max_bytes
    if sys.platform == "win32":  # pragma: no cover - the SDK's job objects
        async with stdio_client(params, errlog=errlog) as pair:
            yield pair
        return
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog,
        cwd=params.cwd,
        start_new_session=True,
    )
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    # The reader's own way to the server, through the writer (one writer to the pipe).
    to_server = write.clone()

    async def reader(refusals: _Refusals) -> None:
        assert process.stdout is not None
        delivering, junk = True, _JunkLog(upstream)
        async with to_session:
            async for line in _count_at_end(lines_of(process.stdout, max_bytes), junk):
                if not delivering:
                    continue  # read on to the end: a server blocked writing cannot exit
                message: SessionMessage | Exception | None
                if isinstance(line, Overlong):
                    message, refusal = _overlong(line, upstream, max_bytes)
                    if refusal is not None:
                        refusals.send(refusal)
                    if message is None:
                        continue
                else:
                    message = _parse(line, junk)
                try:
                    await to_session.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    delivering = False

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for outgoing in from_session:
                    text = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode() + b"\n")
        except STREAM_GONE:
            # The server stopped reading: the session sees its connection end rather
            # than wait for answers forever.
            await to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader, _Refusals(to_server, tasks, upstream))
        tasks.start_soon(writer)
        try:
            yield read, write
        finally:
            # Bounded waits only, and shielded: a cancelled caller never leaves a server
            # running.
            with anyio.CancelScope(shield=True):
                read.close()
                write.close()
                to_server.close()
                await _stop(process)
            tasks.cancel_scope.cancel()
