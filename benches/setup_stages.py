"""Where a large registry's set-up goes: register, declare server groups, learn, first search.

    python benches/setup_stages.py [--size 100000] [--servers per-tool|copies] [--no-collector]
                                   [--seed 7]

Sets a registry up as ``benches/host_search.py`` does (``speed.grow_catalogue`` above the
real 1,635 tools: with ``--servers per-tool``, the default, each synthetic tool has a server,
and a group, of its own; with ``--servers copies`` servers of the real ones' sizes; a group per
server declared as MCP sync does; one request learned for a tenth of the tools, words of
its own description reordered) and times each stage alone: a full collection and
``malloc_trim`` before and after each, outside its timer, so a stage pays only for the
collections its own allocations set off. Prints each stage's seconds and the resident
memory it added, the total, and how long one full collection takes with everything built
(the pause a host's process pays for each of the collector's full passes).

``--no-collector`` turns the cyclic collector off inside the stages: what the work itself
costs, without the collections. Needs ``../shared/data``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import SERVERS, grow_catalogue, learned_pairs, malloc_trim, rss_bytes

from toolsurface import ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups

_T = TypeVar("_T")
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def stage(name: str, work: Callable[[], _T], collector: bool) -> tuple[_T, float]:
    """Run ``work`` between two full collections; print and return its seconds."""
    gc.collect()
    malloc_trim()
    before = rss_bytes()
    if not collector:
        gc.disable()
    start = time.perf_counter()
    out = work()
    seconds = time.perf_counter() - start
    gc.enable()
    gc.collect()
    malloc_trim()
    print(f"  {name:<34} {seconds:6.2f} s  +{(rss_bytes() - before) / 2**20:7.1f} MB", flush=True)
    return out, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-collector", action="store_true")
    parser.add_argument("--servers", choices=SERVERS, default="per-tool")
    args = parser.parse_args()
    path = SHARED / "catalogue" / "mcp_tools.json"
    if not path.exists():
        sys.exit(f"needs the shared data: {path}")
    real = load_catalogue(path)[1]
    tools = grow_catalogue(real, args.size, 0.3, args.seed, args.servers)[: args.size]
    pairs = learned_pairs(tools, args.seed)
    collector = not args.no_collector
    print(f"{len(tools):,} tools, collector {'on' if collector else 'off'} in the stages")
    registry, total = stage("register the tools", lambda: ToolRegistry(tools), collector)
    for name, work in (
        ("declare server groups", lambda: declare_server_groups(registry)),
        ("learn hints", lambda: registry.learn_many(pairs)),
        ("first search", lambda: registry.search("send a message to the team channel")),
    ):
        total += stage(name, work, collector)[1]
    groups = len(registry.groups())
    print(f"  {'all':<34} {total:6.2f} s   ({groups:,} groups)")
    start = time.perf_counter()
    gc.collect()
    print(f"  one full collection afterwards      {time.perf_counter() - start:6.2f} s")


if __name__ == "__main__":
    main()
