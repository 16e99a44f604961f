"""Parity of the two engines: conformance files, random text and catalogues, the real data.

Same token stream, same ranking, scores equal within 1e-9 relative: a contract, checked
here on every path a search can take (expansion, fallback, filters, settings).
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, read_jsonl
from toolsurface.registry import ToolRegistry, tool_fields

REL = 1e-9


def _same_hits(
    a: tuple[list[int], list[float], bool], b: tuple[list[int], list[float], bool], where: str
) -> None:
    assert a[0] == b[0], f"{where}: rankings differ"
    assert a[2] == b[2], f"{where}: fallback differs"
    for x, y in zip(a[1], b[1]):
        assert math.isclose(x, y, rel_tol=REL, abs_tol=0.0), f"{where}: {x} != {y}"


def test_analysis_vectors_both_engines(both_backends: tuple[Any, Any]) -> None:
    for backend in both_backends:
        for v in read_jsonl(DATA / "analysis_vectors.jsonl"):
            assert backend.tokens(v["text"]) == v["tokens"], (backend.name, v["text"])


def test_scoring_vectors_both_engines(both_backends: tuple[Any, Any]) -> None:
    payload = json.loads((DATA / "scoring_vectors.json").read_text("utf-8"))
    names = [d["name"] for d in payload["documents"]]
    fields = [tuple(d["fields"]) for d in payload["documents"]]
    assert len(payload["cases"]) >= 40
    for backend in both_backends:
        index = backend.index(names, fields)
        lexicon = backend.lexicon([tuple(e) for e in payload["lexicon"]])
        for case in payload["cases"]:
            s = case["settings"]
            got = index.search(
                case["query"],
                10,
                tuple(s["weights"]),
                tuple(s["b"]),
                s["k1"],
                s["expansion_weight"],
                lexicon,
                None,
            )
            want = ([names.index(n) for n in case["names"]], case["scores"], case["fallback"])
            _same_hits(got, want, f"{backend.name}: {case['query']!r}")


_ALPHABET = st.sampled_from(
    list("abcXYZ019_-. ")
    + list("пулРЕКВЕСТёЁ")
    + ["\u0301", "\u200b", "\u202e", "🚀", "İ", "ß", "Σ", "日", "\ufe0f", "٣", "Ⅻ", "ǅ", "\t", "\n"]
)
_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=60),
    st.text(_ALPHABET, max_size=60),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_random_text_same_tokens(both_backends: tuple[Any, Any], text: str) -> None:
    pure, native = both_backends
    assert pure.tokens(text) == native.tokens(text)


_WORDS = st.sampled_from(
    (
        "list open pull request requests issue create delete send message channel deploy "
        "service restart file read write calendar event meeting ticket archive merge "
        "review пулреквест тикет созвон канал сообщение открытые покажи задеплой the a "
        "of BrowserOpen getHTTPCode k8s v2 pod pods logs "
        # identifiers the query analysis weighs apart: issue keys, file names, the words of
        # the ask and subject markers (docs/analysis.md §4)
        "ENG-1423 K8S-7 eng-5 notes.txt app.YAML node.js can you go ahead and можешь "
        "about ABOUT про насчёт mentioning "
    ).split()
)
_FIELD = st.lists(_WORDS, max_size=12).map(" ".join)
# Requests with payload marks (quotes, "word: ") and numbers between and inside the words.
_MARKS = st.sampled_from(
    [
        ":",
        ": ",
        ":\u200b ",
        ":eyes: ",
        " :+1:\u200b ",
        '"',
        "\u201c",
        "\u201d",
        "\u00ab",
        "\u00bb",
        "\n",
        "231",
        "1.8.2",
        # paths: a "/" between identifiers, class-I characters beside it
        "/",
        "\u200b/",
        "./",
        "CI/CD",
        "platform/api",
    ]
)
_DATED = st.lists(
    st.sampled_from(["2023-04-15", "4\u200b2", "\u0663", "v2", "k8s"]), max_size=6
).map(" ".join)
_QUERY = st.lists(st.one_of(_WORDS, _MARKS), max_size=12).map(" ".join) | st.lists(
    st.one_of(_WORDS, _MARKS), max_size=12
).map("".join)


@st.composite
def _catalogue(draw: st.DrawFn) -> list[tuple[str, tuple[str, str, str, str, str]]]:
    n = draw(st.integers(1, 25))
    names = draw(
        st.lists(
            st.from_regex(r"[a-z]{1,6}(__[a-z_]{1,8})?", fullmatch=True),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    return [
        (name, (name, draw(_FIELD), draw(_FIELD), draw(_FIELD), draw(_FIELD))) for name in names
    ]


_WEIGHT = st.floats(0.0, 5.0, allow_nan=False)
_B = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=_catalogue(),
    queries=st.lists(st.one_of(_FIELD, _TEXT, _QUERY, _DATED), min_size=1, max_size=4),
    weights=st.tuples(_WEIGHT, _WEIGHT, _WEIGHT, _WEIGHT, _WEIGHT),
    b=st.tuples(_B, _B, _B, _B, _B),
    k1=st.floats(0.05, 4.0),
    ew=st.floats(0.0, 2.0),
    k=st.integers(0, 12),
    filtered=st.booleans(),
)
def test_random_catalogues_same_results(
    both_backends: tuple[Any, Any],
    docs: list[Any],
    queries: list[str],
    weights: Any,
    b: Any,
    k1: float,
    ew: float,
    k: int,
    filtered: bool,
) -> None:
    names = [d[0] for d in docs]
    fields = [d[1] for d in docs]
    lex_entries = [
        ("пулреквест", "pull request"),
        ("созвон", "meeting event"),
        ("k8s", "pods"),
        ("pull request", "merge review"),  # keys of several words: weighed by their heaviest
        ("open pull request", "list"),
        ("<issue-key>", "issue ticket"),
    ]
    built = []
    for backend in both_backends:
        index = backend.index(names, fields)
        allowed = index.make_filter(list(range(0, len(names), 2))) if filtered else None
        built.append((backend, index, backend.lexicon(lex_entries), allowed))
    for q in queries:
        results = [
            index.search(q, k, weights, b, k1, ew, lex, allowed) for _, index, lex, allowed in built
        ]
        _same_hits(results[0], results[1], repr(q))
        terms = [index.query_terms(q, lex, ew) for _, index, lex, _ in built]
        assert terms[0] == terms[1]
        if results[0][0]:
            doc = results[0][0][0]
            ex = [
                index.explain(q, doc, weights, b, k1, ew, lex, results[0][2])
                for _, index, lex, _ in built
            ]
            assert [r[0] for r in ex[0]] == [r[0] for r in ex[1]]
            for ra, rb in zip(ex[0], ex[1]):
                for x, y in zip(ra[2], rb[2]):
                    assert math.isclose(x, y, rel_tol=REL, abs_tol=1e-300)


@pytest.mark.slow
def test_real_catalogue_every_dev_query(
    both_backends: tuple[Any, Any], mcp_tools: list[Any], dev_queries: list[dict[str, Any]]
) -> None:
    registries = [ToolRegistry(mcp_tools, engine=b.name) for b in both_backends]
    queries = [q["query"] for q in dev_queries]
    results = [r.search_many(queries, k=10) for r in registries]
    for q, pure_hits, native_hits in zip(queries, *results):
        assert [h.name for h in pure_hits] == [h.name for h in native_hits], q
        for a, b in zip(pure_hits, native_hits):
            assert math.isclose(a.score, b.score, rel_tol=REL, abs_tol=0.0), q
    assert sum(1 for r in results[0] if r) >= 0.95 * len(queries)


def test_fields_are_engine_independent(mcp_tools: list[Any]) -> None:
    sample = mcp_tools[::97]
    assert all(len(tool_fields(t)) == 5 for t in sample)


def _large_catalogue(n: int, ordered: bool) -> tuple[list[str], list[tuple[str, ...]]]:
    """``n`` short documents over a small Zipf-like vocabulary: long postings, many exact ties."""
    rng = random.Random(n)
    words = [f"{a}{b}" for a in ("list", "get", "run", "pod", "repo", "mail") for b in "xyzw"]
    weights = [1.0 / (i + 1) for i in range(len(words))]

    def text(most: int) -> str:
        return " ".join(rng.choices(words, weights, k=rng.randint(0, most)))

    names = [f"t{(i if ordered else n - i):06d}" for i in range(n)]
    fields = [[text(2), text(1), text(3), text(4), text(3)] for _ in range(n)]
    # Rare words whose few postings straddle the native scan's block ends (32,768 and
    # 65,536) far from their first or last: the boundary is then guessed far off.
    edges = {
        "edgea": [32_760, n - 10],
        "edgeb": [10, 32_767, 32_768, 65_535, 65_536],
        "edgec": [0, 1, 2, 3, 65_600],
        "edged": [32_000, 32_001, 65_530, n - 1],
    }
    for word, docs in edges.items():
        for d in docs:
            fields[d][3] += f" {word}"
    return names, [tuple(f) for f in fields]


@pytest.mark.slow
@pytest.mark.parametrize("ordered", [True, False], ids=["names-in-id-order", "names-descending"])
def test_more_documents_than_a_scan_block(both_backends: tuple[Any, Any], ordered: bool) -> None:
    """Over 65,536 documents the native scan goes block by block (32,768 ids, one block's
    accumulator reused, each term's block boundary found by a gallop) and, with names in id
    order, orders equal scores by id: the pure engine must rank every query alike."""
    names, fields = _large_catalogue(70_000, ordered)
    lex_entries = [("почта", "mailx mailz"), ("под", "podx")]
    built = []
    for backend in both_backends:
        index = backend.index(names, fields)
        allowed = index.make_filter(list(range(0, len(names), 3)))
        built.append((index, backend.lexicon(lex_entries), allowed))
    settings_ = ((1.0, 0.5, 2.0, 0.25, 1.5), (0.75, 0.2, 0.5, 1.0, 0.0), 1.2, 0.7)
    queries = ["listx", "listx getw", "mailw runz podx", "почта repoy", "podw repow mailw listz"]
    queries += ["edgea", "edgeb listy", "edgec edgea", "edged edgeb edgec"]
    for q in queries:
        for k in (1, 10, 65, 300):
            for use_filter in (False, True):
                got = [
                    index.search(q, k, *settings_, lex, allowed if use_filter else None)
                    for index, lex, allowed in built
                ]
                assert len(got[0][0]) == k or q.startswith("edge"), (q, k)
                _same_hits(got[0], got[1], f"{q!r} k={k} filter={use_filter}")


@pytest.mark.parametrize("query", ["", "   ", "the", "?!", "of the"])
def test_a_query_without_terms_answers_the_first_k_in_order_on_both_engines(
    both_backends: tuple[Any, Any], query: str
) -> None:
    names = ["zeta_tool", "alpha_tool", "mid_tool", "beta_tool"]
    answers = []
    for b in both_backends:
        reg = ToolRegistry(engine=b.name)
        for n in names:
            reg.register(_parity_tool(n))
        admitted = {"mid_tool", "beta_tool", "zeta_tool"}
        answers.append(
            (
                reg.search(query, k=3),
                reg.search(query, k=2, admitted=admitted, explain=True),
                reg.search_many([query, "alpha"], k=2),
                reg.search_many([query], k=2, admitted=admitted),
                reg.search(query, k=0),
            )
        )
    assert answers[0] == answers[1]
    plain, filtered, many, many_filtered, none = answers[0]
    assert [(h.name, h.score, h.rank) for h in plain] == [
        ("zeta_tool", 0.0, 1),
        ("alpha_tool", 0.0, 2),
        ("mid_tool", 0.0, 3),
    ]
    assert [h.name for h in filtered] == ["zeta_tool", "mid_tool"]
    assert all(h.explanation == () and not h.fallback for h in filtered)
    assert [h.name for h in many[0]] == ["zeta_tool", "alpha_tool"]
    assert many[1][0].name == "alpha_tool" and many[1][0].score > 0
    assert [h.name for h in many_filtered[0]] == ["zeta_tool", "mid_tool"]
    assert none == []
    for b in both_backends:  # a query with terms that match nothing still answers nothing
        reg = ToolRegistry([_parity_tool(n) for n in names], engine=b.name)
        assert reg.search("qqxxzz") == []
        assert reg.search_many(["qqxxzz"]) == [[]]


def _parity_tool(name: str) -> Any:
    from toolsurface import Tool

    return Tool(name=name, description=f"Does {name.replace('_', ' ')}.")
