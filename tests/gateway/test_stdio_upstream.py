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
import signal
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TextIO

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from toolsurface.gateway.stdio_upstream import _lines, stdio_upstream

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
        return [line async for line in _lines(receive)]

    expected = [b'{"a":1}', b'{"b":' + b"2" * 100_000 + b"}\r", b'{"c":3}']
    for cut in (1, 7, 4096, len(data)):
        assert anyio.run(run, cut) == expected, cut


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
