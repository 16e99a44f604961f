"""What a hostile request costs a search, per engine, beside an ordinary one.

    python benches/hostile_requests.py [--catalogue FILE] [--rounds N] [--seed S]

A model writes the request a ``ToolSearch`` call searches for, and a host may hand
``ToolRegistry.search`` a user's whole message: neither is bounded by anything but the
host. Each shape below is made afresh in every round (made-up words the analyzer and its
memos have never seen, as an attacker's would be), searched once on each engine over the
catalogue (the real MCP tools when ``../shared/data`` is there), lexically, and timed:

- ``ordinary``: a short request of real words, in one of five languages;
- ``latin 1000`` / ``latin 4096``: one made-up word of that many letters;
- ``words 1000``: 143 made-up six-letter words, space-separated (1,000 characters);
- ``snake 1000``: the same words joined by ``_``, one identifier of 143 parts;
- ``camel 4000``: one camelCase identifier of 800 made-up five-letter parts.

Prints per shape and engine the median and the worst of the rounds, and the pure engine's
median over the native one's. Then what ToolSearch arguments a model writes as JSON text
cost to read (``parse_tool_search_arguments``, no engine involved), each within the 65,536
characters it reads: a string left open after 33 brackets, made of escaped quotes; nesting
past the limit; an integer of 20,000 digits. ``ToolSearch`` cuts its query at 1,000 characters
(``tools.toolsearch``); ``registry.search`` reads all of it. Figures
compare builds and engines in one run on one machine, not absolute claims.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path

from toolsurface.catalogue import load_catalogue
from toolsurface.registry import ToolRegistry
from toolsurface.tools.toolsearch import parse_tool_search_arguments

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "catalogue" / "mcp_tools.json"
DEMO = ROOT / "python" / "toolsurface" / "data" / "demo_catalogue.json"

ORDINARY = (
    "list open pull requests",
    "покажи открытые пулреквесты",
    "erstelle ein neues Issue im Repository",
    "envía un mensaje al canal del equipo",
    "trouve les fichiers nommés rapport",
)


def shapes(rng: random.Random) -> dict[str, Callable[[], str]]:
    """Each shape's maker: a new request of that shape on every call."""

    def word(n: int) -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))

    return {
        "ordinary": lambda: rng.choice(ORDINARY),
        "latin 1000": lambda: word(1000),
        "latin 4096": lambda: word(4096),
        "words 1000": lambda: " ".join(word(6) for _ in range(143)),
        "snake 1000": lambda: "_".join(word(6) for _ in range(143)),
        "camel 4000": lambda: "".join(word(5).capitalize() for _ in range(800)),
    }


#: ToolSearch arguments as JSON text, each under ``tools.toolsearch.ARGUMENTS_MAX_CHARS``.
ARGUMENTS = {
    "open string of escaped quotes": "[" * 33 + '"' + '\\"' * 32_000,
    "nested 30,000 deep": "[" * 30_000 + "]" * 30_000,
    "integer of 20,000 digits": '{"query": ' + "9" * 20_000 + "}",
}


def read_cost(text: str) -> float:
    """Seconds ``parse_tool_search_arguments`` takes to read (and refuse) ``text``."""
    start = time.perf_counter()
    parse_tool_search_arguments(text)
    return time.perf_counter() - start


def timed(registry: ToolRegistry, request: str) -> float:
    """Seconds one search of ``request`` takes."""
    start = time.perf_counter()
    registry.search(request)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalogue", type=Path, default=SHARED if SHARED.exists() else DEMO)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("TOOLSURFACE_SEMANTIC", "off")
    _, tools = load_catalogue(args.catalogue)
    engines = {e: ToolRegistry(tools, engine=e) for e in ("native", "pure")}
    for registry in engines.values():
        registry.search("warm up")
        registry.search("zzzqqqxx")
    print(f"{len(tools)} tools from {args.catalogue.name}; {args.rounds} fresh requests a shape")
    heads = ("native p50", "worst", "pure p50", "worst", "pure/native")
    print(f"{'shape':<12} " + " ".join(f"{h:>11}" for h in heads))
    for label, make in shapes(random.Random(args.seed)).items():
        times: dict[str, list[float]] = {e: [] for e in engines}
        for _ in range(args.rounds):
            request = make()
            for engine, registry in engines.items():
                times[engine].append(timed(registry, request))
        native, pure = (statistics.median(times[e]) * 1000 for e in ("native", "pure"))
        print(
            f"{label:<12} {native:>8.3f} ms {max(times['native']) * 1000:>8.2f} ms"
            f" {pure:>8.1f} ms {max(times['pure']) * 1000:>8.1f} ms {pure / native:>10.0f}x"
        )
    print("\nToolSearch arguments as JSON text (median of the rounds)")
    for label, text in ARGUMENTS.items():
        took = statistics.median(read_cost(text) for _ in range(args.rounds)) * 1000
        print(f"{label:<32} {len(text):>7,} chars {took:>8.2f} ms")


if __name__ == "__main__":
    main()
