"""How long an event loop waits while ``asearch`` and ``aplan`` work in a worker thread.

    python benches/loop_stall.py [--rounds N] [--json]

A ticker coroutine sleeps 1 ms at a time and records how late each wake-up was, while a
fresh registry's first ``asearch`` (which builds the index, and embeds the catalogue when the
semantic extra is on) and a fresh surface's first ``aplan`` run on the real catalogue of 1,635
tools with each server declared as a group (what MCP sync does). The registries are made
before the ticker starts, as a host makes them at start-up. The longest lateness in a round is
what the host's loop stalled. Rounds alternate: the lexical path at the interval toolsurface
sets while it works (1 ms), the same at the interpreter's default (5 ms, as before), the
semantic path when the extra is installed, and "idle": the ticker alone for as long as the
round before it, the machine's own noise over the same time; and "any Python work": a worker
thread that only counts in Python for as long, at 1 ms, the floor any Python a host runs off
its loop costs that loop on this machine. Per setting: the median and the
worst over rounds of a round's longest stall, and the ticks later than 5 ms in all rounds.
Figures compare settings in one run, not absolute claims.
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
from toolsurface.retrieval.semantic import semantic_available

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLSURFACE_SHARED", ROOT.parent / "shared")) / "data"
QUERY = "list the open pull requests of the web repo"
LATE_MS = 5.0


def _registry(tools: list[Tool], semantic: bool) -> ToolRegistry:
    registry = ToolRegistry(tools, semantic=semantic)
    registry.register(tool_search_tool())
    for server in sorted({t.name.split("__")[0] for t in tools if "__" in t.name}):
        registry.declare_group(server, prefix=f"{server}__", dynamic=True)
    return registry


def _busy(seconds: float) -> None:
    """Python and nothing else, for ``seconds``: the floor of any work in a worker thread."""
    end = time.perf_counter() + seconds
    total = 0
    while time.perf_counter() < end:
        for i in range(100):
            total += i


async def _round(
    tools: list[Tool] | None, semantic: bool, idle_s: float, busy: bool = False
) -> tuple[list[float], float]:
    """Every tick's lateness in ms and the round's length in s: the work beside it, or not."""
    stop = asyncio.Event()
    late: list[float] = []
    if tools is not None:
        registry = _registry(tools, semantic)
        surface = ToolSurface(_registry(tools, semantic), provider="anthropic")

    async def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            late.append((now - last - 0.001) * 1e3)
            last = now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.005)
    began = time.perf_counter()
    if tools is not None:
        await registry.asearch(QUERY)
        await surface.aplan()
    elif busy:
        with switch_interval.switch_shortened():
            await asyncio.to_thread(_busy, idle_s)
    else:
        await asyncio.sleep(idle_s)
    length = time.perf_counter() - began
    stop.set()
    await ticker
    return late, length


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
    settings = [("lexical, 1 ms (toolsurface)", 0.001, False)]
    settings.append(("lexical, 5 ms (default)", 0.005, False))
    if semantic_available():
        settings.append(("semantic, 1 ms (toolsurface)", 0.001, True))
        asyncio.run(_round(tools, True, 0.0))  # loads the encoder once, outside the figures
    runs: dict[str, list[list[float]]] = {"idle": [], "any Python work, 1 ms": []}
    runs.update({name: [] for name, _, _ in settings})
    for _ in range(args.rounds):
        for name, interval, semantic in settings:
            switch_interval._INTERVAL = interval
            late, length = asyncio.run(_round(tools, semantic, 0.0))
            runs[name].append(late)
            runs["idle"].append(asyncio.run(_round(None, False, length))[0])
            if interval == 0.001:
                busy = asyncio.run(_round(None, False, length, busy=True))[0]
                runs["any Python work, 1 ms"].append(busy)
    switch_interval._INTERVAL = 0.001
    table = {
        name: {
            "median_ms": statistics.median(max(r) for r in rounds),
            "worst_ms": max(max(r) for r in rounds),
            "ticks_over_5ms": sum(t > LATE_MS for r in rounds for t in r),
            "ticks": sum(len(r) for r in rounds),
        }
        for name, rounds in runs.items()
    }
    if args.json:
        print(json.dumps(table, indent=2))
        return
    print(
        f"{'loop stall':<30} {'median ms':>10} {'worst ms':>10} {'ticks > 5 ms':>14}"
        f"   ({args.rounds} rounds)"
    )
    for name, row in table.items():
        over = f"{row['ticks_over_5ms']} of {row['ticks']}"
        print(f"{name:<30} {row['median_ms']:>10.2f} {row['worst_ms']:>10.2f} {over:>14}")


if __name__ == "__main__":
    main()
