"""The evaluation harness: recall, MRR and nDCG as defined, aliases counted as hits."""

from __future__ import annotations

import math

import pytest

from toolsurface.evaluation import EvalQuery, evaluate


def _q(i: str, expected: set[str], lang: str = "en", style: str = "user") -> EvalQuery:
    return EvalQuery(i, f"query {i}", lang, style, frozenset(expected))


def test_metrics_by_hand() -> None:
    queries = [_q("a", {"x"}), _q("b", {"y"}, "ru", "model"), _q("c", {"z"})]
    rankings = [["x", "p"], ["p", "q", "y"], ["p", "q", "r"]]
    metrics, misses = evaluate(queries, lambda _: rankings)
    assert metrics["all"]["recall@1"] == pytest.approx(1 / 3, abs=1e-4)
    assert metrics["all"]["recall@3"] == pytest.approx(2 / 3, abs=1e-4)
    assert metrics["all"]["mrr"] == pytest.approx((1 + 1 / 3) / 3, abs=1e-4)
    ndcg_b = 1 / math.log2(4)
    assert metrics["all"]["ndcg@10"] == pytest.approx((1 + ndcg_b) / 3, abs=1e-4)
    assert metrics["ru/model"]["queries"] == 1
    assert [m.query.id for m in misses] == ["b", "c"]
    assert misses[0].first_rank == 3 and misses[0].above == ("p", "q")


def test_aliases_count_and_ndcg_stays_at_most_one() -> None:
    aliases = {"f": frozenset({"f", "f__2", "f__3"})}
    metrics, _ = evaluate([_q("a", {"f"})], lambda _: [["f__2", "f", "f__3"]], aliases=aliases)
    assert metrics["all"]["recall@1"] == 1.0
    assert metrics["all"]["ndcg@10"] == pytest.approx(1.0)
