"""The search a host calls, as a host calls it, against the core call alone and the peers.

    python benches/host_search.py [--sizes 1635,10000,100000] [--per-lang 200] [--rounds 5]
                                  [--peers bm25_turbo,bm25s,tantivy] [--pure-max N] [--json OUT]
                                  [--servers per-tool|copies]

The registry is set up as an MCP host leaves it: one group per server declared with its
aliases (``evaluation.declare_server_groups``, what MCP sync does), the servers' read-only
hints on, and learned hints taught (one request per tool for a tenth of the catalogue, words
of its own description reordered: the learned field is indexed and searched, as on a host
that learns). Per catalogue size (``speed.grow_catalogue`` above the real 1,635 tools; each
synthetic tool a server of its own, or with ``--servers copies`` servers of the real ones'
sizes) and per request (``--per-lang`` English and Russian requests of dev.jsonl, a fixed sample),
interleaved in shuffled order, the collector paused, median of ``--rounds`` runs:

- ``public``: ``registry.search(query)``, the default API (on the native engine the
  ``PlainSearch`` method, which answers a plain call without a Python frame);
- ``method``: the Python method ``ToolRegistry.search`` on the same registry (the public
  search before ``PlainSearch``; its hot path makes the same checks in Python);
- ``core (rules)``: the native call that search makes, the bound searcher with the
  registry's boost rules (mentions, questions) found and applied inside it;
- ``core (plain)``: a searcher of the same index without rules (no boost at all), the
  cheapest call the engine answers;
- each peer of ``benches/peers.py`` that imports (``bm25_turbo``, ``bm25s``, ``tantivy``),
  built on its recommended text;
- ``pure``: the same public search on the pure engine (fewer requests above 1,635 tools).

Each system's build (ours: registering the tools, declaring the groups, teaching the hints
and building the index; a peer: its tokenising and index, from text made beforehand) is
timed, and the resident memory it adds is read after the collector and glibc's
``malloc_trim`` (systems built one after another in this process: a rough figure, but one
that sees Rust, C++ and Python alike; a later build reuses what an earlier one freed). So
each system is also built alone in a fresh process, twice, and the median of what its build
adds there is the memory figure to compare (``fresh_memory``). The pure engine is left out
above ``--pure-max`` tools (its build and search take minutes there).

Printed: build seconds and memory per system, p50 and p99 per system and language, the
per-request ratio medians (public over core; each peer over public: above 1, ours is
faster), native over pure, and the batch:
``search_many`` of all requests with the process on one core, then on two (child processes
pinned to their cores, the engine's pool sized to them; the throughput ratio), then the
memory each build adds in a fresh process and ours over each peer's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import LEXICAL_PEERS, Peer, peer_text
from speed import (
    SERVERS,
    grow_catalogue,
    learned_pairs,
    malloc_trim,
    percentile,
    pick_queries,
    rss_bytes,
)

from toolsurface import ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups
from toolsurface.models import SearchHit, Tool, scoring_args

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def host_registry(tools: Sequence[Tool], engine: str, seed: int) -> ToolRegistry:
    """A registry as an MCP host leaves it: server groups declared, hints learned."""
    registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    declare_server_groups(registry)
    registry.learn_many(learned_pairs(tools, seed))
    registry.search("warm up")  # the index and the bound searcher made outside any timer
    registry.search("warm up")
    return registry


class _Call:
    """A system to time: ``search(query, k)``."""

    def __init__(self, search: Callable[[str, int], Any]) -> None:
        self.search = search


def plain_core(registry: ToolRegistry) -> _Call:
    """A searcher of the registry's index with no boost rules: the cheapest engine call."""
    built = registry._current()
    index: Any = built.index
    weights, b, k1, ew = scoring_args(registry.settings)
    bound = index.searcher(list(built.names), SearchHit, weights, b, k1, ew, registry._lexicon)
    return _Call(bound.search)


def ruled_core(registry: ToolRegistry) -> _Call:
    """The bound searcher a plain ``search`` calls (its boost rules inside)."""
    fast = registry._fast
    if fast is None:
        raise RuntimeError("the registry has no bound searcher yet")
    return _Call(fast[4].search)


def timed(
    systems: dict[str, Any], queries: list[str], rounds: int, seed: int
) -> dict[str, list[float]]:
    """Per system, per request: the median of ``rounds`` runs, interleaved in turns.

    The first system to search a request pays for bringing its postings into the cache
    (several microseconds: the others find them there), so the systems take the first
    place in turn: each request's order is shuffled once, then rotated by one each round,
    and over ``rounds`` a multiple of the systems' count each system searches each request
    first equally often (a shuffle per round had one system first in 10 of 15 rounds for
    some requests, which then made its p99).
    """
    for s in systems.values():
        for q in queries:
            s.search(q, 10)
    times: dict[str, list[list[float]]] = {k: [[] for _ in queries] for k in systems}
    rng = random.Random(seed)
    orders = []
    for _ in queries:
        order = list(systems)
        rng.shuffle(order)
        orders.append(order)
    perf = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        for turn in range(rounds):
            for qi, q in enumerate(queries):
                order = orders[qi]
                at = turn % len(order)
                for key in order[at:] + order[:at]:
                    search = systems[key].search
                    t0 = perf()
                    search(q, 10)
                    times[key][qi].append(perf() - t0)
    finally:
        gc.enable()
    return {k: [statistics.median(ts) for ts in v] for k, v in times.items()}


def ratio(a: list[float], b: list[float]) -> float:
    """The median over requests of ``a / b``."""
    return statistics.median(x / y for x, y in zip(a, b))


def batch_qps(registry: ToolRegistry, queries: list[str], rounds: int) -> float:
    """The best of ``rounds`` throughputs of one ``search_many`` over the requests 8 times."""
    work = queries * 8
    registry.search_many(work[:200], k=10)  # warm
    best = 0.0
    for _ in range(rounds):
        t0 = time.perf_counter()
        registry.search_many(work, k=10)
        best = max(best, len(work) / (time.perf_counter() - t0))
    return best


def batch_scaling(size: int, args: argparse.Namespace) -> dict[str, float]:
    """``search_many`` throughput with the process on one core, and on two.

    ``search_many`` already spreads one batch over the engine's thread pool, so splitting a
    batch over two host threads measures nothing on a two-core machine: each child process
    here is pinned to its cores (and the pool sized to them) and builds the same registry;
    children alternate 1, 2, 1, 2 and the ratio is of the medians.
    """
    if len(os.sched_getaffinity(0)) < 2:
        return {}
    got: dict[int, list[float]] = {1: [], 2: []}
    for cores in (1, 2, 1, 2):
        flags = [
            "--per-lang",
            str(args.per_lang),
            "--rounds",
            str(args.rounds),
            "--seed",
            str(args.seed),
        ]
        child = subprocess.run(
            [sys.executable, __file__, "--batch-child", str(size), str(cores), *flags],
            env={**os.environ, "RAYON_NUM_THREADS": str(cores)},
            capture_output=True,
            text=True,
            check=True,
        )
        got[cores].append(float(child.stdout.split()[-1]))
    one, two = statistics.median(got[1]), statistics.median(got[2])
    return {"one_core_qps": one, "two_cores_qps": two, "ratio": two / one}


def batch_child(size: int, cores: int, args: argparse.Namespace) -> None:
    """The child of ``batch_scaling``: pinned to ``cores`` cores, prints its throughput."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
    tools, queries = inputs(size, args)
    registry = host_registry(tools, "native", args.seed)
    print(batch_qps(registry, queries["en"] + queries["ru"], args.rounds))


def fresh_memory(size: int, args: argparse.Namespace) -> dict[str, float]:
    """The resident memory each system's build adds, each built alone in a fresh process.

    In one process a system's figure depends on what the ones before it freed (glibc hands
    freed memory to the next build); here each child loads the same inputs, then measures
    one build between two reads (after the collector and ``malloc_trim``). Children run
    ours, then each peer, twice over; the median of the two is kept.
    """
    systems = ["ours", *[p for p in args.peers.split(",") if p]]
    got: dict[str, list[float]] = {key: [] for key in systems}
    for _ in range(2):
        for key in systems:
            flags = ["--seed", str(args.seed), "--servers", args.servers, "--per-lang", "1"]
            child = subprocess.run(
                [sys.executable, __file__, "--memory-child", str(size), key, *flags],
                capture_output=True,
                text=True,
            )
            if child.returncode == 0:
                got[key].append(float(child.stdout.split()[-1]))
    return {key: statistics.median(v) for key, v in got.items() if v}


def memory_child(size: int, key: str, args: argparse.Namespace) -> None:
    """The child of ``fresh_memory``: builds ``key`` and prints the MB its build added."""
    tools, _ = inputs(size, args)
    names = [t.name for t in tools]
    texts = [peer_text(t) for t in tools] if key != "ours" else []
    peer = LEXICAL_PEERS[key]() if key != "ours" else None
    gc.collect()
    malloc_trim()
    before = rss_bytes()
    if peer is None:
        made: Any = host_registry(tools, "native", args.seed)
    else:
        peer.build(names, texts, tools)
        made = peer
    gc.collect()
    malloc_trim()
    print((rss_bytes() - before) / 2**20)
    del made


def inputs(size: int, args: argparse.Namespace) -> tuple[list[Tool], dict[str, list[str]]]:
    """The catalogue of ``size`` tools and the requests, the same in every process."""
    catalogue = SHARED / "catalogue" / "mcp_tools.json"
    dev = SHARED / "queries" / "dev.jsonl"
    if not catalogue.exists() or not dev.exists():
        sys.exit(f"needs the shared data: {catalogue} and {dev}")
    real = load_catalogue(catalogue)[1]
    tools = (
        list(real)
        if size <= len(real)
        else grow_catalogue(real, size, 0.3, args.seed, args.servers)
    )
    return tools[:size], pick_queries(dev, args.per_lang, args.seed)


def run_size(
    tools: list[Tool], queries: dict[str, list[str]], args: argparse.Namespace
) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": len(tools), "build": {}}

    def built(key: str, make: Callable[[], Any]) -> Any:
        gc.collect()
        malloc_trim()
        before, t0 = rss_bytes(), time.perf_counter()
        made = make()
        seconds = time.perf_counter() - t0
        gc.collect()
        malloc_trim()
        out["build"][key] = {"seconds": seconds, "rss_mb": (rss_bytes() - before) / 2**20}
        return made

    registry = built("ours", lambda: host_registry(tools, "native", args.seed))
    systems: dict[str, Any] = {
        "public": registry,
        "method": _Call(types.MethodType(ToolRegistry.search, registry)),
        "core (rules)": ruled_core(registry),
        "core (plain)": plain_core(registry),
    }
    names = [t.name for t in tools]
    texts = [peer_text(t) for t in tools]
    for key in [p for p in args.peers.split(",") if p]:
        try:
            peer: Peer = LEXICAL_PEERS[key]()

            def make(peer: Peer = peer) -> Peer:
                peer.build(names, texts, tools)
                return peer

            built(key, make)
            peer.warm_up()
        except Exception as exc:  # a peer that is not installed is listed, never silent
            out.setdefault("skipped", {})[key] = f"{type(exc).__name__}: {exc}"
            continue
        systems[key] = peer
    pure = host_registry(tools, "pure", args.seed) if len(tools) <= args.pure_max else None
    for lang, qs in queries.items():
        got = timed(systems, qs, args.rounds, args.seed)
        pure_t = None
        if pure is not None:
            few = qs[: max(20, len(qs) // (1 if len(tools) <= 2000 else 5))]
            pure_t = timed({"pure": pure, "public": registry}, few, 1, args.seed)
        row: dict[str, Any] = {
            k: {"p50_us": percentile(v, 50) * 1e6, "p99_us": percentile(v, 99) * 1e6}
            for k, v in got.items()
        }
        row["ratios"] = {
            "public/core (rules)": ratio(got["public"], got["core (rules)"]),
            "public/core (plain)": ratio(got["public"], got["core (plain)"]),
            **{
                f"{k}/public": ratio(got[k], got["public"])
                for k in systems
                if k not in ("public", "core (rules)", "core (plain)")
            },
            **{
                f"{k}/public p99": percentile(got[k], 99) / percentile(got["public"], 99)
                for k in systems
                if k not in ("public", "core (rules)", "core (plain)")
            },
        }
        if pure_t is not None:
            row["ratios"]["pure/native"] = ratio(pure_t["pure"], pure_t["public"])
        out[lang] = row
    out["batch"] = batch_scaling(len(tools), args)
    out["fresh_memory_mb"] = fresh_memory(len(tools), args)
    return out


def show(result: dict[str, Any]) -> None:
    print(f"\n== {result['tools']:,} tools (server groups declared, learned hints on)")
    for key, b in result["build"].items():
        print(f"  build {key:<12} {b['seconds']:7.2f} s   +{b['rss_mb']:7.1f} MB resident")
    for lang in ("en", "ru"):
        row = result[lang]
        print(f"  {lang}:")
        for key, v in row.items():
            if key != "ratios":
                print(f"    {key:<14} p50 {v['p50_us']:8.1f} µs   p99 {v['p99_us']:8.1f} µs")
        for key, v in row["ratios"].items():
            print(f"    {key:<26} {v:6.2f}x")
    b = result["batch"]
    if b:
        print(
            f"  search_many: one core {b['one_core_qps']:,.0f} q/s, two cores "
            f"{b['two_cores_qps']:,.0f} q/s ({b['ratio']:.2f}x)"
        )
    fresh = result.get("fresh_memory_mb", {})
    if fresh:
        each = ", ".join(f"{key} +{mb:.1f} MB" for key, mb in fresh.items())
        print(f"  memory, each built alone in a fresh process: {each}")
        for peer in [k for k in fresh if k != "ours" and fresh[k] > 0 and "ours" in fresh]:
            print(f"    ours / {peer:<20} {fresh['ours'] / fresh[peer]:6.2f}x")
    for key, why in result.get("skipped", {}).items():
        print(f"  skipped {key}: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1635,10000")
    parser.add_argument("--per-lang", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", default="bm25_turbo,bm25s,tantivy")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--servers", choices=SERVERS, default="per-tool")
    parser.add_argument("--pure-max", type=int, default=10_000)
    parser.add_argument("--json")
    parser.add_argument("--batch-child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.batch_child:
        batch_child(*args.batch_child, args)
        return
    if args.memory_child:
        memory_child(int(args.memory_child[0]), args.memory_child[1], args)
        return
    report = []
    for size in (int(s) for s in args.sizes.split(",")):
        tools, queries = inputs(size, args)
        result = run_size(tools, queries, args)
        show(result)
        report.append(result)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), "utf-8")


if __name__ == "__main__":
    main()
