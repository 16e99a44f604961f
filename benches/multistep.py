"""Requests of several steps: how many of a task's steps the first results cover.

    python benches/multistep.py [--json FILE]

Needs ``toolsurface[semantic]`` and ``../shared/data``. The requests are
``benches/data/multistep.jsonl`` (50 tasks of 2 to 4 steps over the real MCP catalogue, in
English as a user and as a model writes them, 25 also in Russian, 10 in each of German,
Spanish, French, Ukrainian and Chinese; its README says how they were written). Each step
lists the tools that do it; a step is *covered* at k when one of them is in the first k.

Per system (the lexical path, native engine, a group per server as ``toolsurface eval``
declares them; the same with the semantic extra's fusion as shipped; the encoder alone;
bm25s with its stemmer), per language and style: recall@3 (a request with any of its
tools in the first 3, as every other set here is scored) and the share of steps covered
at 5 and at 10 (what an agent that runs the whole task needs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_sets import SHARED, fused, rankings

from toolsurface.evaluation import load_queries
from toolsurface.retrieval.fusion import FusionSettings

PATH = Path(__file__).resolve().parent / "data" / "multistep.jsonl"


def covered(steps: Sequence[Sequence[str]], ranked: Sequence[str], k: int) -> float:
    """The share of ``steps`` with one of their tools in the first ``k`` of ``ranked``."""
    top = set(ranked[:k])
    return sum(bool(top.intersection(step)) for step in steps) / len(steps)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    catalogue = SHARED / "catalogue" / "mcp_tools.json"
    if not catalogue.exists():
        raise SystemExit(f"needs the shared data: {catalogue}")
    os.environ.setdefault("TOOLSURFACE_SEMANTIC", "on")
    rows = [json.loads(line) for line in PATH.read_text("utf-8").splitlines() if line.strip()]
    queries = load_queries(PATH)
    ranked, bm25s = rankings(catalogue, queries)
    systems = {
        "lexical": [r[0] for r in ranked],
        "fused (extra)": fused(ranked, FusionSettings()),
        "encoder alone": [r[3] for r in ranked],
        "bm25s": bm25s,
    }
    cells: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        cells["all"].append(i)
        cells[f"{row['lang']} {row['style']}"].append(i)
    report: dict[str, Any] = {}
    print("| requests | n | system | recall@3 | steps at 5 | steps at 10 |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for cell, idx in sorted(cells.items(), key=lambda c: (c[0] != "all", c[0])):
        for system, lists in systems.items():
            figures = {
                "recall@3": statistics.mean(
                    bool(set(lists[i][:3]) & set(rows[i]["expected"])) for i in idx
                ),
                "steps@5": statistics.mean(covered(rows[i]["steps"], lists[i], 5) for i in idx),
                "steps@10": statistics.mean(covered(rows[i]["steps"], lists[i], 10) for i in idx),
            }
            report.setdefault(cell, {})[system] = figures
            print(
                f"| {cell} | {len(idx)} | {system} | "
                + " | ".join(f"{v:.3f}" for v in figures.values())
                + " |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), "utf-8")


if __name__ == "__main__":
    main()
