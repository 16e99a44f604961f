"""The evaluation harness: recall, MRR and nDCG as defined, aliases counted as hits."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from toolsurface import Tool
from toolsurface.errors import CatalogueFormatError
from toolsurface.evaluation import EvalQuery, check_expected, evaluate, load_queries


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


def test_a_functions_pooled_copies_are_one_answer_for_ndcg() -> None:
    # BFCL pools copies of one function under several names: the first of them at rank 1
    # is a perfect answer, not a third of one.
    aliases = {n: frozenset({"f", "f__2", "f__3"}) for n in ("f", "f__2", "f__3")}
    metrics, _ = evaluate([_q("a", {"f"})], lambda _: [["f__3", "p", "q"]], aliases=aliases)
    assert metrics["all"]["ndcg@10"] == pytest.approx(1.0)
    # Two expected tools that are different functions stay two answers.
    metrics, _ = evaluate([_q("b", {"f", "g"})], lambda _: [["f", "p", "g"]], aliases=aliases)
    ideal = 1 + 1 / math.log2(3)
    assert metrics["all"]["ndcg@10"] == pytest.approx((1 + 1 / math.log2(4)) / ideal, abs=1e-4)


def test_query_files_with_a_bom_bad_bytes_or_nothing(tmp_path: Path) -> None:
    line = json.dumps({"id": "q1", "query": "list repos", "expected": ["github__list_repos"]})
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + line.encode())
    assert [q.id for q in load_queries(bom)] == ["q1"]
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CatalogueFormatError, match=r"bin.jsonl: not UTF-8"):
        load_queries(binary)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(CatalogueFormatError, match=r"empty.jsonl: no queries"):
        load_queries(empty)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(CatalogueFormatError, match=r"deep.jsonl"):
        load_queries(deep)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (
            '{"query": "a", "expected": ["x"], "id": ' + "9" * 5000 + "}",
            "q.jsonl line 1: an integer",
        ),
        ('[{"query": "a", "expected": [' + "9" * 5000 + "]}]", "q.jsonl: an integer of more than"),
        ('{"query": "a", "expected": ["x"]}\n{"query": NaN}', "q.jsonl line 2: NaN is not JSON"),
        ('[{"query": "a", "expected": ["x"], "w": Infinity}]', "q.jsonl: Infinity is not JSON"),
    ],
)
def test_query_files_json_cannot_read_name_the_place(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogueFormatError) as err:
        load_queries(path)
    assert fragment in str(err.value)


def test_an_expected_name_not_in_the_catalogue_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": "a", "query": "list pull requests", "expected": ["gh__list_pull_requests"]},
        {"query": "create an issue", "expected": ["gh__create_isue", "gh__create_issue"]},
    ]
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", "utf-8")
    queries = load_queries(path)
    known = {"gh__list_pull_requests", "gh__create_issue", "gh__close_issue"}
    with pytest.raises(CatalogueFormatError) as caught:
        check_expected(queries, known)
    message = str(caught.value)
    assert message.startswith("1 expected name is not in the catalogue:")
    assert f"{path} line 3: expected tool 'gh__create_isue'" in message
    assert "nearest: gh__create_issue" in message
    check_expected(queries[:1], known)  # every name known: no error


def test_the_query_id_and_item_of_a_json_list_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bfcl.json"
    rows = [{"id": f"simple_{i}", "query": "q", "expected": [f"f{i}"]} for i in range(8)]
    path.write_text(json.dumps(rows), "utf-8")
    with pytest.raises(CatalogueFormatError) as caught:
        check_expected(load_queries(path), {"f0"})
    message = str(caught.value)
    assert message.startswith("7 expected names are not in the catalogue:")
    assert f"{path} item 1 (id 'simple_1'): expected tool 'f1'" in message
    assert message.endswith("... and 2 more")
    with pytest.raises(CatalogueFormatError, match="query 'x': expected tool 'y'"):
        check_expected([_q("x", {"y"})], {"z"})  # built by hand: no place in a file


def test_the_fresh_queries_name_catalogue_tools(mcp_tools: list[Tool]) -> None:
    """tests/data/fresh_queries.jsonl (docs/quality.md, "Generalisation"): labels that exist."""
    queries = load_queries(Path(__file__).parent / "data" / "fresh_queries.jsonl")
    check_expected(queries, {t.name for t in mcp_tools})
    groups = {(q.lang, q.style) for q in queries}
    assert groups == {("en", "user"), ("ru", "user")}
    assert sum(q.lang == "en" for q in queries) == sum(q.lang == "ru" for q in queries) >= 100
    assert len({q.id for q in queries}) == len(queries)
