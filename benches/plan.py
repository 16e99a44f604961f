"""What an unchanged plan costs as the catalogue and its groups grow; what each operation costs.

    python benches/plan.py [--sizes 10000,100000] [--groups 5,500] [--rounds 7] [--json]
    python benches/plan.py --costs [--sizes 10000] [--groups 500] [--real] [--rounds 7]
                           [--session-loads 21]

For each size it registers a synthetic catalogue (``ToolSearch``, tools named
``gNNN__verb_noun_I`` spread evenly over the prefix groups ``gNNN__``, of which four in five
are lazy and so held back while ToolSearch is live, and eight tools whose own ``group``
field names the lazy group ``extra``) and, for each group count, plans once, loads
``extra`` whole and selects two held-back tools through ToolSearch, plans again, and then
times ``ToolSurface.plan()`` with nothing changed: the median of ``--rounds`` plans. The
ratio printed is the unchanged plan with the most groups over the one with the fewest, at
the same size, in the same run: a plan should cost what changed, not tools x groups.

With ``--costs`` it prices what a host does on every request in searches: the unit is one
``registry.search`` on the same catalogue, in the same run (the median over requests of
each one's median; on the synthetic catalogue requests of its own words, on the real one,
``--real``, 1,635 MCP tools with one group per server as MCP sync declares them, 40
development requests). Each operation is the median of ``--rounds`` after one uncounted call
(``--costs`` defaults to 25 rounds: a few microseconds each), over surfaces set up
as above (a group loaded whole, two tools selected): the first plan of the registry's first
run (once: nothing is made yet), the first plan of a later run, a plan after a tool call, a
plan after a load, and, on a session that loaded a group, two tools and then
``--session-loads`` tools one at a time (whatever the rounds), a render for Anthropic
(append delivery, and native delivery), a snapshot, and a restore of the snapshot into a
new surface with its first plan (what a stateless host does on every request).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolsurface import Tool, ToolCall, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups
from toolsurface.groups import LoadMode

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"

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
    """The median of ``rounds`` calls of ``fn`` in ms, after one call that is not counted.

    The uncounted call is the warm-up the search unit gets too (each request is searched
    once first): without it, the first restore, which reads the held-back list a process
    has not seen yet and decides for that floor, was one of seven rounds.
    """
    fn()
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


def synthetic_registry(size: int, groups: int) -> ToolRegistry:
    """The synthetic catalogue with its groups declared (as :func:`measure` does)."""
    registry = ToolRegistry(catalogue(size, groups))
    for g in range(groups):
        load: LoadMode = "auto" if g % 5 == 1 else "lazy"
        registry.declare_group(f"g{g:03d}", prefix=f"g{g:03d}__", load=load)
    registry.declare_group("extra", load="lazy")
    return registry


def synthetic_requests(count: int, seed: int) -> list[str]:
    """Requests in the synthetic catalogue's own words."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in service {rng.randrange(500)}"
        for _ in range(count)
    ]


def real_setup(seed: int) -> tuple[ToolRegistry, list[str]]:
    """The 1,635 real MCP tools with ToolSearch, one group per server; development requests."""
    path, dev = SHARED / "catalogue" / "mcp_tools.json", SHARED / "queries" / "dev.jsonl"
    if not path.exists() or not dev.exists():
        raise SystemExit(f"--real needs the shared data: {path} and {dev}")
    registry = ToolRegistry([tool_search_tool(), *load_catalogue(path)[1]])
    declare_server_groups(registry)
    rows = [json.loads(x) for x in dev.read_text("utf-8").splitlines() if x.strip()]
    rng = random.Random(seed)
    return registry, [r["query"] for r in rng.sample(rows, 40)]


def search_unit(registry: ToolRegistry, requests: Sequence[str], rounds: int) -> float:
    """One search, in ms: the median over requests of each request's median."""
    for q in requests:
        registry.search(q)
    return statistics.median(median_ms(lambda q=q: registry.search(q), rounds) for q in requests)


def costs(
    registry: ToolRegistry, requests: Sequence[str], rounds: int, session_loads: int
) -> dict[str, float]:
    """Each operation's median in ms, and the search unit (see the module's docstring)."""
    out: dict[str, float] = {}
    start = time.perf_counter()
    ToolSurface(registry, session_id="first", provider="anthropic").plan()
    out["first plan, first run"] = (time.perf_counter() - start) * 1000
    out["search"] = search_unit(registry, requests, rounds)

    def settled(**kw: Any) -> tuple[ToolSurface, list[str]]:
        surface = ToolSurface(registry, session_id="bench", provider="anthropic", **kw)
        held = surface.plan().held_back
        surface.tool_search({"group": held[-1]})
        picks = [n for n in registry.names() if registry.group_of(n) == held[0]][:3]
        surface.tool_search({"select": picks[:2]})
        surface.plan()
        return surface, picks

    out["first plan, later run"] = median_ms(
        lambda: ToolSurface(registry, session_id="later", provider="anthropic").plan(), rounds
    )
    surface, picks = settled()
    held_groups = surface.plan().held_back

    def after_call() -> float:
        surface.admit([ToolCall(picks[0], {})])
        start = time.perf_counter()
        surface.plan()
        return (time.perf_counter() - start) * 1000

    out["plan after a call"] = statistics.median(after_call() for _ in range(rounds))

    fresh = iter(n for n in registry.names() if registry.group_of(n) in held_groups[1:-1])

    def after_load() -> float:
        surface.tool_search({"select": [next(fresh)]})  # a tool not loaded yet, each round
        start = time.perf_counter()
        surface.plan()
        return (time.perf_counter() - start) * 1000

    out["plan after a load"] = statistics.median(after_load() for _ in range(rounds))
    # The session that is rendered, snapshot and restored: the same loads whatever the
    # rounds (a group, two tools, then ``session_loads`` tools one by one).
    surface, _ = settled()
    for _ in range(session_loads):
        surface.tool_search({"select": [next(fresh)]})
        surface.plan()
    plan = surface.plan()
    out["render, Anthropic"] = median_ms(lambda: plan.render("anthropic"), rounds)
    native, _ = settled(delivery="native")
    native_plan = native.plan()
    out["render, Anthropic native"] = median_ms(native_plan.render, rounds)
    out["snapshot"] = median_ms(lambda: surface.snapshot().to_json(), rounds)
    saved = surface.snapshot().to_json()

    def restore_plan() -> None:
        again = ToolSurface(registry, session_id="bench", provider="anthropic")
        again.restore(saved)
        again.plan()

    out["restore + plan"] = median_ms(restore_plan, rounds)
    out["advertised"] = len(plan.tools)
    out["held back groups"] = len(plan.held_back)
    out["loaded entries"] = len(surface.snapshot().loaded)
    return out


def show_costs(label: str, result: dict[str, float]) -> None:
    unit = result["search"]
    print(f"{label}: one search {unit * 1000:.1f} us")
    print(f"  {'operation':<28} {'ms':>9} {'searches':>9}")
    for name, value in result.items():
        if name in ("search", "advertised", "held back groups", "loaded entries"):
            continue
        print(f"  {name:<28} {value:>9.3f} {value / unit:>9.1f}")
    print(
        f"  advertised {result['advertised']:.0f}, held back {result['held back groups']:.0f}, "
        f"the session's loaded entries {result['loaded entries']:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--groups", default="5,500")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--session-loads", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--costs", action="store_true")
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.rounds is None:
        args.rounds = 25 if args.costs else 7
    if args.costs:
        runs: dict[str, dict[str, float]] = {}
        if args.real:
            registry, requests = real_setup(args.seed)
            runs["1,635 real tools"] = costs(registry, requests, args.rounds, args.session_loads)
        else:
            for size in (int(s) for s in args.sizes.split(",")):
                for g in (int(x) for x in args.groups.split(",")):
                    registry = synthetic_registry(size, g)
                    requests = synthetic_requests(40, args.seed)
                    runs[f"{size} tools, {g} groups"] = costs(
                        registry, requests, args.rounds, args.session_loads
                    )
        if args.json:
            print(json.dumps(runs, indent=1))
        else:
            for label, result in runs.items():
                show_costs(label, result)
        return
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
