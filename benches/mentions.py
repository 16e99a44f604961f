"""Cross-validate the weight of a boost: a service mention (§8) or a question (§10).

    python benches/mentions.py [--engine native|pure] [--folds 5]
        [--setting mention_weight|question_weight]

``--setting`` picks which of the two ``RetrievalSettings`` weights the grid varies (the
other keeps its default); docs/analysis.md states both rules. ``--cost``: instead, the
median microseconds a query of ``search(q, k=10)`` costs with the setting at its default
against 0, for the requests it boosts and for the others, rounds interleaved, in one run.

Groups are declared per server prefix of the MCP catalogue with the server's name as alias
(``evaluation.declare_server_groups``). For each fold the weight of the grid best on the
other four folds (``benches/tune.py``'s objective) ranks the held-out fold; the held-out
rankings together give the cross-validated figures, printed beside the weight 0 (no boost).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from tune import GROUPS, folds_of, objective  # type: ignore[import-not-found]

from toolsurface import RetrievalSettings, ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups, evaluate, load_queries
from toolsurface.retrieval.analysis.questions import is_question

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def cost(registry: ToolRegistry, texts: list[str], setting: str, rounds: int = 15) -> None:
    """Print what a query costs with ``setting`` at its default against 0, per kind."""
    on = registry.settings
    off = on.model_copy(update={setting: 0.0})
    # The requests the rule applies to: the questions, or those that mention a group.
    applies = is_question if setting == "question_weight" else registry.mentioned_groups
    chosen_kind = "questions" if setting == "question_weight" else "mentioning a group"
    kinds = {
        chosen_kind: [q for q in texts if applies(q)],
        "the others": [q for q in texts if not applies(q)],
    }
    print(f"| requests | n | us, {setting} 0 | us, default | ratio |\n|---|---:|---:|---:|---:|")
    for kind, group in kinds.items():
        times: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(rounds):
            for label, chosen in (("off", off), ("on", on)):
                t0 = time.perf_counter()
                for q in group:
                    registry.search(q, 10, settings=chosen)
                times[label].append((time.perf_counter() - t0) / max(1, len(group)))
        a, b = statistics.median(times["off"]), statistics.median(times["on"])
        print(f"| {kind} | {len(group)} | {a * 1e6:.1f} | {b * 1e6:.1f} | {b / a:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--engine", default="native")
    parser.add_argument(
        "--setting", choices=("mention_weight", "question_weight"), default="mention_weight"
    )
    parser.add_argument("--cost", action="store_true")
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    queries = load_queries(args.queries)
    registry = ToolRegistry(tools, engine=args.engine)
    declare_server_groups(registry)
    if args.cost:
        cost(registry, [q.query for q in queries], args.setting)
        return
    base = registry.settings
    rankings = {}
    for w in GRID:
        s = RetrievalSettings(**{**base.model_dump(), args.setting: w})
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
