"""How long the gateway's event loop waits while an upstream's long answer is read.

    python benches/upstream_lines.py [--sizes 1,5,20] [--rounds 3] [--json]

A real stdio MCP server (``tests/gateway/big_server.py``) answers one tool call with a text
of each size in megabytes, one JSON-RPC line; the call is read through the MCP SDK's
``stdio_client`` and through the gateway's ``stdio_upstream``, alternated (which goes
first alternates too), each round in a fresh session. Meanwhile a ticker coroutine sleeps
1 ms at a time on the same loop and records how late each wake-up was, less the lateness
of an idle loop's wake-up (measured first): the lateness summed is the time the loop was
held from every other client of a gateway, the longest what one of them waited at once.
Per transport and size: the median over rounds of the call's time and of both stalls.
Figures compare the two transports in one run, not absolute claims.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters, stdio_client

from toolsurface.gateway.stdio_upstream import stdio_upstream

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "gateway" / "big_server.py"
Transport = Callable[[StdioServerParameters, TextIO], AbstractAsyncContextManager[Any]]
TRANSPORTS: dict[str, Transport] = {
    "sdk stdio_client": lambda p, log: stdio_client(p, errlog=log),
    "stdio_upstream": stdio_upstream,
}


async def idle_lateness(seconds: float = 0.5) -> float:
    """How late a 1 ms sleep of an idle loop wakes up, on average, in seconds."""
    ticks, late, end = 0, 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        await asyncio.sleep(0.001)
        late += time.perf_counter() - t0 - 0.001
        ticks += 1
    return late / ticks


async def one_call(
    transport: Transport, size: int, log: TextIO, idle: float
) -> tuple[float, float, float]:
    """The call's seconds, and the loop's longest stall and all its stalls, in seconds."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with transport(params, log) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        worst = stalled = 0.0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal worst, stalled
            while not done.is_set():
                t0 = time.perf_counter()
                await asyncio.sleep(0.001)
                late = max(time.perf_counter() - t0 - 0.001 - idle, 0.0)
                worst, stalled = max(worst, late), stalled + late

        ticking = asyncio.create_task(ticker())
        t0 = time.perf_counter()
        result = await session.call_tool("dump", {"size": size})
        took = time.perf_counter() - t0
        done.set()
        await ticking
        text = result.content[0].text  # type: ignore[union-attr]
        if len(text) != size:
            raise SystemExit(f"the server answered {len(text)} characters, not {size}")
        return took, worst, stalled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,5,20", help="megabytes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    got: dict[str, dict[int, list[tuple[float, float, float]]]] = {k: {} for k in TRANSPORTS}
    idle = asyncio.run(idle_lateness())
    with open(os.devnull, "w") as log:
        for mb in (int(x) for x in args.sizes.split(",")):
            for turn in range(args.rounds):
                names = list(TRANSPORTS)[:: 1 if turn % 2 == 0 else -1]
                for name in names:
                    row = asyncio.run(one_call(TRANSPORTS[name], mb * 1_000_000, log, idle))
                    got[name].setdefault(mb, []).append(row)
    out = {
        name: {
            mb: {
                "call_s": statistics.median(r[0] for r in rows),
                "stall_s": statistics.median(r[1] for r in rows),
                "stalled_s": statistics.median(r[2] for r in rows),
            }
            for mb, rows in sizes.items()
        }
        for name, sizes in got.items()
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name, sizes in out.items():
        for mb, m in sizes.items():
            print(
                f"{name:18} {mb:3d} MB  call {m['call_s']:7.3f} s  loop stalled "
                f"{m['stalled_s']:7.3f} s in all, {m['stall_s']:6.3f} s at the longest"
            )


if __name__ == "__main__":
    main()
