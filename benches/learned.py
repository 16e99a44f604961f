"""What learned hints buy: learn from four folds of the development requests, test on the fifth.

    python benches/learned.py [--engine native] [--folds 5] [--json] [--cost] [--fresh]
                              [--sessions] [--weight W]

A host that calls ``registry.learn(query, tool)`` after each ToolSearch the model followed
teaches the registry its users' words. This study plays that host on the labelled
development requests (``dev.jsonl``) over the real catalogue (1,635 MCP tools, a group per
server as the MCP adapter declares them):

- **without learning**: the defaults as shipped, every request;
- **with learning, cross-validated**: the requests are dealt into stratified folds
  (``tune.folds_of``); for each fold the registry learns every other fold's (request,
  expected tool) pairs and ranks the fold's requests. The learned field's weight and ``b``
  are chosen inside the training folds alone (an inner split of the same kind over a small
  grid), so no figure is of a request whose fold chose the settings or was learned;
- the final pick (the shipped defaults ``LEARNED_WEIGHT``, ``LEARNED_B``) is the grid
  point best over all outer folds, printed beside the per-fold picks;
- with ``--fresh`` only, the fresh requests of ``tests/data/fresh_queries.jsonl`` (written
  before any tuning), ranked without learning and after learning every development
  request: a host's users asking for tools its logs may never have seen. They are the
  held-out judge of the defaults, so a tuning run never prints them by accident.

With ``--sessions`` every pair is taught as the sessions of a gateway teach it
(``registry.learn(query, tool, session=...)`` from ``LearnedHints.min_sessions`` distinct
sessions, so each ranks): the learned text is then cut to the words each tool's own text
reaches, each word at most ``word_cap`` times (docs/analysis.md §9). Without it the host
teaches, whole requests, as before. ``--weight W`` fixes the learned field's weight at W
(``b`` 0) instead of choosing it inside the folds.

Prints markdown tables of recall@1/3/5 and MRR per group (``--json``: the figures).

``--cost``: what a query costs with learned hints against without, in one run: the same
catalogue, one registry with every development request learned and one with nothing, the
600 requests searched one by one on each, rounds interleaved; the ratio of the medians of
the rounds (the issue's bound is 1.2x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tune import GROUPS, folds_of, objective

from toolsurface import RetrievalSettings, ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import EvalQuery, declare_server_groups, evaluate, load_queries

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
FRESH = ROOT / "tests" / "data" / "fresh_queries.jsonl"
WEIGHTS = (0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.0)
BS = (0.0, 0.5, 1.0)
SHOWN = ("recall@1", "recall@3", "recall@5", "mrr")

Grid = list[tuple[float, float]]


def ranked(
    registry: ToolRegistry, queries: Sequence[EvalQuery], settings: RetrievalSettings
) -> list[list[str]]:
    """Names best first for each query under ``settings``."""
    hits = registry.search_many([q.query for q in queries], k=10, settings=settings)
    return [[h.name for h in row] for row in hits]


#: Teach as sessions do (``--sessions``) rather than as the host.
AS_SESSIONS = False


def teach(registry: ToolRegistry, queries: Sequence[EvalQuery]) -> None:
    """Forget everything, then learn each query for each of its expected tools."""
    registry.forget()
    pairs = [(q.query, name) for q in queries for name in sorted(q.expected)]
    if not AS_SESSIONS:
        registry.learn_many(pairs)
        return
    for i in range(registry.learned_hints.min_sessions):
        for query, name in pairs:
            registry.learn(query, name, session=f"session {i}")


def scores_by_point(
    registry: ToolRegistry,
    learn_from: Sequence[EvalQuery],
    test: Sequence[EvalQuery],
    grid: Grid,
) -> dict[tuple[float, float], list[list[str]]]:
    """Rankings of ``test`` after learning ``learn_from``, per grid point."""
    teach(registry, learn_from)
    base = registry.settings
    out = {}
    for w, b in grid:
        chosen = base.model_copy(update={"learned_weight": w, "learned_b": b})
        out[(w, b)] = ranked(registry, test, chosen)
    return out


def metric(queries: Sequence[EvalQuery], rankings: Sequence[Sequence[str]]) -> Any:
    """``evaluate``'s metrics of fixed rankings."""
    return evaluate(list(queries), lambda _t: list(rankings))[0]


def cross_validate(
    registry: ToolRegistry, queries: list[EvalQuery], folds: int, grid: Grid
) -> tuple[dict[str, Any], list[tuple[float, float]], tuple[float, float]]:
    """Held-out metrics with learning, the per-fold picks, and the pick over all folds."""
    parts = folds_of(queries, folds)
    held: dict[int, list[str]] = {}
    picks = []
    outer_scores: dict[tuple[float, float], float] = dict.fromkeys(grid, 0.0)
    for f, fold in enumerate(parts):
        train_parts = [p for g, p in enumerate(parts) if g != f]
        inner: dict[tuple[float, float], float] = dict.fromkeys(grid, 0.0)
        for g, part in enumerate(train_parts):
            learn = [queries[i] for h, p in enumerate(train_parts) if h != g for i in p]
            test = [queries[i] for i in part]
            for point, rows in scores_by_point(registry, learn, test, grid).items():
                inner[point] += objective(metric(test, rows))
        pick = max(grid, key=lambda p: (inner[p], -p[0], -p[1]))
        picks.append(pick)
        learn = [queries[i] for p in train_parts for i in p]
        test = [queries[i] for i in fold]
        by_point = scores_by_point(registry, learn, test, grid)
        for point, rows in by_point.items():
            outer_scores[point] += objective(metric(test, rows))
        for i, row in zip(fold, by_point[pick]):
            held[i] = row
        print(f"fold {f}: learned weight {pick[0]}, b {pick[1]}", file=sys.stderr)
    order = sorted(held)
    figures = metric([queries[i] for i in order], [held[i] for i in order])
    final = max(grid, key=lambda p: (outer_scores[p], -p[0], -p[1]))
    registry.forget()
    return figures, picks, final


def table(title: str, rows: dict[str, dict[str, Any]]) -> str:
    """A markdown table: one row per system, recall@3 per group, then the shown metrics."""
    head = "| " + title + " | " + " | ".join(f"{g} R@3" for g in GROUPS) + " | all R@1 | all MRR |"
    lines = [head, "|" + "---|" * (len(GROUPS) + 3)]
    for label, m in rows.items():
        cells = [f"{m[g]['recall@3']:.3f}" if g in m else "-" for g in GROUPS]
        lines.append(
            f"| {label} | " + " | ".join(cells) + f" | {m['all']['recall@1']:.3f} | "
            f"{m['all']['mrr']:.3f} |"
        )
    return "\n".join(lines)


def cost(tools: Sequence[Any], queries: Sequence[EvalQuery], engine: str, rounds: int = 15) -> None:
    """Print the per-query search time with every dev request learned against none."""
    plain = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    taught = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    for registry in (plain, taught):
        declare_server_groups(registry)
    teach(taught, queries)
    texts = [q.query for q in queries]
    times: dict[str, list[float]] = {"none": [], "learned": []}
    for registry in (plain, taught):
        for q in texts:  # warm: the index built, every query's terms seen once
            registry.search(q, k=10)
    for _ in range(rounds):
        for label, registry in (("none", plain), ("learned", taught)):
            t0 = time.perf_counter()
            for q in texts:
                registry.search(q, k=10)
            times[label].append((time.perf_counter() - t0) / len(texts))
    none, learned = statistics.median(times["none"]), statistics.median(times["learned"])
    print(f"| {engine} | requests learned | us per query, none | us per query, learned | ratio |")
    print("|---|---|---|---|---|")
    print(
        f"| {engine} | {len(taught.learned_hints)} | {none * 1e6:.1f} | {learned * 1e6:.1f} | "
        f"{learned / none:.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--engine", default="native")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--fresh", action="store_true", help="also rank the fresh set")
    parser.add_argument("--sessions", action="store_true", help="teach as gateway sessions do")
    parser.add_argument("--weight", type=float, help="the learned weight, not chosen (b 0)")
    args = parser.parse_args()
    global AS_SESSIONS
    AS_SESSIONS = args.sessions
    _, tools = load_catalogue(args.catalogue)
    queries = load_queries(args.queries)
    if args.cost:
        cost(tools, queries, args.engine)
        return
    registry = ToolRegistry(tools, engine=args.engine)
    declare_server_groups(registry)
    grid = [(w, b) for w in WEIGHTS for b in BS] if args.weight is None else [(args.weight, 0.0)]

    plain = metric(queries, ranked(registry, queries, registry.settings))
    learned, picks, final = cross_validate(registry, queries, args.folds, grid)
    figures = {
        "dev, no learning": plain,
        "dev, learned from the other folds (CV)": learned,
    }
    if args.fresh:
        fresh = load_queries(FRESH)
        figures["fresh, no learning"] = metric(fresh, ranked(registry, fresh, registry.settings))
        teach(registry, queries)
        learned_all = metric(fresh, ranked(registry, fresh, registry.settings))
        figures["fresh, learned from every dev request"] = learned_all
        registry.forget()
    if args.json:
        print(json.dumps({"figures": figures, "picks": picks, "final": final}, indent=1))
        return
    print(table(f"{args.engine} engine", figures))
    print(f"\nper-fold picks (weight, b): {picks}; over all folds: {final}")
    shipped = registry.settings
    print(f"defaults: learned_weight {shipped.learned_weight}, b {shipped.learned_b}")


if __name__ == "__main__":
    main()
