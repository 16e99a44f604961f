"""What an unchanged plan costs as the catalogue and its groups grow.

    python benches/plan.py [--sizes 10000,100000] [--groups 5,500] [--rounds 7] [--json]

For each size it registers a synthetic catalogue (``ToolSearch``, tools named
``gNNN__verb_noun_I`` spread evenly over the prefix groups ``gNNN__``, of which four in five
are lazy and so held back while ToolSearch is live, and eight tools whose own ``group``
field names the lazy group ``extra``) and, for each group count, plans once, loads
``extra`` whole and selects two held-back tools through ToolSearch, plans again, and then
times ``ToolSurface.plan()`` with nothing changed: the median of ``--rounds`` plans. The
ratio printed is the unchanged plan with the most groups over the one with the fewest, at
the same size, in the same run: a plan should cost what changed, not tools x groups.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.groups import LoadMode

VERBS = ("get", "list", "create", "update", "delete", "search", "send", "read")
NOUNS = ("issue", "file", "message", "user", "record", "page", "event", "task", "report")


def catalogue(size: int, groups: int) -> list[Tool]:
    """``size`` tools over ``groups`` prefix groups, with ToolSearch first."""
    tools = [tool_search_tool()]
    for i in range(size):
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        tools.append(
            Tool(
                name=f"g{i % groups:03d}__{verb}_{noun}_{i}",
                description=f"{verb.capitalize()} a {noun} in service {i % groups}.",
                input_schema={
                    "type": "object",
                    "properties": {"id": {"type": "string", "description": f"The {noun}."}},
                },
            )
        )
    # A small group of the tools' own ``group`` field, the same in every catalogue: the one
    # the run loads whole, so every run advertises the same number of tools.
    tools += [
        Tool(name=f"extra_{j}", description=f"Extra tool {j}.", group="extra") for j in range(8)
    ]
    return tools


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(size: int, groups: int, rounds: int) -> dict[str, float | int]:
    registry = ToolRegistry(catalogue(size, groups))
    for g in range(groups):
        # Four groups in five are lazy (held back while ToolSearch is live), one is auto.
        load: LoadMode = "auto" if g % 5 == 1 else "lazy"
        registry.declare_group(f"g{g:03d}", prefix=f"g{g:03d}__", load=load)
    registry.declare_group("extra", load="lazy")
    surface = ToolSurface(registry, session_id="bench")
    start = time.perf_counter()
    first = surface.plan()
    first_ms = (time.perf_counter() - start) * 1000
    surface.tool_search({"group": "extra"})
    picks = [n for n in registry.names() if n.startswith(first.held_back[0] + "__")][:2]
    surface.tool_search({"select": picks})
    start = time.perf_counter()
    loaded = surface.plan()
    loaded_ms = (time.perf_counter() - start) * 1000
    unchanged = median_ms(surface.plan, rounds)
    return {
        "first plan (ms)": first_ms,
        "plan after loads (ms)": loaded_ms,
        "unchanged plan (ms)": unchanged,
        "advertised": len(loaded.tools),
        "held back groups": len(loaded.held_back),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--groups", default="5,500")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    group_counts = sorted(int(g) for g in args.groups.split(","))
    report: dict[str, dict[str, dict[str, float | int]]] = {}
    for size in sizes:
        report[f"{size} tools"] = {
            f"{g} groups": measure(size, g, args.rounds) for g in group_counts
        }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    fewest, most = f"{group_counts[0]} groups", f"{group_counts[-1]} groups"
    print(
        f"{'tools':>8} {'groups':>7} {'first ms':>10} {'after loads ms':>15} "
        f"{'unchanged ms':>13} {'advertised':>11} {'held':>5}"
    )
    for size_key, by_groups in report.items():
        for g_key, r in by_groups.items():
            print(
                f"{size_key.split()[0]:>8} {g_key.split()[0]:>7} {r['first plan (ms)']:>10.1f} "
                f"{r['plan after loads (ms)']:>15.1f} {r['unchanged plan (ms)']:>13.2f} "
                f"{r['advertised']:>11} {r['held back groups']:>5}"
            )
        ratio = by_groups[most]["unchanged plan (ms)"] / by_groups[fewest]["unchanged plan (ms)"]
        print(f"{'':>8} unchanged plan, {most} / {fewest}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
