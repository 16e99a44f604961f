"""How long ``search_many`` keeps another Python thread waiting for the GIL.

    python benches/gil.py [--catalogue FILE] [--queries FILE] [--repeat N] [--k K] [--json]

A second thread ticks every millisecond (``time.sleep(0.001)``, which releases the GIL)
while the main thread runs ``ToolRegistry.search_many`` over a large batch: the BFCL
requests (2,061) repeated ``--repeat`` times, against the real MCP catalogue. A tick late
by more than its millisecond was waiting for the GIL; the longest such wait is what a
host's event loop or web server thread would see as a stall. Both search paths are run:
the registry's searcher (no admitted set) and the filtered index (``admitted=``). Reported
per path: the median and the worst over rounds of the longest wait, and the median batch
time; beside them, the longest wait of the ticking thread with nothing else running (the
machine's own noise). Figures are for comparing builds in one place, not absolute claims.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from toolsurface.catalogue import load_catalogue
from toolsurface.registry import ToolRegistry

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLSURFACE_SHARED", ROOT.parent / "shared")) / "data"


class Ticker:
    """A thread that sleeps 1 ms at a time and records how late each wake-up was."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.001)
            last = now

    def __enter__(self) -> Ticker:
        self._thread.start()
        time.sleep(0.01)  # let it start ticking
        self.worst = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def under_ticks(fn: Callable[[], object]) -> tuple[float, float]:
    """(longest wait of the ticking thread, seconds of ``fn``), both in milliseconds."""
    with Ticker() as ticker:
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        worst = ticker.worst
    return worst * 1000, took * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "catalogue" / "bfcl_queries.json"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    registry = ToolRegistry(tools)
    rows = json.loads(Path(args.queries).read_text("utf-8"))
    queries = [r["query"] for r in rows] * args.repeat
    admitted = registry.names()
    paths: dict[str, Callable[[], object]] = {
        "searcher": lambda: registry.search_many(queries, k=args.k),
        "admitted=": lambda: registry.search_many(queries, k=args.k, admitted=admitted),
    }
    for fn in paths.values():
        fn()  # warm: the index, the searcher and the filter are built once
    idle = [under_ticks(lambda: time.sleep(0.3))[0] for _ in range(3)]
    report: dict[str, object] = {
        "queries": len(queries),
        "k": args.k,
        "idle: longest wait (ms)": round(max(idle), 2),
    }
    for name, fn in paths.items():
        waits, times = zip(*(under_ticks(fn) for _ in range(args.rounds)), strict=True)
        report[name] = {
            "longest wait, median (ms)": round(statistics.median(waits), 2),
            "longest wait, worst (ms)": round(max(waits), 2),
            "batch, median (ms)": round(statistics.median(times), 1),
        }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for what, value in report.items():
        if isinstance(value, dict):
            print(what)
            for label, figure in value.items():
                print(f"  {label:<28} {figure:10}")
        else:
            print(f"{what:<30} {value}")


if __name__ == "__main__":
    main()
