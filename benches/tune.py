"""Choose the default retrieval settings by cross-validated search on the development queries.

    python benches/tune.py [--catalogue FILE] [--queries FILE] [--trials 400] [--folds 5]
                           [--no-server-groups]

Random search over field weights, per-field ``b``, ``k1`` and ``expansion_weight``. For each
fold the best trial on the other folds is chosen and scored on the held-out fold, so the
reported figures are what the procedure achieves on queries it did not tune on. The final
pick is the best trial on all queries; it should sit near the per-fold picks (printed), or the
defaults would be fitting noise. Objective: the mean of recall@3 over the four
language x style groups, plus 0.25 x their mean MRR (recall@3 is what ToolSearch loads).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsurface import FieldValues, RetrievalSettings, ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import EvalQuery, declare_server_groups, evaluate, load_queries

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
GROUPS = ("en/model", "en/user", "ru/model", "ru/user")


def objective(metrics: dict[str, dict[str, float]]) -> float:
    """Mean recall@3 over the groups present, plus a quarter of their mean MRR."""
    present = [g for g in GROUPS if g in metrics]
    r3 = statistics.mean(metrics[g]["recall@3"] for g in present)
    mrr = statistics.mean(metrics[g]["mrr"] for g in present)
    return r3 + 0.25 * mrr


def sample(rng: random.Random, base: RetrievalSettings) -> RetrievalSettings:
    """A random settings value around the plausible ranges."""
    w = FieldValues(
        name=rng.uniform(1.0, 6.0),
        search_hint=base.weights.search_hint,
        summary=rng.uniform(0.5, 4.0),
        body=rng.uniform(0.1, 2.0),
        params=rng.uniform(0.0, 1.5),
    )
    b = FieldValues(
        name=rng.uniform(0.0, 1.0),
        search_hint=base.b.search_hint,
        summary=rng.uniform(0.0, 1.0),
        body=rng.uniform(0.2, 1.0),
        params=rng.uniform(0.2, 1.0),
    )
    return RetrievalSettings(
        weights=w, b=b, k1=rng.uniform(0.3, 3.0), expansion_weight=rng.uniform(0.2, 1.2)
    )


def folds_of(queries: Sequence[EvalQuery], k: int) -> list[list[int]]:
    """Stratified folds: each language x style group dealt round-robin, in id order."""
    by_group: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_group.setdefault(f"{q.lang}/{q.style}", []).append(i)
    folds: list[list[int]] = [[] for _ in range(k)]
    for members in by_group.values():
        for j, i in enumerate(sorted(members, key=lambda i: queries[i].id)):
            folds[j % k].append(i)
    return folds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--engine", default="native")
    parser.add_argument(
        "--no-server-groups",
        action="store_true",
        help="no group per server (as `eval --no-server-groups`): service mentions off",
    )
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    queries = load_queries(args.queries)
    registry = ToolRegistry(tools, engine=args.engine)
    if not args.no_server_groups:
        # As `toolsurface eval` scores the defaults: a group per server, mentions on.
        declare_server_groups(registry)
    rng = random.Random(args.seed)
    trials = [registry.settings] + [sample(rng, registry.settings) for _ in range(args.trials)]
    texts = [q.query for q in queries]
    rankings: list[list[list[str]]] = []
    for s in trials:
        hits = registry.search_many(texts, k=10, settings=s)
        rankings.append([[h.name for h in row] for row in hits])

    def score(trial: int, members: Sequence[int]) -> tuple[float, dict[str, Any]]:
        subset = [queries[i] for i in members]
        ranked = [rankings[trial][i] for i in members]
        metrics, _ = evaluate(subset, lambda _texts: ranked)
        return objective(metrics), metrics

    folds = folds_of(queries, args.folds)
    held_out_rankings: dict[int, list[str]] = {}
    picks = []
    for f, fold in enumerate(folds):
        train = [i for g, other in enumerate(folds) if g != f for i in other]
        best = max(range(len(trials)), key=lambda t: score(t, train)[0])
        picks.append(best)
        for i in fold:
            held_out_rankings[i] = rankings[best][i]
        print(
            f"fold {f}: trial {best} (train {score(best, train)[0]:.4f}, "
            f"held-out {score(best, fold)[0]:.4f})"
        )
    order = sorted(held_out_rankings)
    cv_metrics, _ = evaluate(
        [queries[i] for i in order], lambda _t: [held_out_rankings[i] for i in order]
    )
    everything = list(range(len(queries)))
    final = max(range(len(trials)), key=lambda t: score(t, everything)[0])
    defaults_metrics = score(0, everything)[1]
    print("\ncross-validated (each query scored by settings tuned without it):")
    for g in GROUPS:
        m = cv_metrics.get(g)
        if m:
            print(f"  {g:>9}: R@3 {m['recall@3']:.4f}  MRR {m['mrr']:.4f}")
    print(f"\ncurrent defaults on all queries: objective {score(0, everything)[0]:.4f}")
    for g in GROUPS:
        if g in defaults_metrics:
            print(f"  {g:>9}: R@3 {defaults_metrics[g]['recall@3']:.4f}")
    print(f"\nbest on all queries: trial {final}, objective {score(final, everything)[0]:.4f}")
    print(json.dumps(trials[final].model_dump(), indent=1))
    for p in sorted(set(picks)):
        print(f"fold pick {p}: {json.dumps(trials[p].model_dump())}")


if __name__ == "__main__":
    main()
