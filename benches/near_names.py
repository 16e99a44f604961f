"""What a model's invented tool names cost the host: near names through admission.

    python benches/near_names.py [--catalogue FILE] [--big 100000] [--json]

For one unknown name, for one message of 64 distinct unknown names, and for one message of
64 unknown 3,000-character names, it times ``ToolSurface.admit`` on the real catalogue (or
the bundled demo one) and on a synthetic catalogue of ``--big`` names; beside it, in the
same run, the pairwise difflib ranking admission used before (kept here as the baseline,
on the 1,635 names only: at 100,000 it takes seconds a name). Medians of several rounds.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from toolsurface import Tool, ToolCall, ToolRegistry, ToolSurface
from toolsurface.catalogue import demo_catalogue, load_catalogue

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")


def pairwise(asked: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The ranking admission used before: difflib against every admitted name."""
    folded = asked.casefold()
    words = {w.lower() for w in _WORD_SPLIT.split(asked) if w}
    scored: list[tuple[int, float, str]] = []
    for name in candidates:
        if name == asked:
            continue
        if name.casefold() == folded:
            scored.append((0, 0.0, name))
            continue
        theirs = {w.lower() for w in _WORD_SPLIT.split(name) if w}
        ratio = difflib.SequenceMatcher(None, folded, name.casefold()).ratio()
        if theirs and words and len(theirs ^ words) <= 2 and theirs & words:
            scored.append((1, -ratio, name))
        elif ratio >= 0.6:
            scored.append((2, -ratio, name))
    scored.sort()
    return [name for _, _, name in scored[:n]]


def typo(name: str, rnd: random.Random) -> str:
    at = rnd.randrange(len(name))
    return name[:at] + rnd.choice("qxz") + name[at + 1 :]


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(tools: list[Tool], rnd: random.Random, rounds: int) -> dict[str, float]:
    registry = ToolRegistry(tools)
    names = registry.names()
    surface = ToolSurface(registry)
    surface.plan()
    surface.admit([ToolCall("warm_up_the_index")])  # the index is built once per admitted set

    def batch(count: int, length: int = 0) -> list[list[ToolCall]]:
        # New invented names every round, so the index's memo never answers them.
        out = []
        for _ in range(rounds):
            asked = [typo(n, rnd) for n in rnd.sample(names, count)]
            if length:
                asked = [(a * (length // len(a) + 1))[:length] for a in asked]
            out.append([ToolCall(a, id=str(i)) for i, a in enumerate(asked)])
        return out

    def timed(messages: list[list[ToolCall]]) -> float:
        it = iter(messages)
        return median_ms(lambda: surface.admit(next(it)), len(messages))

    return {
        "one unknown name (ms)": timed(batch(1)),
        "64 unknown names, one message (ms)": timed(batch(64)),
        "64 unknown 3,000-character names (ms)": timed(batch(64, 3000)),
        "64 known names, one message (ms)": timed(
            [[ToolCall(n, id=str(i)) for i, n in enumerate(rnd.sample(names, 64))]] * rounds
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rnd = random.Random(20261201)
    path = Path(args.catalogue)
    real = load_catalogue(path)[1] if path.exists() else demo_catalogue()
    names = sorted(t.name for t in real)
    report: dict[str, dict[str, float]] = {}
    report[f"{len(real)} tools"] = measure(real, rnd, args.rounds)
    asked = [typo(n, rnd) for n in rnd.sample(names, 8)]
    start = time.perf_counter()
    for a in asked:
        pairwise(a, names)
    report[f"{len(real)} tools"]["before: pairwise difflib, one name (ms)"] = (
        (time.perf_counter() - start) * 1000 / len(asked)
    )
    big = [
        Tool(name=f"srv{i % 500}__{real[i % len(real)].name.split('__')[-1]}_{i}"[:128])
        for i in range(args.big)
    ]
    report[f"{args.big} tools"] = measure(big, rnd, max(3, args.rounds // 2))
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for size, figures in report.items():
        print(size)
        for what, ms in figures.items():
            print(f"  {what:<44} {ms:10.2f}")


if __name__ == "__main__":
    main()
