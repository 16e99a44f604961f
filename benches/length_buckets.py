"""Recall@3 by the request's length: the lexical ranking, the even ranking and bm25s, per set.

    python benches/length_buckets.py [--sets dev,toollens,...] [--cache DIR]

For every request set ``benches/fusion_sets.py`` knows (the development requests, the
multilingual set, the unseen user-style requests, BFCL pooled and the public sets converted
by ``scripts/public_toolsets.py``; a set not there is left out, named), ranks each request
three ways on the lexical path (native engine, a group per server as ``toolsurface eval``
declares them): the defaults as shipped, the even ranking (the same search with every
field weighing alike, ``retrieval/even.py``) and bm25s with its English stemmer
(``benches/peers.py``). Prints recall@3 (any expected tool in the first three) per bucket
of the request's length, counted in distinct terms as the native engine analyses it.

It answers whether the even ranking's gains on some sets come from long requests (they
would then call for a rule by length) or from the catalogue (docs/quality.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_sets import sets
from peers import Bm25sAdapter, peer_text

from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups, load_queries
from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.even import even_settings

#: Buckets of distinct terms, inclusive.
BUCKETS = ((0, 4), (5, 8), (9, 14), (15, 24), (25, None))


def bucket(n: int) -> tuple[int, int | None]:
    """The bucket a request of ``n`` distinct terms falls in."""
    return next(b for b in BUCKETS if b[0] <= n and (b[1] is None or n <= b[1]))


def label(b: tuple[int, int | None]) -> str:
    """A bucket as the table prints it."""
    return f"{b[0]}-{b[1]}" if b[1] is not None else f"{b[0]}+"


def show(name: str, span: str, counts: list[int]) -> None:
    """One table row: requests, then each system's share found."""
    n, lexical, even, bm25s = counts
    shares = " | ".join(f"{found / n:.3f}" for found in (lexical, even, bm25s))
    print(f"| {name} | {span} | {n} | {shares} |", flush=True)


def main() -> None:
    """Print the table for every set found."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_cache = Path.home() / ".cache" / "toolsurface" / "public"
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("TOOLSURFACE_PUBLIC_DATA", default_cache))
    )
    parser.add_argument("--sets", default="", help="comma-separated; default every set found")
    args = parser.parse_args()
    wanted = {s for s in args.sets.split(",") if s}
    tokens = backend("native").tokens
    print("| set | terms | requests | lexical | even | bm25s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, (catalogue, query_file) in sets(args.cache).items():
        if wanted and name not in wanted:
            continue
        if not catalogue.exists() or not query_file.exists():
            print(f"(left out: {name}, no {catalogue} or {query_file})")
            continue
        queries = load_queries(query_file)
        _, tools = load_catalogue(catalogue)
        registry = ToolRegistry(lexicon=DEFAULT_LEXICON, semantic=False, engine="native")
        registry.register_many(tools, where=str(catalogue))
        declare_server_groups(registry)
        even = even_settings(registry.settings)
        peer = Bm25sAdapter(stem=True, backend="numpy")
        peer.build([t.name for t in tools], [peer_text(t) for t in tools], tools)
        peer_hits = peer.search_batch([q.query for q in queries], 3)
        rows: dict[tuple[int, int | None], list[int]] = {b: [0, 0, 0, 0] for b in BUCKETS}
        for q, theirs in zip(queries, peer_hits):
            row = rows[bucket(len(set(tokens(q.query))))]
            ranked = (
                registry.search(q.query, k=3),
                registry.search(q.query, k=3, settings=even),
            )
            row[0] += 1
            for i, hits in enumerate(ranked, 1):
                row[i] += bool({h.name for h in hits} & q.expected)
            row[3] += bool(set(theirs[:3]) & q.expected)
        for b, counts in rows.items():
            if counts[0]:
                show(name, label(b), counts)
        show(name, "all", [sum(r[i] for r in rows.values()) for i in range(4)])


if __name__ == "__main__":
    main()
