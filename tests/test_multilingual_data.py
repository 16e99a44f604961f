"""benches/data/multilingual.jsonl is well formed: every intent in every language and style."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolsurface import Tool
from toolsurface.evaluation import check_expected, load_queries

PATH = Path(__file__).resolve().parent.parent / "benches" / "data" / "multilingual.jsonl"
LANGS = ("en", "ru", "de", "es", "fr", "uk", "zh")
STYLES = ("model", "user")
FIELDS = {"id", "intent", "lang", "style", "query", "expected"}
HAN = re.compile(r"[\u4e00-\u9fff]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    with PATH.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_every_row_has_the_schema_fields(rows: list[dict[str, Any]]) -> None:
    for i, row in enumerate(rows, 1):
        assert set(row) == FIELDS, f"line {i}: fields {sorted(row)}"
        assert row["lang"] in LANGS and row["style"] in STYLES, f"line {i}"
        assert isinstance(row["query"], str) and row["query"].strip() == row["query"] != ""
        assert row["expected"] and all(isinstance(e, str) and "__" in e for e in row["expected"])
        assert row["id"] == f"ml-{row['intent']}-{row['lang']}-{row['style']}", f"line {i}"
    assert len({r["id"] for r in rows}) == len(rows)
    # The project's own loader reads it (the benches go through it).
    assert len(load_queries(PATH)) == len(rows)


def test_every_intent_is_written_in_every_language_and_style(rows: list[dict[str, Any]]) -> None:
    by_intent: dict[str, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_intent[row["intent"]][(row["lang"], row["style"])] = row
    assert 60 <= len(by_intent) <= 70
    for intent, cells in by_intent.items():
        assert set(cells) == {(lang, s) for lang in LANGS for s in STYLES}, intent
        # One label per intent: every phrasing asks for the same thing.
        assert len({tuple(sorted(c["expected"])) for c in cells.values()}) == 1, intent
        for style in STYLES:
            en = cells[("en", style)]["query"]
            for lang in LANGS[1:]:
                assert cells[(lang, style)]["query"] != en, f"{intent} {lang}/{style} is English"
            assert cells[("uk", style)]["query"] != cells[("ru", style)]["query"], intent
        assert cells[("en", "model")]["query"] != cells[("en", "user")]["query"], intent


def test_each_language_is_in_its_own_script(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        q, lang = row["query"], row["lang"]
        if lang == "zh":
            assert HAN.search(q), row["id"]
        elif lang in ("ru", "uk"):
            assert CYRILLIC.search(q), row["id"]
        else:
            assert not HAN.search(q) and not CYRILLIC.search(q), row["id"]


def test_the_queries_are_not_repeated(rows: list[dict[str, Any]]) -> None:
    seen: dict[str, str] = {}
    for row in rows:
        assert row["query"] not in seen, f"{row['id']} repeats {seen.get(row['query'])}"
        seen[row["query"]] = row["id"]


def test_every_expected_tool_is_in_the_catalogue(
    rows: list[dict[str, Any]], mcp_tools: list[Tool]
) -> None:
    """Skips without ../shared/data (the mcp_tools fixture says why)."""
    check_expected(load_queries(PATH), {t.name for t in mcp_tools})
    servers = {e.split("__", 1)[0] for r in rows for e in r["expected"]}
    catalogue_servers = {t.name.split("__", 1)[0] for t in mcp_tools}
    assert servers <= catalogue_servers
    assert len(servers) >= 30, f"only {len(servers)} of {len(catalogue_servers)} servers"
