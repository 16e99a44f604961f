"""The semantic fusion's weights chosen over every request set this project has.

    python benches/fusion_sets.py [--cache DIR] [--json FILE]

Needs ``toolsurface[semantic]``, ``../shared/data`` and the public sets converted by
``scripts/public_toolsets.py`` (a set not there is left out, named). The sets: the bundled
demo's requests, the development requests, the multilingual set, the requests of several steps
and the second multilingual set (``benches/data``), the unseen user-style requests
(``tests/data/fresh_queries.jsonl``),
BFCL (pooled: any expected function of the whole catalogue is a hit), ToolLens,
StableToolBench, MCPToolBench++, API-Bank, Seal-Tools, ToolAlpaca and RestBench.

For each request, once (native engine, groups per server as ``toolsurface eval`` declares
them): the lexical first 50 (names and scores), the even ranking's first 50 (the same
search with every field weighing alike, ``retrieval/even.py``), the encoder's first 50 and,
the English encoder's first 50 (``retrieval/minilm.py``: of the request read as English, else of
its English gloss, ``retrieval/gloss.py``, if it has one).
Then every setting of a grid (``semantic_k`` x confident weight x flat weight x even
weight x English weight) is scored by ``fuse_semantic`` on every set, against the fusion
as it was shipped before the English encoder (flat 1.5, even 1, English 0): the
pick is the setting whose smallest recall@3 gain over the sets is largest when none loses,
then by mean gain. Also printed: each set left out in turn (the pick on the other sets,
scored on it), and the lexical ranking, the encoder alone, the English encoder alone (on
the requests read as English) and bm25s per set, the baselines of issue 39.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import Bm25sAdapter, peer_text
from public_sets import SETS as PUBLIC

from toolsurface import ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import EvalQuery, declare_server_groups, load_queries
from toolsurface.registry import DEFAULT_LEXICON
from toolsurface.registry.registry import _looking_only
from toolsurface.retrieval.even import even_settings
from toolsurface.retrieval.fusion import FusionSettings, fuse_semantic

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLSURFACE_SHARED", ROOT.parent / "shared")) / "data"
#: The fusion as shipped before the English encoder.
BEFORE = FusionSettings(flat_weight=1.5, even_weight=1.0, english_weight=0.0)
DEPTH = 50
#: Per request: lexical names and scores, even names, semantic names, English names, and
#: whether its words match only through its verbs of looking (the lexical rankings are then
#: left out of the fusion, as the registry does: ``retrieval/looking.py``).
Row = tuple[list[str], list[float], list[str], list[str], list[str], bool]


def sets(cache: Path) -> dict[str, tuple[Path, Path]]:
    mcp = SHARED / "catalogue" / "mcp_tools.json"
    data = ROOT / "python" / "toolsurface" / "data"
    out = {
        "demo": (data / "demo_catalogue.json", data / "demo_queries.jsonl"),
        "dev": (mcp, SHARED / "queries" / "dev.jsonl"),
        "multilingual": (mcp, ROOT / "benches" / "data" / "multilingual.jsonl"),
        "fresh": (mcp, ROOT / "tests" / "data" / "fresh_queries.jsonl"),
        "multistep": (mcp, ROOT / "benches" / "data" / "multistep.jsonl"),
        "multilingual_fresh": (mcp, ROOT / "benches" / "data" / "multilingual_fresh.jsonl"),
        "bfcl": (
            SHARED / "catalogue" / "bfcl_functions.json",
            SHARED / "catalogue" / "bfcl_queries.json",
        ),
    }
    for name in PUBLIC:
        out[name] = (cache / name / "catalogue.json", cache / name / "queries.jsonl")
    return out


def rankings(
    catalogue: Path, queries: Sequence[EvalQuery]
) -> tuple[list[Row], list[list[str]], list[bool]]:
    """Per request: lexical names and scores, even, semantic, English names; bm25s's; and
    whether it is read as English."""
    _, tools = load_catalogue(catalogue)
    lexical_only, registry = (
        ToolRegistry(lexicon=DEFAULT_LEXICON, semantic=on) for on in (False, True)
    )
    for r in (lexical_only, registry):
        r.register_many(tools, where=str(catalogue))
        declare_server_groups(r)
    registry.prepare()
    semantic, english, built = registry.semantic, registry.english, registry._current()
    assert semantic is not None and english is not None
    table = registry._semantic_table(semantic, built)
    table_en = registry._semantic_table(english, built)
    assert table is not None and table_en is not None
    even = even_settings(lexical_only.settings)
    # As the registry ranks them: an English request as it is, another by its gloss
    # (``gloss.english_reading``).
    searcher = lexical_only._searcher(lexical_only._current(), lexical_only.settings)
    found_en = registry._english_ranking(
        built,
        [q.query for q in queries],
        FusionSettings(),
        None,
        registry.settings.expansion_weight,
    )
    rows: list[Row] = []
    for q, near_en in zip(queries, found_en):
        lexical = lexical_only.search(q.query, k=DEPTH)
        spread = lexical_only.search(q.query, k=DEPTH, settings=even)
        near = semantic.rank(q.query, *table[:2]) if lexical else []
        names, scores = [h.name for h in lexical], [h.score for h in lexical]
        looking = (
            bool(lexical) and not lexical[0].fallback and _looking_only(searcher, q.query, None)
        )
        rows.append(
            (names, scores, [h.name for h in spread], near, near_en if lexical else [], looking)
        )
    peer = Bm25sAdapter(stem=True, backend="numpy")
    peer.build([t.name for t in tools], [peer_text(t) for t in tools], tools)
    read = [built.index.query_language(q.query) == "en" for q in queries]
    return rows, peer.search_batch([q.query for q in queries], DEPTH), read


def fused(rows: Sequence[Row], how: FusionSettings) -> list[list[str]]:
    return [
        (
            fuse_semantic([], [], near, how, (), english)[0]
            if looking
            else fuse_semantic(n, s, near, how, even, english)[0]
        )
        if near
        else n
        for n, s, even, near, english, looking in rows
    ]


def english_requests_only(rows: Sequence[Row], read: Sequence[bool]) -> list[Row]:
    """``rows`` with the English ranking of the requests not read as English left out."""
    return [r if en else (*r[:4], [], r[5]) for r, en in zip(rows, read)]


def english_alone(queries: Sequence[EvalQuery], rows: Sequence[Row]) -> float:
    """The English encoder's recall@3 on the requests it ranks (read as English); nan if none."""
    pairs = [(q, r[4]) for q, r in zip(queries, rows) if r[4]]
    return recall3([q for q, _ in pairs], [r for _, r in pairs]) if pairs else float("nan")


def recall3(queries: Sequence[EvalQuery], ranked: Sequence[list[str]]) -> float:
    return sum(bool(set(r[:3]) & q.expected) for q, r in zip(queries, ranked)) / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(
            os.environ.get(
                "TOOLSURFACE_PUBLIC_DATA", Path.home() / ".cache" / "toolsurface" / "public"
            )
        ),
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    data: dict[str, tuple[list[EvalQuery], list[Row]]] = {}
    print(
        "| set | requests | lexical | encoder alone | English encoder alone | bm25s "
        "| fused without it | fused, English requests only | fused now |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    report: dict[str, Any] = {"sets": {}}
    for name, (catalogue, query_file) in sets(args.cache).items():
        if not catalogue.exists() or not query_file.exists():
            print(f"(left out: {name}, no {catalogue} or {query_file})")
            continue
        queries = load_queries(query_file)
        rows, bm25s, read = rankings(catalogue, queries)
        data[name] = (queries, rows)
        figures = {
            "lexical": recall3(queries, [r[0] for r in rows]),
            "encoder": recall3(queries, [r[3] for r in rows]),
            "english": english_alone(queries, rows),
            "bm25s": recall3(queries, bm25s),
            "before": recall3(queries, fused(rows, BEFORE)),
            "english_only": recall3(
                queries, fused(english_requests_only(rows, read), FusionSettings())
            ),
            "now": recall3(queries, fused(rows, FusionSettings())),
        }
        report["sets"][name] = figures
        print(
            f"| {name} | {len(queries)} | "
            + " | ".join(f"{v:.3f}" for v in figures.values())
            + " |",
            flush=True,
        )
    grid = [
        FusionSettings(
            semantic_k=k, confident_weight=c, flat_weight=f, even_weight=e, english_weight=w
        )
        for k, c, f, e, w in itertools.product(
            (6.0, 10.0), (2.0, 3.0), (1.5, 2.0), (0.5, 1.0), (0.0, 0.5, 1.0, 1.25, 1.5, 2.0)
        )
        if f <= c
    ]
    names = list(data)
    base = [recall3(q, fused(r, BEFORE)) for q, r in data.values()]
    scored = [(h, [recall3(q, fused(r, h)) for q, r in data.values()]) for h in grid]

    def key(item: tuple[FusionSettings, list[float]], skip: int = -1) -> tuple[bool, float]:
        gains = [a - b for i, (a, b) in enumerate(zip(item[1], base)) if i != skip]
        return min(gains) >= -1e-9, sum(gains) / len(gains)

    def short(h: FusionSettings) -> str:
        weights = f"confident {h.confident_weight:g}, flat {h.flat_weight:g}"
        others = f"even {h.even_weight:g}, English {h.english_weight:g}"
        return f"k {h.semantic_k:g}, {weights}, {others}"

    pick = max(scored, key=key)
    print(
        f"\npick over {len(names)} sets ({len(grid)} settings): {short(pick[0])}; "
        f"default: {short(FusionSettings())}"
    )
    print(
        "  the pick's recall@3 (gain): "
        + ", ".join(f"{n} {v:.3f} ({v - b:+.3f})" for n, v, b in zip(names, pick[1], base))
    )
    report["pick"] = short(pick[0])
    report["left_out"] = {}
    for j, name in enumerate(names):
        h, s = max(scored, key=lambda item, j=j: key(item, j))
        report["left_out"][name] = {"pick": short(h), "gain": s[j] - base[j]}
        print(f"  {name} left out: pick {short(h)}, its recall@3 gain there {s[j] - base[j]:+.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), "utf-8")


if __name__ == "__main__":
    main()
