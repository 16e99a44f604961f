"""Cross-validate the weight of a service mention (docs/analysis.md §8).

    python benches/mentions.py [--engine native|pure] [--folds 5]

Groups are declared per server prefix of the MCP catalogue with the server's name as alias
(``evaluation.declare_server_groups``). For each fold the weight of the grid best on the
other four folds (``benches/tune.py``'s objective) ranks the held-out fold; the held-out
rankings together give the cross-validated figures, printed beside the weight 0 (no boost).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tune import GROUPS, folds_of, objective  # type: ignore[import-not-found]

from toolsurface import RetrievalSettings, ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups, evaluate, load_queries

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--engine", default="native")
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    queries = load_queries(args.queries)
    registry = ToolRegistry(tools, engine=args.engine)
    declare_server_groups(registry)
    base = registry.settings
    rankings = {}
    for w in GRID:
        s = RetrievalSettings(**{**base.model_dump(), "mention_weight": w})
        rankings[w] = [[h.name for h in registry.search(q.query, 10, settings=s)] for q in queries]

    def score(w: float, members: list[int]) -> tuple[float, dict[str, dict[str, float]]]:
        subset = [queries[i] for i in members]
        ranked = [rankings[w][i] for i in members]
        metrics, _ = evaluate(subset, lambda _t: ranked)
        return objective(metrics), metrics

    everything = list(range(len(queries)))
    for w in GRID:
        m = score(w, everything)[1]
        row = " / ".join(f"{m[g]['recall@3']:.3f}" for g in GROUPS)
        print(f"weight {w:>4}: objective {score(w, everything)[0]:.4f}  R@3 {row}")
    folds = folds_of(queries, args.folds)
    held: dict[int, list[str]] = {}
    for f, fold in enumerate(folds):
        train = [i for g, other in enumerate(folds) if g != f for i in other]
        best = max(GRID, key=lambda w: (round(score(w, train)[0], 6), -w))
        print(f"fold {f}: weight {best}")
        for i in fold:
            held[i] = rankings[best][i]
    order = sorted(held)
    cv, _ = evaluate([queries[i] for i in order], lambda _t: [held[i] for i in order])
    print(
        "cross-validated R@3 / MRR: "
        + "; ".join(f"{g} {cv[g]['recall@3']:.3f} / {cv[g]['mrr']:.3f}" for g in GROUPS)
    )


if __name__ == "__main__":
    main()
