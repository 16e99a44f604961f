"""The README's demo figures are what ``toolsurface eval`` prints on a clone, on both engines.

The figures are read from the README's table, so the page and the eval cannot drift apart.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, native_available
from toolsurface.cli import main
from toolsurface.evaluation import demo_queries

#: The README table's rows, by the eval group each one states.
ROWS = {"all": "all", "English": "lang=en", "Russian": "lang=ru"}
COLUMNS = ("queries", "recall@1", "recall@3", "recall@10", "mrr", "ndcg@10")
_MARK = "<!-- demo-figures:"


def readme_figures() -> dict[str, dict[str, float]]:
    """The demo table under the README's ``demo-figures`` mark: group -> metric -> figure."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(_MARK) == 1, "the README must mark its demo table once"
    table = text[text.index(_MARK) :].split("\n\n", 1)[0]
    figures = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ROWS:
            assert len(cells) == 1 + len(COLUMNS), f"README demo row: {line!r}"
            figures[ROWS[cells[0]]] = dict(zip(COLUMNS, map(float, cells[1:]), strict=True))
    assert set(figures) == set(ROWS.values()), f"README demo table rows: {sorted(figures)}"
    return figures


ENGINES = ["pure", "native"] if native_available() else ["pure"]


@pytest.mark.parametrize("engine", ENGINES)
def test_eval_with_no_arguments_prints_the_readme_figures(
    engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--json", "--engine", engine]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["catalogue"] == "demo catalogue" and out["engine"] == engine
    for group, stated in readme_figures().items():
        measured = {key: out["metrics"][group][key] for key in COLUMNS}
        assert measured == stated, f"{group} on {engine}: README {stated}, eval {measured}"


def test_the_printed_table_shows_the_same_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line.split() for line in lines if "R@1" in line)
    row = next(line.split() for line in lines if line.split()[:1] == ["all"])
    printed = dict(zip(header, row, strict=True))
    stated = readme_figures()["all"]
    names = {"queries": "n", "recall@1": "R@1", "recall@3": "R@3", "recall@10": "R@10"}
    names |= {"mrr": "MRR", "ndcg@10": "nDCG@10"}
    for key, column in names.items():
        assert float(printed[column]) == stated[key], f"{column}: printed {printed[column]}"


def test_the_demo_requests_are_varied_and_labelled_against_the_demo() -> None:
    queries = demo_queries()
    assert len(queries) >= 120 and len({q.id for q in queries}) == len(queries)
    assert {(q.lang, q.style) for q in queries} == {
        ("en", "user"),
        ("en", "model"),
        ("ru", "user"),
        ("ru", "model"),
    }
    assert sum(len(q.expected) > 1 for q in queries) >= 10
    servers = {name.split("__")[0] for q in queries for name in q.expected}
    assert len(servers) == 18  # every service of the demo catalogue is asked for


def test_eval_with_a_catalogue_needs_its_queries(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--catalogue", str(ROOT / "README.md")]) == 2
    assert "--queries" in capsys.readouterr().err
