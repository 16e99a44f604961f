"""JSON Lines catalogues and query files: lines end at "\\n" only, errors name the file's line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolsurface import CatalogueFormatError
from toolsurface.catalogue import load_catalogue, parse_catalogue
from toolsurface.evaluation import load_queries, parse_queries

# Characters str.splitlines() breaks at that a JSON string may hold raw...
RAW_IN_STRINGS = ["\u2028", "\u2029", "\x85"]
# ... and the control characters it breaks at, which JSON escapes: the only "\n" counts.
CONTROLS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("char", RAW_IN_STRINGS)
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_json_line_holding_a_raw_line_separator_is_one_tool(
    tmp_path: Path, char: str, newline: str
) -> None:
    first = json.dumps({"name": "a", "description": "First tool."})
    second = json.dumps({"name": "b", "description": f"line one{char}line two"}, ensure_ascii=False)
    assert char in second  # written raw, as JSON allows
    path = tmp_path / "tools.jsonl"
    path.write_bytes((first + newline + second + newline).encode())
    fmt, tools = load_catalogue(path)
    assert fmt == "jsonl" and [t.name for t in tools] == ["a", "b"]
    assert tools[1].description.startswith("line one")


@pytest.mark.parametrize("char", RAW_IN_STRINGS)
def test_a_query_line_holding_a_raw_line_separator_is_one_query(tmp_path: Path, char: str) -> None:
    rows = [
        {"id": "q1", "query": "open pull requests", "expected": ["a"]},
        {"id": "q2", "query": f"text with{char}separator", "expected": ["a"]},
        {"id": "q3", "query": "last", "expected": ["a"]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_bytes("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode())
    queries = load_queries(path)
    assert [(q.id, q.where) for q in queries] == [
        ("q1", f"{path} line 1"),
        ("q2", f"{path} line 2"),
        ("q3", f"{path} line 3"),
    ]
    assert queries[1].query == f"text with{char}separator"


def test_a_bad_query_line_after_a_raw_separator_is_named_by_its_file_line() -> None:
    good = json.dumps({"query": "a\u2028b", "expected": ["x"]}, ensure_ascii=False)
    with pytest.raises(CatalogueFormatError, match=r"^q\.jsonl line 3: not JSON"):
        parse_queries(good + "\n" + good + "\n{broken\n", source="q.jsonl")


@pytest.mark.parametrize("prefix", ["", "\n\n", "\ufeff\n\n", "\r\n\r\n  \n"])
def test_a_bad_json_line_is_named_by_its_file_line(prefix: str) -> None:
    lead = prefix.count("\n")
    good = json.dumps({"name": "a", "description": "A."})
    bad_name = prefix + good + "\n" + json.dumps({"name": "bad name"}) + "\n"
    with pytest.raises(CatalogueFormatError, match=rf"\(cat\.jsonl line {lead + 2}\)"):
        parse_catalogue(bad_name, source="cat.jsonl")
    broken = prefix + good + "\n\n{broken\n"
    with pytest.raises(CatalogueFormatError, match=rf"^cat\.jsonl line {lead + 3}: not JSON"):
        parse_catalogue(broken, source="cat.jsonl")
    duplicate = prefix + good + "\n" + good
    with pytest.raises(
        CatalogueFormatError,
        match=rf"^cat\.jsonl line {lead + 2}: tool 'a' is defined twice, "
        rf"first at cat\.jsonl line {lead + 1}",
    ):
        parse_catalogue(duplicate, source="cat.jsonl")
    with pytest.raises(CatalogueFormatError, match=rf"\(cat\.jsonl line {lead + 1}\)"):
        parse_catalogue(prefix + json.dumps({"name": "bad name"}), source="cat.jsonl")


@pytest.mark.parametrize("prefix", ["", "\n\n", "\ufeff\n\n", "\n \u2028 \n"])
def test_a_broken_document_is_named_by_its_file_line_and_column(prefix: str) -> None:
    lead = prefix.count("\n")
    text = prefix + '[\n  {"name": "a"},\n  {"name": "b",}\n]\n'
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(text, source="cat.json")
    expected = "Expecting property name enclosed in double quotes"
    assert f"cat.json: not JSON ({expected} at line {lead + 3} column 16)" in str(err.value)
    nan = prefix + '[\n  {"name": "a", "x": NaN}\n]'
    with pytest.raises(
        CatalogueFormatError, match=rf"NaN is not JSON .* at line {lead + 2} column 22"
    ):
        parse_catalogue(nan, source="cat.json")


def test_a_bad_line_is_named_in_a_file_read_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    good = json.dumps({"name": "a", "description": "A.\u2028B."}, ensure_ascii=False)
    path.write_bytes(b"\xef\xbb\xbf\n\n" + good.encode() + b"\n" + b'{"name": "b", "x": }\n')
    with pytest.raises(CatalogueFormatError, match=rf"^{re.escape(str(path))} line 4: not JSON"):
        load_catalogue(path)


@pytest.mark.parametrize("char", RAW_IN_STRINGS + CONTROLS)
def test_only_newlines_count_in_the_line_named(char: str) -> None:
    good = json.dumps({"name": "a", "description": "A."})
    blank = f" {char} "  # whitespace to str.strip(), a blank line to the reader
    text = good + "\n" + blank + "\n" + json.dumps({"name": "bad name"}) + "\n"
    with pytest.raises(CatalogueFormatError, match=r"\(cat\.jsonl line 3\)"):
        parse_catalogue(text, source="cat.jsonl")
    query = json.dumps({"query": "q", "expected": ["a"]})
    with pytest.raises(CatalogueFormatError, match=r"^q\.jsonl line 3: not JSON"):
        parse_queries(query + "\n" + blank + "\n{broken", source="q.jsonl")
