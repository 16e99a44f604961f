"""toolsurface against bm25s on public tool-retrieval sets converted into the local cache.

    python benches/public_sets.py [--sets toollens,stabletoolbench,...,toolalpaca,restbench]
                                  [--cache DIR] [--engines native,pure] [--groups] [--json]

Each set is first converted by ``scripts/public_toolsets.py`` (which says where it comes
from and under what licence) into ``<cache>/<set>/{catalogue.json,queries.jsonl}``; the
cache defaults to ``$TOOLSURFACE_PUBLIC_DATA`` or ``~/.cache/toolsurface/public``. A set
not in the cache is skipped with a note naming the command that makes it.

On each set, in one run: toolsurface per engine with the defaults as shipped, its
catalogue read as ``toolsurface eval`` reads it (server records, a group per server as the
MCP adapter declares); bm25s with English stopwords and PyStemmer, and without the
stemmer (``benches/peers.py``: each tool's name words, description and parameters).
Prints recall@1, recall@3 and MRR per system (``--groups``: per group of the set too;
``--json``: the figures). A hit is any expected tool: ToolLens, StableToolBench, most
Seal-Tools and some API-Bank requests need several tools, so recall@k here is the share
of requests with at least one of theirs in the first k, not the share of their tools found.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import Bm25sAdapter, package_versions, peer_text

from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import check_expected, declare_server_groups, evaluate, load_queries
from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry

SETS = (
    "toollens",
    "stabletoolbench",
    "mcptoolbench",
    "apibank",
    "sealtools",
    "toolalpaca",
    "toolalpaca_apis",
    "restbench",
)
MAKE = "python scripts/public_toolsets.py {name} --source <the fetched repository>"


def cache_root(arg: Path | None) -> Path:
    """``--cache``, else ``$TOOLSURFACE_PUBLIC_DATA``, else ``~/.cache/toolsurface/public``."""
    if arg is not None:
        return arg
    env = os.environ.get("TOOLSURFACE_PUBLIC_DATA")
    return Path(env) if env else Path.home() / ".cache" / "toolsurface" / "public"


def ours(catalogue: Path, engine: str) -> Any:
    """A ranker as ``toolsurface eval`` builds it: defaults, a group per server."""
    _, tools = load_catalogue(catalogue)
    registry = ToolRegistry(engine=engine, lexicon=DEFAULT_LEXICON)  # type: ignore[arg-type]
    registry.register_many(tools, where=str(catalogue))
    declare_server_groups(registry)

    def rank(texts: Sequence[str]) -> list[list[str]]:
        return [[h.name for h in hits] for hits in registry.search_many(list(texts), k=10)]

    return rank


def bm25s(catalogue: Path, stem: bool) -> Any:
    """bm25s over each tool's name words, description and parameters (``peers.py``)."""
    _, tools = load_catalogue(catalogue)
    peer = Bm25sAdapter(stem=stem, backend="numpy")
    peer.build([t.name for t in tools], [peer_text(t) for t in tools], tools)

    def rank(texts: Sequence[str]) -> list[list[str]]:
        return peer.search_batch(list(texts), 10)

    return rank


def run_set(
    folder: Path, engines: list[str], groups: bool
) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
    """Every system's figures on one converted set, and toolsurface's rankings per engine."""
    catalogue, queries_path = folder / "catalogue.json", folder / "queries.jsonl"
    queries = load_queries(queries_path)
    _, tools = load_catalogue(catalogue)
    check_expected(queries, {t.name for t in tools})
    systems: list[tuple[str, Any]] = [(f"toolsurface ({e})", ours(catalogue, e)) for e in engines]
    systems += [("bm25s", bm25s(catalogue, True)), ("bm25s (no stemmer)", bm25s(catalogue, False))]
    out: dict[str, Any] = {"tools": len(tools), "queries": len(queries), "systems": {}}
    ranked_by: dict[str, list[list[str]]] = {}
    texts = [q.query for q in queries]
    for label, rank in systems:
        ranked = rank(texts)
        if label.startswith("toolsurface"):
            ranked_by[label] = ranked
        metrics, _ = evaluate(queries, lambda _t, r=ranked: r, depth=10)
        keep = {
            k: v for k, v in metrics.items() if k == "all" or (groups and k.startswith("style="))
        }
        out["systems"][label] = keep
    return out, ranked_by


def markdown(name: str, result: dict[str, Any]) -> str:
    """One table: a row per system (and per group when asked), R@1, R@3, MRR."""
    lines = [
        f"{name}: {result['tools']} tools, {result['queries']} requests",
        "",
        "| system | group | n | R@1 | R@3 | MRR |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for label, metrics in result["systems"].items():
        for group, m in metrics.items():
            g = group.removeprefix("style=")
            lines.append(
                f"| {label} | {g} | {int(m['queries'])} | {m['recall@1']:.3f} | "
                f"{m['recall@3']:.3f} | {m['mrr']:.3f} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--engines", default="native,pure")
    ap.add_argument("--groups", action="store_true", help="figures per group of each set too")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = cache_root(args.cache)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    report: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "cache": str(root),
        "versions": package_versions(),
        "sets": {},
    }
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        folder = root / name
        if not (folder / "catalogue.json").exists():
            print(f"{name}: not in {root}; make it with: {MAKE.format(name=name)}", file=sys.stderr)
            continue
        result, ranked_by = run_set(folder, engines, args.groups)
        if len(ranked_by) > 1:
            first, *rest = ranked_by.values()
            result["engines_agree"] = all(r == first for r in rest)
        report["sets"][name] = result
        if not args.json:
            print(f"\n{markdown(name, result)}")
            if "engines_agree" in result:
                print(
                    f"\nengines {', '.join(engines)} rank every request the same: "
                    f"{result['engines_agree']}"
                )
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
