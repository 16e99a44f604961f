"""An index made a part at a time is the index made at once (the native engine's build).

A large catalogue's texts are made a part at a time, each part analysed while the next is
made (``retrieval/engine/parts.py``). These tests build the bundled demo catalogue both
ways, with parts small enough that there are many, and hold every ranking, score and term
of one to the other's; and check that a bad part or a misused analysis fails clearly.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest

from conftest import native_available
from toolsurface.catalogue import demo_catalogue
from toolsurface.registry import ToolRegistry
from toolsurface.retrieval.engine import parts
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.hints.learning import with_learned
from toolsurface.retrieval.resources import char_table_text, stopwords

pytestmark = pytest.mark.skipif(
    not native_available(), reason="the native core is not built (the parts are its build)"
)

QUERIES = [
    json.loads(line)["query"]
    for line in (files("toolsurface") / "data" / "demo_queries.jsonl").read_text().splitlines()
    if line.strip()
]


def _texts() -> tuple[Any, list[str], list[Any]]:
    engine = backend("native")
    tools = sorted(demo_catalogue(), key=lambda t: t.name)
    docs = [engine.fields(t) for t in tools]
    learned = {tools[3].name: "remember my favourite repository", tools[7].name: "ship it"}
    return engine, [t.name for t in tools], with_learned([t.name for t in tools], docs, learned)


def _ranked(index: Any, names: list[str]) -> list[Any]:
    engine = backend("native")
    from toolsurface.models import RetrievalSettings, scoring_args

    searcher = engine.searcher(index, names, scoring_args(RetrievalSettings()), None)
    return [[(h.name, h.score) for h in searcher.search(q, 10)] for q in QUERIES]


@pytest.mark.parametrize("part_docs", [1, 7, 50, 117])
def test_an_index_made_in_parts_ranks_as_the_whole(part_docs: int) -> None:
    engine, names, docs = _texts()
    asked: list[tuple[int, int]] = []

    def part(lo: int, hi: int) -> list[Any]:
        asked.append((lo, hi))
        return docs[lo:hi]

    native = engine.native
    made = parts.index_in_parts(native.Index, engine.analyzer, names, part, part_docs)
    whole = native.Index(engine.analyzer, names, docs)
    # The parts were asked in order, without gaps, each at most part_docs long.
    assert [lo for lo, _ in asked] == list(range(0, len(names), part_docs))
    assert all(hi - lo <= part_docs for lo, hi in asked) and asked[-1][1] == len(names)
    assert made.vocabulary_size() == whole.vocabulary_size()
    assert _ranked(made, names) == _ranked(whole, names)
    for q in QUERIES[:20]:
        assert made.query_terms(q, None, 0.6) == whole.query_terms(q, None, 0.6)


def test_a_catalogue_under_two_parts_is_indexed_at_once() -> None:
    engine, names, docs = _texts()
    asked: list[tuple[int, int]] = []

    def part(lo: int, hi: int) -> list[Any]:
        asked.append((lo, hi))
        return docs[lo:hi]

    parts.index_in_parts(engine.native.Index, engine.analyzer, names, part, len(names))
    assert asked == [(0, len(names))]


def test_a_bad_document_is_named_by_its_place_in_the_catalogue() -> None:
    engine, names, docs = _texts()
    docs[60] = ("only", "three", "texts")

    with pytest.raises(TypeError, match=r"fields\[60\] must be five or six strings"):
        parts.index_in_parts(
            engine.native.Index, engine.analyzer, names, lambda lo, hi: docs[lo:hi], 25
        )


def test_a_failing_part_fails_the_build() -> None:
    engine, names, docs = _texts()

    def part(lo: int, hi: int) -> list[Any]:
        if lo >= 100:
            raise RuntimeError(f"texts of {lo}..{hi} unavailable")
        return docs[lo:hi]

    with pytest.raises(RuntimeError, match=r"texts of 100\.\.125 unavailable"):
        parts.index_in_parts(engine.native.Index, engine.analyzer, names, part, 25)


def test_an_analysis_is_used_once_and_only_with_its_analyser() -> None:
    engine, names, docs = _texts()
    index = engine.native.Index
    analysed = index.analyse(engine.analyzer, names, docs)
    assert len(analysed) == len(names)
    index.assembled(engine.analyzer, names, [analysed])
    with pytest.raises(ValueError, match="in an index already"):
        index.assembled(engine.analyzer, names, [analysed])
    # Another analyser, even of the same tables, read other texts: never assembled together.
    other = engine.native.Analyzer(char_table_text(), list(stopwords()))
    fresh = index.analyse(engine.analyzer, names, docs)
    with pytest.raises(ValueError, match="another analyser"):
        index.assembled(other, names, [fresh])
    # A part used already fails the call and leaves the others usable.
    first, second = (index.analyse(engine.analyzer, [n], [d]) for n, d in zip(names[:2], docs))
    index.assembled(engine.analyzer, names[:1], [first])
    with pytest.raises(ValueError, match=r"parts\[1\]: these analysed documents"):
        index.assembled(engine.analyzer, names[:2], [second, first])
    assert len(index.assembled(engine.analyzer, names[1:2], [second])) == 1
    # One part listed twice is refused before any is taken: it stays usable.
    third = index.analyse(engine.analyzer, names[2:3], docs[2:3])
    with pytest.raises(ValueError, match=r"parts\[1\]: the same analysed documents as parts\[0\]"):
        index.assembled(engine.analyzer, names[2:3] * 2, [third, third])
    assert len(index.assembled(engine.analyzer, names[2:3], [third])) == 1
    short = index.analyse(engine.analyzer, names[:10], docs[:10])
    with pytest.raises(ValueError, match=f"{len(names)} names but 10 field tuples"):
        index.assembled(engine.analyzer, names, [short])


def test_a_registry_past_two_parts_searches_as_the_pure_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parts, "PART_DOCS", 16)
    tools = demo_catalogue()
    native = ToolRegistry(tools, engine="native")
    pure = ToolRegistry(tools, engine="pure")
    for registry in (native, pure):
        registry.learn("ship the pending change to main", "github__merge_pull_request")
    for q in QUERIES:
        got = [(h.name, round(h.score, 9)) for h in native.search(q)]
        assert got == [(h.name, round(h.score, 9)) for h in pure.search(q)], q
