"""Retrieval quality of ours against other BM25 libraries and a dense model, in one run.

    python benches/quality.py [--dev] [--bfcl] [--engines native,pure] [--peers all]
                              [--no-dense] [--json] [--json-out FILE]

On the same catalogue and queries: bm25s (stemmed, and without stemmer), rank_bm25 and its
faster drop-ins (rank-bm25-rs, bm25-rs), bm25-turbo, tantivy, ours per engine with the
bundled lexicon on and off, the dense model (all-MiniLM-L6-v2) alone over each tool's name
and description and over those and its parameters, and, per engine, the dense model fused
with ours through ``ToolRegistry(..., retrievers=[dense])``: by plain reciprocal rank (k 60,
weights 1, every request: the first configuration), and with the default
``FusionSettings``, the dense model declining requests in a non-Latin script, over name
and description and over those and the parameters. Peers' setups are in
``benches/peers.py``.

- ``--dev``: the 1,635 MCP tools and the 600 labelled development queries, per group
  (en/model, en/user, ru/model, ru/user, all).
- ``--bfcl``: the 1,879 BFCL functions (read with ``load_catalogue``) and 2,061 queries;
  any function sharing the expected one's ``original_name`` is a hit (``load_aliases``).

Neither flag: both. Prints markdown tables (recall@1/3/5/10 and MRR; a table per system,
then a summary across systems) ready for docs/quality.md; ``--json`` prints the figures as
JSON instead. Timings go to stderr. Dense embeddings of documents are cached for the run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import (
    LEXICAL_PEERS,
    DenseAdapter,
    OursAdapter,
    Peer,
    TantivyAdapter,
    make_peers,
    package_versions,
    peer_text,
)

import toolsurface
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import EvalQuery, evaluate, load_aliases, load_queries
from toolsurface.retrieval.fusion import FusionSettings

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DEV_GROUPS = ("en/model", "en/user", "ru/model", "ru/user", "all")
METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr")


def native_available() -> bool:
    try:
        from toolsurface import _native  # noqa: F401
    except ImportError:
        return False
    return True


def engines_from(arg: str) -> tuple[list[str], list[str]]:
    """Engines asked for that can run, and notes for those that cannot."""
    wanted = [e.strip() for e in arg.split(",") if e.strip()]
    ok, notes = [], []
    for e in wanted:
        if e == "native" and not native_available():
            notes.append("native engine skipped: toolsurface._native does not import")
            continue
        if e not in ("native", "pure"):
            notes.append(f"unknown engine {e!r} skipped")
            continue
        ok.append(e)
    return ok, notes


def run_system(
    system: Peer,
    tools: Sequence[Any],
    queries: Sequence[EvalQuery],
    aliases: dict[str, frozenset[str]],
    per_query: bool = False,
) -> tuple[dict[str, dict[str, float]], float, float]:
    """Build ``system`` on the tools, rank every query, score; (metrics, build s, rank s)."""
    names = [t.name for t in tools]
    texts = [peer_text(t) for t in tools]
    system.warm_up()
    t0 = time.perf_counter()
    system.build(names, texts, tools)
    built = time.perf_counter() - t0

    def rank(qs: Sequence[str]) -> list[list[str]]:
        if per_query:
            return [system.search(q, 10) for q in qs]
        return system.search_batch(list(qs), 10)

    t0 = time.perf_counter()
    metrics, _ = evaluate(queries, rank, aliases=aliases, depth=10)
    return metrics, built, time.perf_counter() - t0


def systems_for(
    engines: list[str], peer_keys: list[str], dense: bool
) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """(label, factory) for every system of the run, and the peers that failed to load."""
    peers, failed = make_peers(peer_keys)
    for p in peers:
        if isinstance(p, TantivyAdapter):
            p.writer_threads = 1  # one segment: stable order among tied scores
    out: list[tuple[str, Any]] = [(p.label, (lambda p=p: p)) for p in peers]
    for e in engines:
        out.append((f"ours ({e})", lambda e=e: OursAdapter(e)))
        out.append((f"ours ({e}, no lexicon)", lambda e=e: OursAdapter(e, lexicon=False)))
    if dense:
        try:
            DenseAdapter.model()
        except Exception as exc:
            failed["dense"] = f"{type(exc).__name__}: {exc}"
        else:
            out.append((DenseAdapter.label, DenseAdapter))
            out.append(("dense (MiniLM-L6, with parameters)", lambda: DenseAdapter(params=True)))
            # Fused rows, made per catalogue below: (engine, dense with parameters, fusion,
            # the dense model declines requests in a non-Latin script).
            for e in engines:
                out.append((f"ours ({e}) + dense, plain RRF", ("fused", e, False, PLAIN, False)))
                out.append((f"ours ({e}) + dense", ("fused", e, False, None, True)))
                out.append((f"ours ({e}) + dense with parameters", ("fused", e, True, None, True)))
    return out, failed


#: Reciprocal rank fusion as first shipped: k 60, every ranking weight 1.
PLAIN = FusionSettings(k=60.0, lexical_weight=1.0)


class NoDecline:
    """A dense model's ranking for every request, whatever its script."""

    def __init__(self, dense: DenseAdapter) -> None:
        self.dense = dense

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        return self.dense.rank_all(query, names, k)


def evaluate_set(
    name: str,
    tools: Sequence[Any],
    queries: Sequence[EvalQuery],
    aliases: dict[str, frozenset[str]],
    systems: list[tuple[str, Any]],
    engines: list[str],
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    dense: dict[bool, DenseAdapter] = {}  # by "with parameters"
    for label, factory in systems:
        per_query = False
        if isinstance(factory, tuple):  # fused: ours with this catalogue's dense model
            _, engine, params, fusion, declines = factory
            model = dense.get(params)
            if model is None:
                continue
            host: Any = model if declines else NoDecline(model)
            system: Peer = OursAdapter(engine, retrievers=[host], label=label, fusion=fusion)
            per_query = True
        else:
            system = factory()
        if isinstance(system, DenseAdapter):
            dense[system.params] = system
            t0 = time.perf_counter()
            system.prime_queries([q.query for q in queries])
            print(
                f"[{name}] dense: {len(queries)} queries encoded in "
                f"{time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
        metrics, built, ranked = run_system(system, tools, queries, aliases, per_query)
        print(
            f"[{name}] {label}: build {built:.2f} s, {len(queries)} queries {ranked:.2f} s",
            file=sys.stderr,
        )
        results[label] = {
            "metrics": metrics,
            "build_s": round(built, 3),
            "rank_s": round(ranked, 3),
        }
    return results


def fmt(v: float) -> str:
    return f"{v:.3f}"


def markdown(report: dict[str, Any]) -> str:
    lines: list[str] = []
    dev, bfcl = report.get("dev"), report.get("bfcl")
    labels = list((dev or bfcl or {}).keys())
    if dev and bfcl:
        labels = list(dict.fromkeys([*dev.keys(), *bfcl.keys()]))
    head = "| group | queries | R@1 | R@3 | R@5 | R@10 | MRR |"
    rule = "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    lines.append(
        f"Engines: {', '.join(report['engines']) or 'none'}; live engine "
        f"{report['live_engine']}; toolsurface {report['toolsurface']}."
    )
    lines.append("")
    for label in labels:
        lines.append(f"### {label}")
        lines.append("")
        lines.append(head)
        lines.append(rule)
        if dev and label in dev:
            m = dev[label]["metrics"]
            for g in DEV_GROUPS:
                if g in m:
                    r = m[g]
                    lines.append(
                        f"| dev {g} | {r['queries']} | "
                        + " | ".join(fmt(r[k]) for k in METRICS)
                        + " |"
                    )
        if bfcl and label in bfcl:
            r = bfcl[label]["metrics"]["all"]
            lines.append(
                f"| BFCL | {r['queries']} | " + " | ".join(fmt(r[k]) for k in METRICS) + " |"
            )
        lines.append("")
    # the summary across systems
    cols: list[str] = []
    if dev:
        cols += [f"dev {g}" for g in DEV_GROUPS]
    if bfcl:
        cols.append("BFCL")
    lines.append("### Summary: recall@3 / MRR")
    lines.append("")
    lines.append("| system | " + " | ".join(cols) + " |")
    lines.append("| --- | " + " | ".join("---:" for _ in cols) + " |")
    for label in labels:
        cells = []
        if dev:
            m = dev.get(label, {}).get("metrics", {})
            for g in DEV_GROUPS:
                cells.append(f"{fmt(m[g]['recall@3'])} / {fmt(m[g]['mrr'])}" if g in m else "-")
        if bfcl:
            m = bfcl.get(label, {}).get("metrics", {})
            cells.append(
                f"{fmt(m['all']['recall@3'])} / {fmt(m['all']['mrr'])}" if "all" in m else "-"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    if report["notes"]:
        lines.append("Notes: " + "; ".join(report["notes"]) + ".")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dev", action="store_true", help="the MCP catalogue, dev queries")
    parser.add_argument("--bfcl", action="store_true", help="the BFCL functions and queries")
    parser.add_argument("--engines", default="native,pure")
    parser.add_argument(
        "--peers", default="all", help=f"comma list of {', '.join(LEXICAL_PEERS)}, or all, or none"
    )
    parser.add_argument("--no-dense", action="store_true", help="skip the dense model")
    parser.add_argument("--json", action="store_true", help="print JSON, not markdown")
    parser.add_argument("--json-out", help="also write the JSON to this file")
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument(
        "--bfcl-catalogue", default=str(SHARED / "catalogue" / "bfcl_functions.json")
    )
    parser.add_argument("--bfcl-queries", default=str(SHARED / "catalogue" / "bfcl_queries.json"))
    args = parser.parse_args()
    if not args.dev and not args.bfcl:
        args.dev = args.bfcl = True
    engines, notes = engines_from(args.engines)
    if args.peers == "all":
        keys = list(LEXICAL_PEERS)
    elif args.peers == "none":
        keys = []
    else:
        keys = [k.strip() for k in args.peers.split(",") if k.strip()]
    systems, failed = systems_for(engines, keys, dense=not args.no_dense)
    notes += [f"{k} not run ({why})" for k, why in failed.items()]
    report: dict[str, Any] = {
        "toolsurface": toolsurface.__version__,
        "live_engine": toolsurface.engine(),
        "engines": engines,
        "versions": package_versions(),
        "notes": notes,
    }
    if args.dev:
        _, tools = load_catalogue(args.catalogue)
        queries = load_queries(args.queries)
        report["dev"] = evaluate_set("dev", tools, queries, {}, systems, engines)
    if args.bfcl:
        _, tools = load_catalogue(args.bfcl_catalogue)
        queries = load_queries(args.bfcl_queries)
        aliases = load_aliases(args.bfcl_catalogue)
        report["bfcl"] = evaluate_set("bfcl", tools, queries, aliases, systems, engines)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2, ensure_ascii=False), "utf-8")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(markdown(report))


if __name__ == "__main__":
    main()
