"""Native against pure, per query, on the real catalogue, in one run.

    python benches/engines.py [--catalogue FILE] [--queries FILE] [--rounds N]

Prints the median time per query of each engine for English and Russian requests and the
ratio (pure / native): a ratio measured in one run is the only speed claim that survives a
shared, noisy machine. Needs the native core built (pip install .).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from toolsurface.catalogue import load_catalogue
from toolsurface.registry import ToolRegistry

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def per_query_seconds(registry: ToolRegistry, queries: list[str], rounds: int) -> list[float]:
    """Median seconds of each query over ``rounds`` timed runs, after one warm-up."""
    for q in queries:
        registry.search(q, k=10)
    out = []
    for q in queries:
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            registry.search(q, k=10)
            times.append(time.perf_counter() - t0)
        out.append(statistics.median(times))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    rows = [json.loads(x) for x in Path(args.queries).read_text("utf-8").splitlines() if x.strip()]
    by_lang: dict[str, list[str]] = {}
    for r in rows:
        by_lang.setdefault(r.get("lang", "en"), []).append(r["query"])
    results = {}
    registries = {}
    for engine in ("pure", "native"):
        t0 = time.perf_counter()
        reg = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
        reg.search("warm up", k=1)
        registries[engine] = (reg, time.perf_counter() - t0)
    for lang, queries in sorted(by_lang.items()):
        med = {}
        for engine, (reg, _) in registries.items():
            med[engine] = statistics.median(per_query_seconds(reg, queries, args.rounds))
        results[lang] = {
            "queries": len(queries),
            "pure_us": round(med["pure"] * 1e6, 1),
            "native_us": round(med["native"] * 1e6, 1),
            "ratio": round(med["pure"] / med["native"], 1),
        }
    build = {e: round(s, 3) for e, (_, s) in registries.items()}
    if args.json:
        print(json.dumps({"tools": len(tools), "build_s": build, "per_query": results}, indent=2))
        return
    print(
        f"{len(tools)} tools; index build + first query: pure {build['pure']} s, "
        f"native {build['native']} s"
    )
    print(f"{'lang':>5} {'queries':>8} {'pure µs':>10} {'native µs':>10} {'pure/native':>12}")
    for lang, r in results.items():
        print(
            f"{lang:>5} {r['queries']:>8} {r['pure_us']:>10} {r['native_us']:>10} {r['ratio']:>11}x"
        )


if __name__ == "__main__":
    main()
