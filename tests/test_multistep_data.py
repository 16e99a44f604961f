"""benches/data/multistep.jsonl is well formed: tasks of several steps, each step labelled."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from conftest import read_jsonl
from toolsurface import Tool
from toolsurface.evaluation import check_expected, load_queries

PATH = Path(__file__).resolve().parent.parent / "benches" / "data" / "multistep.jsonl"
FIELDS = {"id", "intent", "lang", "style", "query", "steps", "expected"}
HAN = re.compile(r"[\u4e00-\u9fff]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return read_jsonl(PATH)


def test_every_row_has_the_schema_and_expected_is_its_steps(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        rid = row.get("id")
        assert set(row) == FIELDS, f"{rid}: fields {sorted(row)}"
        assert row["id"] == f"ms-{row['id'].split('-')[1]}-{row['lang']}-{row['style']}", rid
        steps = row["steps"]
        assert 2 <= len(steps) <= 4, rid
        assert all(1 <= len(step) <= 3 for step in steps), rid
        flat = list(dict.fromkeys(name for step in steps for name in step))
        assert row["expected"] == flat, rid
        q = row["query"]
        assert q.strip() == q != "", rid
        if row["lang"] == "zh":
            assert HAN.search(q), rid
        elif row["lang"] in ("ru", "uk"):
            assert CYRILLIC.search(q), rid
        else:
            assert not HAN.search(q) and not CYRILLIC.search(q), rid
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["query"] for r in rows}) == len(rows)
    assert len(load_queries(PATH)) == len(rows)  # the project's own loader reads it


def test_every_task_is_written_in_english_both_ways_with_one_label(
    rows: list[dict[str, Any]],
) -> None:
    by_intent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_intent[row["intent"]].append(row)
    assert len(by_intent) == 50
    for intent, cells in by_intent.items():
        kinds = {(c["lang"], c["style"]) for c in cells}
        assert {("en", "user"), ("en", "model")} <= kinds, intent
        # One label per task: every phrasing asks for the same steps.
        assert len({json.dumps(c["steps"]) for c in cells}) == 1, intent
    langs = defaultdict(int)
    for row in rows:
        langs[row["lang"]] += 1
    assert langs == {"en": 100, "ru": 25, "de": 10, "es": 10, "fr": 10, "uk": 10, "zh": 10}


def test_every_labelled_tool_is_in_the_catalogue(
    rows: list[dict[str, Any]], mcp_tools: list[Tool]
) -> None:
    """Skips without ../shared/data (the mcp_tools fixture says why)."""
    check_expected(load_queries(PATH), {t.name for t in mcp_tools})
    servers = {e.split("__", 1)[0] for r in rows for e in r["expected"]}
    assert len(servers) >= 15, f"only {len(servers)} servers"
