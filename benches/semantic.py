"""The semantic extra: what it adds to recall, how its fusion was chosen, what it costs.

    python benches/semantic.py [--dev] [--bfcl] [--engines native,pure] [--tune] [--cost]
                               [--json-out FILE]

Needs ``toolsurface[semantic]`` and ``../shared/data``. In one run, on the same catalogue
and queries:

- ``--dev``: the 1,635 MCP tools and 600 development requests (groups declared per server,
  as ``toolsurface eval`` does); ``--bfcl``: BFCL's 1,879 functions and 2,061 requests (a
  function sharing the expected one's original name is a hit). Per group, recall@1/3/5 and
  MRR of the lexical ranking (``semantic=False``), the semantic ranking alone, and the two
  fused by the registry (``semantic=True``, default ``FusionSettings``), on each engine.
- ``--tune``: the fusion's parameters chosen again on the development requests: a grid of
  ``semantic_k`` x confident weight x flat weight x ``confident_margin``, scored by the
  smallest gain in recall@3 over the four groups, then the mean gain; 5-fold
  cross-validation stratified by group gives held-out figures, and the pick on all the
  development requests is then scored on BFCL (never tuned on it). Runs over each request's
  lexical first 50 (names and scores) and semantic first 50, the inputs the registry fuses.
- ``--cost``: the encoder's load, the time to embed the catalogue (per 1,000 tools), a
  search's time with and without the semantic ranking (median over the development
  requests, native engine), and the vectors' memory.

Neither ``--dev``, ``--bfcl``, ``--tune`` nor ``--cost``: all four. Prints markdown;
``--json-out`` also writes the figures as JSON. Timings are of this machine in this run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolsurface import ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import (
    EvalQuery,
    declare_server_groups,
    evaluate,
    load_aliases,
    load_queries,
)
from toolsurface.retrieval.fusion import FusionSettings, fuse_semantic
from toolsurface.retrieval.semantic import SemanticRanker

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DEV = (SHARED / "catalogue" / "mcp_tools.json", SHARED / "queries" / "dev.jsonl")
BFCL = (SHARED / "catalogue" / "bfcl_functions.json", SHARED / "catalogue" / "bfcl_queries.json")
GROUPS = ("en/model", "en/user", "ru/model", "ru/user")
DEPTH = 50
_RANKERS: dict[Path, SemanticRanker] = {}


def ranker_for(catalogue: Path) -> SemanticRanker:
    """One ranker per catalogue for the run: its tools are embedded once, whoever asks."""
    return _RANKERS.setdefault(catalogue, SemanticRanker(depth=DEPTH))


def registry_for(
    catalogue: Path, engine: str, semantic: bool | SemanticRanker, servers: bool
) -> ToolRegistry:
    _, tools = load_catalogue(catalogue)
    registry = ToolRegistry(tools, engine=engine, semantic=semantic)  # type: ignore[arg-type]
    if servers:
        declare_server_groups(registry)
    return registry


def figures(
    queries: Sequence[EvalQuery],
    rank: Callable[[str], list[str]],
    aliases: dict[str, frozenset[str]],
) -> dict[str, dict[str, float]]:
    metrics, _ = evaluate(queries, lambda qs: [rank(q) for q in qs], aliases=aliases)
    return metrics


def quality(name: str, paths: tuple[Path, Path], engines: list[str]) -> dict[str, Any]:
    """Lexical, semantic alone and fused, per group, on each engine."""
    catalogue, query_file = paths
    queries = load_queries(query_file)
    aliases = load_aliases(catalogue) if name == "bfcl" else {}
    servers = name == "dev"
    ranker = ranker_for(catalogue)  # the catalogue is embedded once for every engine
    out: dict[str, Any] = {}
    for engine in engines:
        lexical = registry_for(catalogue, engine, False, servers)
        fused = registry_for(catalogue, engine, ranker, servers)
        t0 = time.perf_counter()
        fused.prepare()
        print(f"{name} {engine}: prepared in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out[f"lexical ({engine})"] = figures(
            queries, lambda q, r=lexical: [h.name for h in r.search(q, k=10)], aliases
        )
        out[f"fused ({engine})"] = figures(
            queries, lambda q, r=fused: [h.name for h in r.search(q, k=10)], aliases
        )
    built = fused._current()
    table = fused._semantic_table(ranker, built)
    assert table is not None
    out["semantic alone"] = figures(queries, lambda q: ranker.rank(q, *table[:2])[:10], aliases)
    return out


def cached_inputs(
    paths: tuple[Path, Path], servers: bool
) -> tuple[list[EvalQuery], list[tuple[list[str], list[float], list[str]]]]:
    """Each request's lexical first 50 (names, scores) and semantic first 50 (native)."""
    catalogue, query_file = paths
    queries = load_queries(query_file)
    ranker = ranker_for(catalogue)
    lexical = registry_for(catalogue, "native", False, servers)
    fused = registry_for(catalogue, "native", ranker, servers)
    fused.prepare()
    table = fused._semantic_table(ranker, fused._current())
    assert table is not None
    rows = []
    for q in queries:
        hits = lexical.search(q.query, k=DEPTH)
        near = ranker.rank(q.query, *table[:2]) if lexical.terms(q.query) else []
        rows.append(([h.name for h in hits], [h.score for h in hits], near))
    return queries, rows


def recall3(
    queries: Sequence[EvalQuery],
    rankings: Sequence[list[str]],
    aliases: dict[str, frozenset[str]],
    key: Callable[[EvalQuery], str],
) -> dict[str, float]:
    hits: dict[str, list[bool]] = {}
    for q, ranked in zip(queries, rankings, strict=True):
        relevant = set().union(*({e} | aliases.get(e, frozenset()) for e in q.expected))
        hit = any(n in relevant for n in ranked[:3])
        for g in (key(q), "all"):
            hits.setdefault(g, []).append(hit)
    return {g: sum(v) / len(v) for g, v in sorted(hits.items())}


def fused_rankings(
    rows: Sequence[tuple[list[str], list[float], list[str]]], how: FusionSettings
) -> list[list[str]]:
    out = []
    for names, scores, near in rows:
        out.append(fuse_semantic(names, scores, near, how)[0] if near else names)
    return out


def tune() -> dict[str, Any]:
    """The grid, its 5-fold cross-validation on dev, and the pick's figures on BFCL."""
    queries, rows = cached_inputs(DEV, servers=True)
    group = lambda q: f"{q.lang}/{q.style}"  # noqa: E731
    grid = [
        FusionSettings(semantic_k=k, confident_weight=wc, flat_weight=wf, confident_margin=margin)
        for k, wc, wf, margin in itertools.product(
            (2.0, 4.0, 6.0, 10.0, 20.0),
            (2.0, 3.0, 4.0, 6.0, 100.0),
            (0.5, 1.0, 1.5, 2.0, 3.0),
            (0.05, 0.1, 0.2, 0.3),
        )
        if wc >= wf
    ]
    by_group: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_group.setdefault(group(q), []).append(i)
    folds: list[list[int]] = [[] for _ in range(5)]
    for ids in by_group.values():
        for j, i in enumerate(ids):
            folds[j % 5].append(i)

    def objective(how: FusionSettings, ids: list[int]) -> tuple[float, float]:
        qs = [queries[i] for i in ids]
        base = recall3(qs, [rows[i][0] for i in ids], {}, group)
        got = recall3(qs, fused_rankings([rows[i] for i in ids], how), {}, group)
        gains = [got[g] - base[g] for g in GROUPS]
        return round(min(gains), 6), round(sum(gains) / len(gains), 6)

    picks = []
    held: list[list[str]] = [[] for _ in queries]
    for f in range(5):
        train = [i for g in range(5) if g != f for i in folds[g]]
        best = max(grid, key=lambda h: objective(h, train))
        picks.append(best)
        for i, ranked in zip(folds[f], fused_rankings([rows[i] for i in folds[f]], best)):
            held[i] = ranked
    everything = list(range(len(queries)))
    pick = max(grid, key=lambda h: objective(h, everything))
    b_queries, b_rows = cached_inputs(BFCL, servers=False)
    aliases = load_aliases(BFCL[0])
    b_group = lambda q: q.style  # noqa: E731  (BFCL's category)

    def short(h: FusionSettings) -> str:
        return (
            f"k {h.semantic_k:g}, confident {h.confident_weight:g}, flat {h.flat_weight:g}, "
            f"margin {h.confident_margin:g}"
        )

    return {
        "grid": len(grid),
        "fold_picks": [short(h) for h in picks],
        "held_out": recall3(queries, held, {}, group),
        "dev_lexical": recall3(queries, [r[0] for r in rows], {}, group),
        "pick": short(pick),
        "default": short(FusionSettings()),
        "dev_pick": recall3(queries, fused_rankings(rows, pick), {}, group),
        "bfcl_lexical": recall3(b_queries, [r[0] for r in b_rows], aliases, b_group),
        "bfcl_pick": recall3(b_queries, fused_rankings(b_rows, pick), aliases, b_group),
    }


def cost() -> dict[str, Any]:
    """Load, embedding per 1,000 tools, a search with and without it, vectors' memory."""
    from toolsurface.retrieval import semantic as semantic_module

    t0 = time.perf_counter()
    encoder = semantic_module.shared_encoder()
    encoder.encode(["warm up"])
    load = time.perf_counter() - t0
    catalogue, query_file = DEV
    queries = [q.query for q in load_queries(query_file)]
    ranker = SemanticRanker(encoder)
    fused = registry_for(catalogue, "native", ranker, True)
    lexical = registry_for(catalogue, "native", False, True)
    lexical.prepare()
    t0 = time.perf_counter()
    fused.prepare()
    embed = time.perf_counter() - t0
    n = len(fused)
    # One tool changed: only its vector is made again.
    tool = fused.get(fused.names()[0])
    fused.register(
        tool.model_copy(update={"description": tool.description + " (v2)"}), replace=True
    )
    t0 = time.perf_counter()
    fused.prepare()
    one_changed = time.perf_counter() - t0

    def per_query(registry: ToolRegistry) -> float:
        times = []
        for q in queries:
            t = time.perf_counter()
            registry.search(q, k=10)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    for q in queries[:20]:  # warm
        lexical.search(q, k=10)
        fused.search(q, k=10)
    plain, with_semantic = per_query(lexical), per_query(fused)
    english = english_cost(catalogue, queries)
    return {
        **english,
        "tools": n,
        "encoder_load_s": load,
        "embed_catalogue_s": embed,
        "embed_per_1000_tools_s": embed / n * 1000,
        "rebuild_after_one_tool_changed_s": one_changed,
        "search_lexical_median_us": plain * 1e6,
        "search_semantic_median_us": with_semantic * 1e6,
        "ratio": with_semantic / plain,
        "vectors_mib": n * 512 * 4 / 2**20,
    }


def english_cost(catalogue: Path, queries: list[str]) -> dict[str, float]:
    """The English encoder's part: its load, its catalogue table, searches by language."""
    from toolsurface.retrieval.gloss import english_reading
    from toolsurface.retrieval.minilm import shared_english_encoder

    t0 = time.perf_counter()
    shared_english_encoder().encode(["warm up"])
    load = time.perf_counter() - t0
    full = registry_for(catalogue, "native", True, True)  # the extra's own two rankers
    assert full.semantic is not None and full.english is not None
    built = full._current()
    full._semantic_table(full.semantic, built)
    t0 = time.perf_counter()
    full._semantic_table(full.english, built)
    embed = time.perf_counter() - t0
    english = [q for q in queries if built.index.query_language(q) == "en"]
    others = [q for q in queries if built.index.query_language(q) != "en"]
    # A request in another language is read by the English encoder through its gloss, if
    # it has one, or as it is when it is ``latin`` of ASCII terms (``retrieval/gloss.py``);
    # one without either is fused without it.
    index, lexicon = built.index, full._lexicon

    def gloss(q: str) -> str | None:
        own = {t for t, _ in index.query_terms(q, None, 1.0)}
        terms = [t for t, _ in index.query_terms(q, lexicon, 1.0)]
        return english_reading(q, index.query_language(q), terms, own)

    glossed = [q for q in others if gloss(q)]
    plain = [q for q in others if q not in set(glossed)]

    def median_us(asked: list[str]) -> float:
        times = []
        for q in asked:
            t = time.perf_counter()
            full.search(q, k=10)
            times.append(time.perf_counter() - t)
        return statistics.median(times) * 1e6

    for q in queries[:20]:  # warm
        full.search(q, k=10)
    return {
        "english_load_s": load,
        "english_embed_per_1000_tools_s": embed / len(full) * 1000,
        "english_requests": len(english),
        "search_with_english_median_us": median_us(english),
        "glossed_requests": len(glossed),
        "search_glossed_median_us": median_us(glossed),
        "search_others_with_extra_median_us": median_us(plain) if plain else float("nan"),
        "english_vectors_mib": len(full) * 384 * 4 / 2**20,
    }


def table(title: str, rows: dict[str, dict[str, dict[str, float]]], groups: list[str]) -> str:
    lines = [f"### {title}", "", "| system | " + " | ".join(groups) + " |"]
    lines.append("| --- |" + " ---: |" * len(groups))
    for system, metrics in rows.items():
        cells = [f"{metrics[g]['recall@3']:.3f}" if g in metrics else "" for g in groups]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", action="store_true")
    ap.add_argument("--bfcl", action="store_true")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--engines", default="native,pure")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    if not DEV[0].exists():
        sys.exit(f"{SHARED} is absent: this bench reads the shared data")
    every = not (args.dev or args.bfcl or args.tune or args.cost)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    report: dict[str, Any] = {}
    if args.dev or every:
        report["dev"] = quality("dev", DEV, engines)
        print(table("Development requests, recall@3", report["dev"], [*GROUPS, "all"]))
    if args.bfcl or every:
        report["bfcl"] = quality("bfcl", BFCL, engines)
        cats = sorted(k.split("/", 1)[1] for k in report["bfcl"]["semantic alone"] if "/" in k)
        print(table("BFCL, recall@3", report["bfcl"], [f"en/{c}" for c in cats] + ["all"]))
    if args.tune or every:
        report["tune"] = tune()
        print("### Tuning\n\n```json\n" + json.dumps(report["tune"], indent=2) + "\n```\n")
    if args.cost or every:
        report["cost"] = cost()
        print("### Cost\n\n```json\n" + json.dumps(report["cost"], indent=2) + "\n```\n")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
