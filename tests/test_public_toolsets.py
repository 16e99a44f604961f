"""scripts/public_toolsets.py turns each public set's shape into files ``toolsurface eval`` reads.

The inputs are small files written here in each set's published shape (no public data is
in the repository): the converter must give a catalogue and labelled requests that the
project's own loaders accept, with every label naming a catalogue tool.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import check_expected, load_queries

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "public_toolsets.py"


@pytest.fixture(scope="module")
def conv() -> ModuleType:
    spec = importlib.util.spec_from_file_location("public_toolsets", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["public_toolsets"] = module
    spec.loader.exec_module(module)
    return module


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _entry(tool: str, api: str, desc: str, required: str = "[]") -> str:
    return (
        f"category_name:Food, tool_name:{tool}, api_name:{api}, api_description:{desc}, "
        f'required_params: {required}, optional_params: [], return_schema: {{"a": "str"}}'
    )


def _converted(out: Path, name: str) -> tuple[list[str], list[dict[str, object]]]:
    _, tools = load_catalogue(out / name / "catalogue.json")
    queries = load_queries(out / name / "queries.jsonl")
    check_expected(queries, {t.name for t in tools})
    rows = [json.loads(line) for line in (out / name / "queries.jsonl").read_text().splitlines()]
    return [t.name for t in tools], rows


def test_toollens_corpus_and_relevance_become_tools_and_labels(
    conv: ModuleType, tmp_path: Path
) -> None:
    src, out = tmp_path / "COLT", tmp_path / "cache"
    corpus = [
        {"_id": "0", "text": _entry("Recipe Finder", "Search", "Find recipes by ingredient.")},
        {
            "_id": "1",
            "text": _entry(
                "Nutrition API",
                "/v1/nutrition",
                "",
                '[{"name": "query", "type": "STRING", "description": "Food to look up"}]',
            ),
        },
        # The same (tool, api) pair as document 0: a second tool, not a merge.
        {"_id": "2", "text": _entry("Recipe Finder", "Search", "Search recipes, v2.")},
    ]
    _write(src, "datasets/ToolLens/corpus.jsonl", "\n".join(json.dumps(c) for c in corpus))
    _write(
        src,
        "datasets/ToolLens/queries.jsonl",
        json.dumps({"_id": "7", "text": "dinner with salmon, and its calories"}),
    )
    _write(
        src, "datasets/ToolLens/qrels/test.tsv", "query-id\tcorpus-id\tscore\n7\t0\t1\n7\t1\t1\n"
    )
    assert conv.main(["toollens", "--source", str(src), "--out", str(out)]) == 0
    names, rows = _converted(out, "toollens")
    assert names == [
        "recipe_finder__search",
        "nutrition_api__v1_nutrition",
        "recipe_finder__search_2",
    ]
    assert rows == [
        {
            "id": "toollens-7",
            "query": "dinner with salmon, and its calories",
            "lang": "en",
            "style": "test",
            "expected": ["recipe_finder__search", "nutrition_api__v1_nutrition"],
        }
    ]
    records = json.loads((out / "toollens" / "catalogue.json").read_text())
    # An empty description falls back to the API's name; parameters keep their text.
    assert records[1]["description"] == "/v1/nutrition"
    assert records[1]["input_schema"] == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Food to look up"}},
        "required": ["query"],
    }
    assert "quchangle1/COLT" in (out / "toollens" / "SOURCE.md").read_text()


def test_stabletoolbench_pools_every_offered_api(conv: ModuleType, tmp_path: Path) -> None:
    src, out = tmp_path / "STB", tmp_path / "cache"
    long_api = "Quotes by city " + "with a very long name " * 8

    def api(tool: str, name: str) -> dict[str, object]:
        return {
            "category_name": "Data",
            "tool_name": tool,
            "api_name": name,
            "api_description": f"{name} of {tool}",
            "required_parameters": [{"name": "id", "type": "NUMBER", "description": ""}],
            "optional_parameters": [],
        }

    for group in conv.STB_GROUPS:
        rows = [
            {
                "query_id": 1,
                "query": f"{group}: who won, and the quotes",
                "api_list": [api("Scores", "Results"), api("Quotes Co", long_api)],
                "relevant APIs": [["Scores", "Results"], ["Quotes Co", long_api]],
            }
        ]
        _write(src, f"solvable_queries/test_instruction/{group}.json", json.dumps(rows))
    assert conv.main(["stabletoolbench", "--source", str(src), "--out", str(out)]) == 0
    names, rows = _converted(out, "stabletoolbench")
    assert len(names) == 2  # the same APIs offered in every group are one tool each
    assert all(len(n) <= 128 for n in names)
    assert [r["style"] for r in rows] == list(conv.STB_GROUPS)
    assert all(r["expected"] == names for r in rows)


def test_mcptoolbench_labels_accept_the_equivalent_tool(conv: ModuleType, tmp_path: Path) -> None:
    src, out = tmp_path / "MTB", tmp_path / "cache"
    tools = [
        {"name": "playwright_click", "description": "Click an element", "input_schema": {}},
        {"name": "puppeteer_click", "description": "Click on the page", "input_schema": {}},
    ]
    row = {
        "uuid": "u1",
        "tools": tools,
        "mcp_tools_dict": {"playwright": ["playwright_click"], "puppeteer": ["puppeteer_click"]},
        "query": "press the submit button",
        "function_call_label": [
            {
                "name": "playwright_click",
                "mcp_server": "playwright",
                "similar_tools": [{"name": "puppeteer_click", "mcp_server": "puppeteer"}],
            }
        ],
    }
    for path in conv.MCPTB_FILES.values():
        _write(src, path, json.dumps([row]))
    assert conv.main(["mcptoolbench", "--source", str(src), "--out", str(out)]) == 0
    names, rows = _converted(out, "mcptoolbench")
    assert names == ["playwright__playwright_click", "puppeteer__puppeteer_click"]
    assert len(rows) == len(conv.MCPTB_FILES)
    assert all(r["expected"] == names for r in rows)


def test_it_reads_a_git_directory_at_a_commit(conv: ModuleType, tmp_path: Path) -> None:
    """A snapshot from the search tool's fetch has no work tree: the files come from git."""
    work = tmp_path / "work"
    _write(
        work,
        "datasets/ToolLens/corpus.jsonl",
        json.dumps({"_id": "0", "text": _entry("T", "A", "d")}),
    )
    _write(work, "datasets/ToolLens/queries.jsonl", json.dumps({"_id": "1", "text": "q"}))
    _write(work, "datasets/ToolLens/qrels/test.tsv", "query-id\tcorpus-id\tscore\n1\t0\t1\n")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "data"], check=True)
    sha = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    out = tmp_path / "cache"
    args = ["toollens", "--source", str(work / ".git"), "--commit", sha, "--out", str(out)]
    assert conv.main(args) == 0
    names, rows = _converted(out, "toollens")
    assert names == ["t__a"] and rows[0]["expected"] == ["t__a"]
    with pytest.raises(SystemExit, match=r"cannot read datasets/ToolLens/corpus\.jsonl"):
        conv.main(
            ["toollens", "--source", str(work / ".git"), "--commit", "0" * 40, "--out", str(out)]
        )


def test_it_refuses_to_write_into_the_repository(conv: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="inside the repository"):
        conv.main(["toollens", "--source", str(tmp_path), "--out", str(ROOT / "benches")])


def test_apibank_reads_api_classes_without_running_them(conv: ModuleType, tmp_path: Path) -> None:
    src, out = tmp_path / "ConvAI", tmp_path / "cache"
    api_source = (
        "import os\n"
        "os.environ['RAN'] = '1'  # a converter that ran this file would set it\n"
        "class AddAlarm(API):\n"
        "    description = 'Set an alarm at a time.'\n"
        "    input_parameters = {'time': {'type': 'str', 'description': 'When.'}}\n"
        "class GetUserToken(API):\n"
        "    description = 'Log in.'\n"
        "    input_parameters = {}\n"
    )
    _write(src, "api-bank/apis/alarm.py", api_source)
    turns = [
        {"role": "User", "text": "Wake me at 7 tomorrow."},
        {"role": "AI", "text": "Your username?"},
        {"role": "User", "text": "It is amy."},
        {"role": "API", "api_name": "GetUserToken", "param_dict": {}},
        {"role": "API", "api_name": "AddAlarm", "param_dict": {}},
    ]
    dialogue = "\n".join(json.dumps(t) for t in turns)
    _write(src, "api-bank/lv1-lv2-samples/level-1-given-desc/AddAlarm-level-1-1.jsonl", dialogue)
    login_only = json.dumps({"role": "API", "api_name": "GetUserToken", "param_dict": {}})
    _write(src, "api-bank/lv1-lv2-samples/level-1-given-desc/Token-level-1-1.jsonl", login_only)
    assert conv.main(["apibank", "--source", str(src), "--out", str(out)]) == 0
    names, rows = _converted(out, "apibank")
    assert names == ["apibank__add_alarm", "apibank__get_user_token"]
    # The log-in call is nobody's request; the user's turns before the call are joined.
    assert rows == [
        {
            "id": "apibank-AddAlarm-level-1-1",
            "query": "Wake me at 7 tomorrow. It is amy.",
            "lang": "en",
            "style": "level-1",
            "expected": ["apibank__add_alarm"],
        }
    ]
    assert "RAN" not in os.environ


def test_sealtools_labels_every_tool_of_a_called_name(
    conv: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "Seal", tmp_path / "cache"

    def tool(name: str, field: str, desc: str) -> dict[str, object]:
        return {
            "api_name": name,
            "api_description": desc,
            "field": field,
            "parameters": {
                "title": {"type": "str", "description": "The film's title"},
                "year": {"type": "int", "description": "Release year"},
                "tags": {"type": "list", "description": ""},
            },
            "required": ["title"],
            "responses": {"plot": {"type": "str", "description": "The film's plot"}},
        }

    tools = [
        tool("getFilmDetails", "Entertainment/Film", "Get the details of a film"),
        tool("getTVSchedule", "Entertainment/Television", "Get a channel's schedule"),
        # The same api_name in the same first-level field: a second tool, both expected.
        tool("getFilmDetails", "Entertainment/Cinema", ""),
    ]
    _write(src, "Seal-Tools_Dataset/tool.jsonl", "\n".join(json.dumps(t) for t in tools))

    def request(rid: str, query: str, *apis: str) -> str:
        calls = [{"api": a, "parameters": {}, "responses": ["API_call_0"]} for a in apis]
        return json.dumps({"id": rid, "query": query, "calling": calls})

    _write(
        src,
        "Seal-Tools_Dataset/test_in_domain.jsonl",
        request("test_in_domain-easy-0", "Tell me about the film Inception.", "getFilmDetails"),
    )
    _write(
        src,
        "Seal-Tools_Dataset/test_out_domain.jsonl",
        "\n".join(
            [
                # One call names no tool of tool.jsonl: skipped, the other kept.
                request(
                    "test_out_domain-difficult-3",
                    "What is on BBC tonight, and book me a table.",
                    "getTVSchedule",
                    "bookRestaurant",
                ),
                # Every call unknown: the request is dropped.
                request("test_out_domain-easy-1", "Book me a table.", "bookRestaurant"),
            ]
        ),
    )
    assert conv.main(["sealtools", "--source", str(src), "--out", str(out)]) == 0
    assert "skipped 2 calls to APIs not in tool.jsonl" in capsys.readouterr().err
    names, rows = _converted(out, "sealtools")
    assert names == [
        "entertainment__get_film_details",
        "entertainment__get_tv_schedule",
        "entertainment__get_film_details_2",
    ]
    assert rows == [
        {
            "id": "sealtools-test_in_domain-easy-0",
            "query": "Tell me about the film Inception.",
            "lang": "en",
            "style": "in_domain-easy",
            "expected": ["entertainment__get_film_details", "entertainment__get_film_details_2"],
        },
        {
            "id": "sealtools-test_out_domain-difficult-3",
            "query": "What is on BBC tonight, and book me a table.",
            "lang": "en",
            "style": "out_domain-difficult",
            "expected": ["entertainment__get_tv_schedule"],
        },
    ]
    records = json.loads((out / "sealtools" / "catalogue.json").read_text())
    # Types mapped to JSON's, required kept, responses dropped; no description -> the name.
    assert records[0]["input_schema"] == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "The film's title"},
            "year": {"type": "integer", "description": "Release year"},
            "tags": {"type": "array"},
        },
        "required": ["title"],
    }
    assert records[2]["description"] == "get_film_details"
    assert "fairyshine/Seal-Tools" in (out / "sealtools" / "SOURCE.md").read_text()
