"""The gateway's stdio transport: the SDK's, with stdin and stdout served on the event loop.

The SDK's ``stdio_server`` reads every line and writes every message in a worker thread
(one hop to read a request, two to write its response and flush it). Here the same
``stdio_server`` runs over explicit streams: a non-blocking pipe read by the event loop
and one written by it, so a forwarded call crosses no thread on its way in or out. The
SDK parses and frames the messages as before.

What the SDK does when it claims the process's stdin and stdout is done here too: the
wire is served from private duplicates of fd 0 and fd 1, while fd 0 reads the null device
and fd 1 writes to stderr, so an upstream child or a stray ``print`` never touches the
wire; both are put back on the way out. Only pipes and sockets are served this way (a
terminal or a file falls back to the SDK's own threads, as does a non-POSIX system or an
event loop that is not asyncio's).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import anyio
from mcp.server.stdio import stdio_server

from toolsurface.gateway.fastpath import FastCalls

__all__ = ["serve_stdio_streams"]

#: The longest line read from stdin; a longer one is refused as one malformed message.
MAX_LINE = 256 * 1024 * 1024


class _Lines:
    """stdin as the SDK's reader iterates it: text lines, read by the event loop.

    A line ``take`` takes (the pass-through's) is not handed to the SDK.
    """

    def __init__(
        self, reader: asyncio.StreamReader, take: Callable[[bytes], bool] | None = None
    ) -> None:
        self._reader = reader
        self._take = take

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._line()
            if isinstance(line, str) or self._take is None or not self._take(line):
                return line if isinstance(line, str) else line.decode("utf-8", errors="replace")

    async def _line(self) -> bytes | str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end of stdin, maybe mid-line
            if not exc.partial:
                raise StopAsyncIteration from None
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            # Skip the rest of the line; what the SDK is handed does not parse, so it is
            # answered as any malformed message is.
            while True:
                await self._reader.readexactly(exc.consumed)
                try:
                    await self._reader.readuntil(b"\n")
                    break
                except asyncio.LimitOverrunError as more:
                    exc = more
                except asyncio.IncompleteReadError:
                    break
            return "<a line over the limit>\n"
        return line


class _Out:
    """stdout as the SDK's writer uses it: ``write`` buffers, ``flush`` waits for room."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        """Queue the text on the pipe (the transport writes what the pipe takes at once)."""
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        """Wait until the pipe has taken enough of what is queued (flow control)."""
        await self._writer.drain()

    async def line(self, text: str) -> None:
        """Write one whole line and flush it (a line is queued whole, so none interleave)."""
        await self.write(text)
        await self.flush()


def _servable(fd: int) -> bool:
    """Whether an fd is one the event loop can serve without a thread: a pipe or a socket."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextlib.asynccontextmanager
async def _claimed() -> AsyncIterator[tuple[int, int]]:
    """Private duplicates of fd 0 and fd 1 for the wire; fd 0 and fd 1 diverted meanwhile."""
    import fcntl

    sys.stdout.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        os.close(wire_in)
        raise
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.close(null)
        with contextlib.suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
            # The event loop made the pipes non-blocking, and the flag is the pipe's own.
            os.set_blocking(0, True)
            os.set_blocking(1, True)
        os.close(wire_in)
        os.close(wire_out)


@contextlib.asynccontextmanager
async def serve_stdio_streams(fast: FastCalls | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of MCP over this process's stdin and stdout.

    The event loop serves them when both are pipes or sockets on asyncio; otherwise this
    is the SDK's ``stdio_server()`` as it is. ``fast`` is offered every request line (see
    :mod:`toolsurface.gateway.fastpath`), on the event loop's streams only.
    """
    if sys.platform == "win32" or not _on_asyncio() or not (_servable(0) and _servable(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    async with _claimed() as (wire_in, wire_out):
        reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader),
            os.fdopen(wire_in, "rb", buffering=0, closefd=False),
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin,
            os.fdopen(wire_out, "wb", buffering=0, closefd=False),
        )
        # A flush waits until the pipe took all of it, as the SDK's blocking flush does, so
        # nothing is left queued when the transport closes (the fds are closed by _claimed).
        write_transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        out = _Out(writer)
        lines = _Lines(reader, fast.take if fast is not None else None)
        try:
            async with anyio.create_task_group() as tasks:
                if fast is not None:
                    fast.attach(tasks, out.line)
                async with stdio_server(stdin=cast(Any, lines), stdout=cast(Any, out)) as streams:
                    yield streams
                tasks.cancel_scope.cancel()  # the connection ended: so do the calls taken
        finally:
            if fast is not None:
                fast.attach(None, None)
            read_transport.close()
            write_transport.close()
