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
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

import anyio
import anyio.abc
from mcp import StdioServerParameters, stdio_client, types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

__all__ = ["GRACE_SECONDS", "stdio_upstream"]

_log = logging.getLogger("toolsurface.gateway")

#: How long a server has to exit once its stdin is closed, then again once its process
#: group is sent SIGTERM (after which it is killed): the SDK's figures.
GRACE_SECONDS = 2.0
#: How often the process is looked at while waiting for it to exit.
_POLL_SECONDS = 0.01

_GONE = (
    anyio.EndOfStream,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    ConnectionError,
    OSError,
)


def _parse(line: bytes, command: str) -> SessionMessage | Exception:
    """One line as a message, or the error the session reports (as the SDK's client does).

    The error is logged with the line's start: a server printing to stdout is seen.
    """
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        _log.warning(
            "toolsurface gateway: upstream %s wrote a line that is no JSON-RPC message: %r",
            command,
            line[:120],
        )
        return exc


async def _lines(stdout: anyio.abc.ByteReceiveStream) -> AsyncIterator[bytes]:
    """The stream's lines without their ends, each joined once from its pieces.

    Blank lines are left out, and a last line without an end is not a line.
    """
    pieces: list[bytes] = []
    while True:
        try:
            chunk = await stdout.receive()
        except _GONE:
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pieces.append(chunk[start:end])
            line = b"".join(pieces)
            pieces = []
            start = end + 1
            if line and not line.isspace():  # no copy of a long line, as strip() makes
                yield line
        if start < len(chunk):
            pieces.append(chunk[start:])


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
        with contextlib.suppress(*_GONE):
            await process.stdin.aclose()
    if not await _exited(process, GRACE_SECONDS):
        await terminate_posix_process_tree(process, GRACE_SECONDS)
        await _exited(process, GRACE_SECONDS)
    if process.stdout is not None:
        with contextlib.suppress(*_GONE):
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
    params: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[tuple[Any, Any]]:
    """The server ``params`` names, started, as the read and write streams of a session."""
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

    async def reader() -> None:
        assert process.stdout is not None
        delivering = True
        async with to_session:
            async for line in _lines(process.stdout):
                if not delivering:
                    continue  # read on to the end: a server blocked writing cannot exit
                try:
                    await to_session.send(_parse(line, params.command))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    delivering = False

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for outgoing in from_session:
                    text = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode() + b"\n")
        except _GONE:
            # The server stopped reading: the session sees its connection end rather
            # than wait for answers forever.
            await to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        try:
            yield read, write
        finally:
            # Bounded waits only, and shielded: a cancelled caller never leaves a server
            # running.
            with anyio.CancelScope(shield=True):
                read.close()
                write.close()
                await _stop(process)
            tasks.cancel_scope.cancel()
