"""The multilingual request sets of benches/data are well formed: every intent in every
language and style, and the second set apart from the first."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolsurface import Tool
from toolsurface.evaluation import check_expected, load_queries

DATA = Path(__file__).resolve().parent.parent / "benches" / "data"
#: Each set: its file, its ids' prefix, how many intents, the fewest servers it covers.
SETS = {
    "multilingual": (DATA / "multilingual.jsonl", "ml", (60, 70), 30),
    "multilingual_fresh": (DATA / "multilingual_fresh.jsonl", "mf", (36, 36), 25),
}
LANGS = ("en", "ru", "de", "es", "fr", "uk", "zh")
STYLES = ("model", "user")
FIELDS = {"id", "intent", "lang", "style", "query", "expected"}
HAN = re.compile(r"[\u4e00-\u9fff]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module", params=sorted(SETS))
def which(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def rows(which: str) -> list[dict[str, Any]]:
    return read(SETS[which][0])


def test_every_row_has_the_schema_fields(rows: list[dict[str, Any]], which: str) -> None:
    path, prefix = SETS[which][:2]
    for i, row in enumerate(rows, 1):
        assert set(row) == FIELDS, f"line {i}: fields {sorted(row)}"
        assert row["lang"] in LANGS and row["style"] in STYLES, f"line {i}"
        assert isinstance(row["query"], str) and row["query"].strip() == row["query"] != ""
        assert row["expected"] and all(isinstance(e, str) and "__" in e for e in row["expected"])
        assert row["id"] == f"{prefix}-{row['intent']}-{row['lang']}-{row['style']}", f"line {i}"
    assert len({r["id"] for r in rows}) == len(rows)
    # The project's own loader reads it (the benches go through it).
    assert len(load_queries(path)) == len(rows)


def test_every_intent_is_written_in_every_language_and_style(
    rows: list[dict[str, Any]], which: str
) -> None:
    fewest, most = SETS[which][2]
    by_intent: dict[str, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_intent[row["intent"]][(row["lang"], row["style"])] = row
    assert fewest <= len(by_intent) <= most
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
    rows: list[dict[str, Any]], which: str, mcp_tools: list[Tool]
) -> None:
    """Skips without ../shared/data (the mcp_tools fixture says why)."""
    path, fewest_servers = SETS[which][0], SETS[which][3]
    check_expected(load_queries(path), {t.name for t in mcp_tools})
    servers = {e.split("__", 1)[0] for r in rows for e in r["expected"]}
    catalogue_servers = {t.name.split("__", 1)[0] for t in mcp_tools}
    assert servers <= catalogue_servers
    assert len(servers) >= fewest_servers, f"only {len(servers)} of {len(catalogue_servers)}"


def test_the_second_set_asks_for_other_tools_in_other_words() -> None:
    # Written after the first as unseen requests: no tool the first expects, no request of it.
    first, second = (read(SETS[name][0]) for name in ("multilingual", "multilingual_fresh"))
    tools_first = {e for r in first for e in r["expected"]}
    assert not tools_first & {e for r in second for e in r["expected"]}
    assert not {r["query"] for r in first} & {r["query"] for r in second}
