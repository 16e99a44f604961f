"""The gateway's stdio transport to an upstream (``gateway/stdio_upstream.py``).

Lines are assembled from the pipe's pieces once, whatever their length; a real server
answering a line of megabytes is read whole, as the SDK's own client reads it, and the
server is gone once the transport is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
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


Transport = Callable[[StdioServerParameters, TextIO], AbstractAsyncContextManager[Any]]


def _servers() -> list[str]:
    """The ids of this machine's processes running ``big_server.py`` (from /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if str(BIG).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found
