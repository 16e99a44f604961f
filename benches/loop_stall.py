"""How long an event loop waits while ``asearch`` and ``aplan`` work in a worker thread.

    python benches/loop_stall.py [--rounds N] [--json]

A ticker coroutine sleeps 1 ms at a time and records how late each wake-up was, while a
fresh registry's first ``asearch`` (which builds the index) and a fresh surface's first
``aplan`` run on the real catalogue of 1,635 tools with each server declared as a group (what
MCP sync does). The longest lateness in a round is what the host's loop stalled. Rounds
alternate between the interval toolsurface sets while it works (1 ms) and the interpreter's
default (5 ms, as before), so both see the same machine; beside them, the ticker's longest
lateness with nothing else running (the machine's own noise). Per setting: the median and
the worst over rounds. Figures compare settings in one run, not absolute claims.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface._internal import switch_interval
from toolsurface.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLSURFACE_SHARED", ROOT.parent / "shared")) / "data"
QUERY = "list the open pull requests of the web repo"


def _registry(tools: list[Tool]) -> ToolRegistry:
    registry = ToolRegistry(tools)
    registry.register(tool_search_tool())
    for server in sorted({t.name.split("__")[0] for t in tools if "__" in t.name}):
        registry.declare_group(server, prefix=f"{server}__", dynamic=True)
    return registry


async def _longest_late(work: bool, tools: list[Tool]) -> float:
    """The ticker's longest lateness in ms, with the work running beside it or not."""
    stop = asyncio.Event()
    late = [0.0]

    async def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            late.append(now - last - 0.001)
            last = now

    ticker = asyncio.create_task(tick())
    if work:
        registry = await asyncio.to_thread(_registry, tools)
        surface_registry = await asyncio.to_thread(_registry, tools)
        await asyncio.sleep(0.005)
        await registry.asearch(QUERY)
        await ToolSurface(surface_registry, provider="anthropic").aplan()
    else:
        await asyncio.sleep(0.2)
    stop.set()
    await ticker
    return max(late) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = SHARED / "catalogue" / "mcp_tools.json"
    if not path.exists():
        sys.exit(f"needs the real catalogue at {path} (TOOLSURFACE_SHARED names its folder)")
    tools = load_catalogue(path)[1]
    sys.setswitchinterval(0.005)
    runs: dict[str, list[float]] = {"idle": [], "1 ms (toolsurface)": [], "5 ms (default)": []}
    for _ in range(args.rounds):
        runs["idle"].append(asyncio.run(_longest_late(False, tools)))
        for name, interval in (("1 ms (toolsurface)", 0.001), ("5 ms (default)", 0.005)):
            switch_interval._INTERVAL = interval
            runs[name].append(asyncio.run(_longest_late(True, tools)))
    switch_interval._INTERVAL = 0.001
    table = {
        name: {"median_ms": statistics.median(v), "worst_ms": max(v)} for name, v in runs.items()
    }
    if args.json:
        print(json.dumps(table, indent=2))
        return
    print(f"{'loop stall':<22} {'median ms':>10} {'worst ms':>10}   ({args.rounds} rounds)")
    for name, row in table.items():
        print(f"{name:<22} {row['median_ms']:>10.2f} {row['worst_ms']:>10.2f}")


if __name__ == "__main__":
    main()
