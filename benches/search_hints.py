"""What writing ``search_hint`` for tools buys: hints made by a fixed rule, measured.

    PYTHONPATH=python python benches/search_hints.py [--catalogue FILE] [--queries FILE]
                                                     [--show N] [--json]

The convention under test (for docs/tools.md)
---------------------------------------------
A tool's ``search_hint`` is a short line of words a user or a model would type for the
tool that its name and description do not already contain:

- synonyms of its action ("nuke remove erase" for delete, "look up" for search);
- the object's other names and abbreviations ("PR" for pull request, "k8s");
- for a host whose users write Russian, the Russian words for its action and object
  ("удалить ветку" for delete_branch).

A hint is a dozen words at most, no sentences, and never words already in the name or the
description (the index has those: repeating them only tilts the scores).

How the hints here are made
---------------------------
Hand-written hints could be tailored, knowingly or not, to the evaluation queries, so this
study writes none: ``make_hint`` applies one fixed rule to the tool and the bundled lexicon
(``python/toolsurface/data/lexicon.tsv``, lines ``source<TAB>targets``), and never reads a
query:

1. Analyse the tool's name, summary (first sentence) and whole description into index
   terms with the live engine's analyser; the name's terms, in order, distinct, are the
   terms to hint for.
2. A lexicon entry is a candidate for a name term when the analysed targets contain that
   term, and its source adds something: not every term of the source is already among the
   tool's name and description terms.
3. Candidates for one name term are ordered: first the entries whose targets all occur in
   the tool's name or summary (``pr -> pull request`` for a pull-request tool, before
   ``запрос -> request query``), then the rest; within each, lexicon file order.
4. Take one candidate per name term in turn (round robin over the name's terms, in name
   order) until ``HINT_MAX_WORDS`` words or no candidate is left; a source whose terms the
   hint already holds is skipped. The hint is the sources joined by spaces.

The sources are exactly what people type: Russian words and phrases, English synonyms and
abbreviations. Hints therefore carry the lexicon into the index. With the lexicon on, a
query such as "удали ветку" is expanded to "delete branch" AND now also meets "удалить" and
"ветка" in the hint field, so the study asks whether that second path still adds anything;
with the lexicon off (``lexicon=None``), the hints are the only way Russian reaches the
index.

What is measured
----------------
``toolsurface.evaluation.evaluate`` over the labelled development queries (``dev.jsonl``),
recall@1/3/5 and MRR per group (en/model, en/user, ru/model, ru/user, all), on the real
catalogue (the 1,635 MCP tools), for lexicon on/off x hints none/generated. Prints a
markdown table (``--json``: the figures as JSON); ``--show N`` prints N example hints.

``--variants`` adds a second table (recall@1 / MRR) for three variants of the rule, to see
whether the result is an artefact of one choice: ``no-server`` hints only the name's terms
after the server prefix (``github__``), i.e. the action and the object; ``ru-only`` takes
only Russian sources; ``en-only`` only English ones. The variants were added after the
first run showed hints losing with the lexicon on; they are a robustness check, not a
search for the rule that scores best on these queries.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import toolsurface
from toolsurface import Tool, ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import EvalQuery, evaluate, load_queries
from toolsurface.registry import DEFAULT_LEXICON
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.fields import split_description
from toolsurface.retrieval.resources import default_lexicon_entries

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
GROUPS = ("en/model", "en/user", "ru/model", "ru/user", "all")
METRICS = ("recall@1", "recall@3", "recall@5", "mrr")
#: A hint holds at most this many words.
HINT_MAX_WORDS = 12
#: The rule and its variants: (what it does, hint the server prefix?, which sources).
VARIANTS = {
    "rule": ("the rule of the module docs", True, "all"),
    "no-server": ("name terms after the server prefix only", False, "all"),
    "ru-only": ("Russian sources only", True, "ru"),
    "en-only": ("English sources only", True, "en"),
}
_CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    """A lexicon entry with its source and targets analysed, and its place in the file."""

    order: int
    source: str
    source_terms: frozenset[str]
    target_terms: frozenset[str]


def analysed_lexicon(tokens: Any) -> list[Entry]:
    """The bundled lexicon's entries with both sides analysed, in file order."""
    return [
        Entry(i, source, frozenset(tokens(source)), frozenset(tokens(targets)))
        for i, (source, targets) in enumerate(default_lexicon_entries())
    ]


def make_hint(tool: Tool, lexicon: Sequence[Entry], tokens: Any) -> str:
    """The hint the fixed rule of the module docs gives ``tool`` (empty when none fits)."""
    name_terms = list(dict.fromkeys(tokens(tool.name)))
    summary = split_description(tool.description)[0]
    near = set(name_terms) | set(tokens(summary))
    own = near | set(tokens(tool.description))
    queues: list[list[Entry]] = []
    for term in name_terms:
        fits = [e for e in lexicon if term in e.target_terms and not e.source_terms <= own]
        fits.sort(key=lambda e: (not e.target_terms <= near, e.order))
        queues.append(fits)
    words: list[str] = []
    held: set[str] = set()
    while any(queues):
        for queue in queues:
            while queue and queue[0].source_terms <= held:
                queue.pop(0)
            if not queue:
                continue
            entry = queue.pop(0)
            n = len(entry.source.split())
            if len(words) + n > HINT_MAX_WORDS:
                return " ".join(words)
            words.extend(entry.source.split())
            held |= entry.source_terms
    return " ".join(words)


def variant_hints(
    tools: Sequence[Tool], lexicon: Sequence[Entry], tokens: Any, variant: str
) -> dict[str, str]:
    """Each tool's hint under one variant of the rule (``VARIANTS``)."""
    _, server, sources = VARIANTS[variant]
    if sources != "all":
        lexicon = [e for e in lexicon if bool(_CYRILLIC.search(e.source)) == (sources == "ru")]
    hints = {}
    for t in tools:
        shown = t if server else t.model_copy(update={"name": t.name.split("__", 1)[-1]})
        hints[t.name] = make_hint(shown, lexicon, tokens)
    return hints


def with_hints(tools: Sequence[Tool], hints: dict[str, str]) -> list[Tool]:
    """The tools with their generated hints set (a host's own hint kept ahead of it)."""
    out = []
    for t in tools:
        hint = " ".join(h for h in (t.search_hint, hints.get(t.name, "")) if h)
        out.append(t.model_copy(update={"search_hint": hint}))
    return out


def measure(
    tools: Sequence[Tool], queries: Sequence[EvalQuery], lexicon: Any
) -> dict[str, dict[str, float]]:
    """The evaluation harness's figures for one catalogue and lexicon setting."""
    registry = ToolRegistry(tools, lexicon=lexicon)

    def rank(texts: Sequence[str]) -> list[list[str]]:
        return [[h.name for h in hits] for hits in registry.search_many(list(texts), k=10)]

    metrics, _ = evaluate(queries, rank)
    return metrics


def table(results: dict[str, dict[str, dict[str, dict[str, float]]]]) -> str:
    """A markdown table: each group and lexicon setting, without -> with hints (change)."""
    lines = [
        "| lexicon | group | n | " + " | ".join(m.replace("recall", "R") for m in METRICS) + " |",
        "| --- | --- | ---: | " + " | ".join("---" for _ in METRICS) + " |",
    ]
    for lex in ("on", "off"):
        for group in GROUPS:
            base = results[lex]["none"][group]
            hint = results[lex]["hints"][group]
            cells = [f"{base[m]:.3f} → {hint[m]:.3f} ({hint[m] - base[m]:+.3f})" for m in METRICS]
            lines.append(
                f"| {lex} | {group} | {int(base['queries'])} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines)


def variants_table(
    base: dict[str, dict[str, dict[str, float]]],
    runs: dict[str, dict[str, dict[str, dict[str, float]]]],
) -> str:
    """A markdown table of recall@1 / MRR per group for no hints and each variant."""
    lines = [
        "| hints | lexicon | " + " | ".join(GROUPS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in GROUPS) + " |",
    ]
    for lex in ("on", "off"):
        for label, figures in [("none", base[lex])] + [(v, runs[v][lex]) for v in runs]:
            cells = [f"{figures[g]['recall@1']:.3f} / {figures[g]['mrr']:.3f}" for g in GROUPS]
            lines.append(f"| {label} | {lex} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Generate the hints, run the four configurations, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    ap.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    ap.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    ap.add_argument("--show", type=int, default=0, help="print this many example hints")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--variants", action="store_true", help="also run the rule's variants")
    args = ap.parse_args(argv)

    started = time.perf_counter()
    _, tools = load_catalogue(args.catalogue)
    queries = load_queries(args.queries)
    tokens = backend(toolsurface.engine()).tokens
    lexicon = analysed_lexicon(tokens)
    hints = variant_hints(tools, lexicon, tokens, "rule")
    hinted = with_hints(tools, hints)
    made = time.perf_counter() - started

    results: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for lex_name, lex in (("on", DEFAULT_LEXICON), ("off", None)):
        results[lex_name] = {
            "none": measure(tools, queries, lex),
            "hints": measure(hinted, queries, lex),
        }
    runs: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    if args.variants:
        for variant in VARIANTS:
            other = results if variant == "rule" else None
            if other is None:
                made_v = with_hints(tools, variant_hints(tools, lexicon, tokens, variant))
                other = {
                    "on": {"hints": measure(made_v, queries, DEFAULT_LEXICON)},
                    "off": {"hints": measure(made_v, queries, None)},
                }
            runs[variant] = {lex: other[lex]["hints"] for lex in ("on", "off")}
    took = time.perf_counter() - started

    counts = [len(h.split()) for h in hints.values() if h]
    stats = {
        "tools": len(tools),
        "tools_with_hint": len(counts),
        "mean_words": round(sum(counts) / len(counts), 2) if counts else 0.0,
        "engine": toolsurface.engine(),
        "queries": len(queries),
        "hint_seconds": round(made, 2),
        "seconds": round(took, 2),
    }
    if args.json:
        json.dump(
            {"stats": stats, "results": results, "variants": runs, "hints": hints},
            sys.stdout,
            ensure_ascii=False,
            indent=1,
        )
        sys.stdout.write("\n")
        return 0
    print(
        f"{stats['tools_with_hint']} of {stats['tools']} tools got a hint "
        f"(mean {stats['mean_words']} words); {stats['queries']} queries; "
        f"engine {stats['engine']}; hints made in {made:.2f} s, all in {took:.2f} s"
    )
    if args.show:
        step = max(1, len(tools) // args.show)
        for t in tools[::step][: args.show]:
            print(f"  {t.name}: {hints[t.name]}")
    print()
    print(table(results))
    if runs:
        base = {lex: results[lex]["none"] for lex in ("on", "off")}
        print()
        print("Variants of the rule, recall@1 / MRR:")
        print()
        print(variants_table(base, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
