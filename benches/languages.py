"""How much of its English recall each language keeps: the project's multilingual requests.

    python benches/languages.py [--engine native|pure|native,pure] [--queries FILE]
                                [--catalogue FILE] [--no-lexicon] [--json]

Ranks ``benches/data/multilingual.jsonl`` (70 intents, each written in English, Russian,
German, Spanish, French, Ukrainian and Chinese, model-style and user-style; its README says
how) over the real catalogue (``../shared/data/catalogue/mcp_tools.json``, a group per
server as ``toolsurface eval`` and the MCP adapter declare them), with the defaults as
shipped. Prints, per engine, recall@1, recall@3 and MRR per language and style, and each
language's recall@3 over English's on the same intents and style: the issue's aim is 0.8
or more for every language.

With more than one engine it also says whether they ranked every request the same (the
first ten names): the engines must agree.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import check_expected, declare_server_groups, evaluate, load_queries
from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
QUERIES = ROOT / "benches" / "data" / "multilingual.jsonl"
CATALOGUE = SHARED / "catalogue" / "mcp_tools.json"
LANGS = ("en", "ru", "de", "es", "fr", "uk", "zh")
STYLES = ("model", "user")


def rankings(
    catalogue: Path, queries: Sequence[str], engine: str, lexicon: bool
) -> list[list[str]]:
    """The first ten names for each request, on ``engine``, as ``toolsurface eval`` ranks."""
    _, tools = load_catalogue(catalogue)
    registry = ToolRegistry(engine=engine, lexicon=DEFAULT_LEXICON if lexicon else None)  # type: ignore[arg-type]
    registry.register_many(tools, where=str(catalogue))
    declare_server_groups(registry)
    return [[h.name for h in hits] for hits in registry.search_many(list(queries), k=10)]


def table(metrics: dict[str, dict[str, float]]) -> tuple[list[dict[str, Any]], str]:
    """Rows per language and style (and per language), with recall@3 over English's."""
    rows: list[dict[str, Any]] = []
    for lang in LANGS:
        for style in (*STYLES, None):
            key = f"{lang}/{style}" if style else f"lang={lang}"
            en_key = f"en/{style}" if style else "lang=en"
            if key not in metrics:
                continue
            m, en = metrics[key], metrics[en_key]
            ratio = m["recall@3"] / en["recall@3"] if en["recall@3"] else float("nan")
            rows.append(
                {
                    "lang": lang,
                    "style": style or "both",
                    "n": int(m["queries"]),
                    "recall@1": m["recall@1"],
                    "recall@3": m["recall@3"],
                    "mrr": m["mrr"],
                    "r3_over_en": round(ratio, 3),
                }
            )
    lines = [
        "| lang | style | n | R@1 | R@3 | MRR | R@3 / en |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        bold = "**" if r["style"] == "both" else ""
        lines.append(
            f"| {bold}{r['lang']}{bold} | {r['style']} | {r['n']} | {r['recall@1']:.3f} | "
            f"{bold}{r['recall@3']:.3f}{bold} | {r['mrr']:.3f} | {r['r3_over_en']:.2f} |"
        )
    return rows, "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="native", help="native, pure or native,pure")
    ap.add_argument("--queries", type=Path, default=QUERIES)
    ap.add_argument("--catalogue", type=Path, default=CATALOGUE)
    ap.add_argument("--no-lexicon", action="store_true", help="rank without the lexicon")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if not args.catalogue.exists():
        print(f"{args.catalogue} is absent: this bench needs the shared catalogue", file=sys.stderr)
        return 2
    queries = load_queries(args.queries)
    names = {t.name for t in load_catalogue(args.catalogue)[1]}
    check_expected(queries, names)
    engines = [e.strip() for e in args.engine.split(",") if e.strip()]
    out: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "queries": str(args.queries),
        "lexicon": not args.no_lexicon,
        "engines": {},
    }
    ranked_by: dict[str, list[list[str]]] = {}
    for engine in engines:
        ranked = rankings(args.catalogue, [q.query for q in queries], engine, not args.no_lexicon)
        ranked_by[engine] = ranked
        metrics, _ = evaluate(queries, lambda _texts, r=ranked: r, depth=10)
        rows, md = table(metrics)
        out["engines"][engine] = {"rows": rows, "all": metrics["all"]}
        if not args.json:
            print(f"\n### engine {engine}, {len(queries)} requests, {out['date']}\n")
            print(md)
    if len(ranked_by) > 1:
        first, *rest = ranked_by.values()
        same = all(r == first for r in rest)
        out["engines_agree"] = same
        if not args.json:
            print(f"\nengines {', '.join(ranked_by)} rank every request the same: {same}")
    if args.json:
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
