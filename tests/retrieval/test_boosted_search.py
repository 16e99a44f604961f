"""The engines' boosted search: every hit times its boosts' factors, the best k kept.

``Index.search_boosted`` must give the boosted ranking by its definition (docs/analysis.md
§8, §10: each admitted hit's plain score, or its fallback's when nothing scores, times the
product of the factors of the boosts holding it, best ``k``, ties by name; written out
again here over a plain search of every document), on both engines alike, on every path:
expansions, the fallback, an admitted set, a boost of no document, two boosts over the same
documents, a document in two boosts.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from conftest import DATA

REL = 1e-9
Hits = tuple[list[int], list[float], bool]


def _by_definition(
    k: int, every: Hits, boosts: list[tuple[list[int], float]], names: list[str]
) -> Hits:
    """Every hit of a plain search of all documents, times its factors; the best ``k``."""
    ids, scores, fallback = every

    def factor(doc: int) -> float:
        f = 1.0
        for members, boost_factor in boosts:
            if doc in members:
                f *= boost_factor
        return f

    boosted = {i: s * factor(i) for i, s in zip(ids, scores)}
    best = sorted(boosted.items(), key=lambda item: (-item[1], names[item[0]]))[:k]
    return [i for i, _ in best], [s for _, s in best], fallback


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((DATA / "scoring_vectors.json").read_text("utf-8"))
    return payload


def _indexes(both_backends: tuple[Any, Any], corpus: dict[str, Any]) -> list[tuple[Any, Any]]:
    names = [d["name"] for d in corpus["documents"]]
    fields = [tuple(d["fields"]) for d in corpus["documents"]]
    lexicon = [tuple(e) for e in corpus["lexicon"]]
    return [(b.index(names, fields), b.lexicon(lexicon)) for b in both_backends]


def _args(case: dict[str, Any]) -> tuple[Any, ...]:
    s = case["settings"]
    return tuple(s["weights"]), tuple(s["b"]), s["k1"], s["expansion_weight"]


def _plans(n: int) -> list[tuple[list[int] | None, list[tuple[list[int], float]]]]:
    """(admitted ids or None, [(boost ids, factor), ...]) covering the rule's cases."""
    evens = list(range(0, n, 2))
    head = list(range(min(5, n)))
    tail = list(range(n - 3, n))
    return [
        (None, [(evens, 1.5)]),
        (None, [(head, 1.3), (evens, 2.0)]),
        (None, [(tail, 4.0), (tail, 1.25)]),
        (None, [([], 3.0)]),
        (evens, [(head, 1.5)]),
        (head, [(tail, 2.0)]),
        (None, [(evens, 1.0)]),
    ]


def test_a_boosted_search_is_its_definition(
    both_backends: tuple[Any, Any], corpus: dict[str, Any]
) -> None:
    indexes = _indexes(both_backends, corpus)
    n = len(corpus["documents"])
    names = [d["name"] for d in corpus["documents"]]
    queries = [c["query"] for c in corpus["cases"]] + ["calendr", "zzzz", ""]
    checked = 0
    for admitted, plan in _plans(n):
        for q in queries:
            for k in (1, 3, 10):
                results = []
                for index, lexicon in indexes:
                    args = _args(corpus["cases"][0])
                    allowed = index.make_filter(admitted) if admitted is not None else None
                    boosts = [(index.make_filter(ids), f) for ids, f in plan]
                    got = index.search_boosted(q, k, *args, lexicon, allowed, boosts)
                    every = index.search(q, n, *args, lexicon, allowed)
                    want = _by_definition(k, every, plan, names)
                    assert got == want, (q, k, admitted, plan)
                    results.append(got)
                pure, native = results
                assert pure[0] == native[0] and pure[2] == native[2], (q, k, plan)
                for x, y in zip(pure[1], native[1]):
                    assert math.isclose(x, y, rel_tol=REL, abs_tol=0.0), (q, x, y)
                checked += 1
    assert checked > 200


def test_a_boost_raises_only_its_own_documents(
    both_backends: tuple[Any, Any], corpus: dict[str, Any]
) -> None:
    case = corpus["cases"][0]
    for index, lexicon in _indexes(both_backends, corpus):
        plain = index.search(case["query"], 10, *_args(case), lexicon, None)
        assert plain[0], "the first scoring case finds something"
        last = plain[0][-1]
        boosted = index.search_boosted(
            case["query"], 10, *_args(case), lexicon, None, [(index.make_filter([last]), 100.0)]
        )
        assert boosted[0][0] == last
        assert boosted[1][0] == plain[1][-1] * 100.0
        # Every other hit keeps its score and its order.
        rest = [(d, s) for d, s in zip(boosted[0], boosted[1]) if d != last]
        assert rest == [(d, s) for d, s in zip(plain[0], plain[1]) if d != last]


@pytest.mark.parametrize("factor", [0.5, float("nan"), float("inf"), -1.0])
def test_a_factor_below_one_or_not_finite_is_refused(
    both_backends: tuple[Any, Any], corpus: dict[str, Any], factor: float
) -> None:
    case = corpus["cases"][0]
    for index, lexicon in _indexes(both_backends, corpus):
        with pytest.raises(ValueError, match="factor"):
            index.search_boosted(
                case["query"], 5, *_args(case), lexicon, None, [(index.make_filter([0]), factor)]
            )


def test_a_boost_never_returns_what_the_run_does_not_admit(
    both_backends: tuple[Any, Any], corpus: dict[str, Any]
) -> None:
    n = len(corpus["documents"])
    admitted = list(range(0, n, 2))
    outside = list(range(1, n, 2))
    for index, lexicon in _indexes(both_backends, corpus):
        for case in corpus["cases"]:
            got = index.search_boosted(
                case["query"],
                10,
                *_args(case),
                lexicon,
                index.make_filter(admitted),
                [(index.make_filter(outside), 5.0)],
            )
            assert set(got[0]) <= set(admitted), case["query"]


def test_k_below_zero_is_refused(both_backends: tuple[Any, Any], corpus: dict[str, Any]) -> None:
    case = corpus["cases"][0]
    for index, lexicon in _indexes(both_backends, corpus):
        with pytest.raises(ValueError, match="k must be"):
            index.search_boosted(
                case["query"], -1, *_args(case), lexicon, None, [(index.make_filter([0]), 2.0)]
            )


def test_no_boosts_or_k_zero_is_a_plain_search(
    both_backends: tuple[Any, Any], corpus: dict[str, Any]
) -> None:
    case = corpus["cases"][0]
    for index, lexicon in _indexes(both_backends, corpus):
        plain = index.search(case["query"], 7, *_args(case), lexicon, None)
        assert index.search_boosted(case["query"], 7, *_args(case), lexicon, None, []) == plain
        zero = index.search_boosted(
            case["query"], 0, *_args(case), lexicon, None, [(index.make_filter([0]), 2.0)]
        )
        assert zero == index.search(case["query"], 0, *_args(case), lexicon, None)
