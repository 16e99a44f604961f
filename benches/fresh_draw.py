"""Draw the tools the fresh query set (tests/data/fresh_queries.jsonl) was written for.

    python benches/fresh_draw.py [--catalogue FILE] [--seed 2024] [--count 50]

Prints the drawn tools (``server__name``) with their descriptions, the order they were
written in. The requests were written from these descriptions alone, without looking at
the development queries; see docs/quality.md ("Generalisation").
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def draw(catalogue: Path, seed: int, count: int) -> list[dict[str, object]]:
    """``count`` tools of the catalogue, drawn without replacement by ``random.Random(seed)``."""
    tools = json.loads(catalogue.read_text(encoding="utf-8"))
    tools.sort(key=lambda t: f"{t['server']}__{t['name']}")
    return random.Random(seed).sample(tools, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--full", action="store_true", help="whole descriptions")
    args = parser.parse_args()
    for t in draw(Path(args.catalogue), args.seed, args.count):
        desc = str(t.get("description") or "").strip()
        if not args.full:
            desc = " ".join(desc.split())[:400]
        print(f"{t['server']}__{t['name']}\n    {desc}\n")


if __name__ == "__main__":
    main()
