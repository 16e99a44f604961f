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
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

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


def _api(name: str, paths: dict[str, Any], projection: dict[str, list[str]]) -> dict[str, Any]:
    """A ToolAlpaca API: its OpenAPI document is a JSON string, as the set publishes it."""
    doc = {"openapi": "3.0.1", "info": {"title": name}, "paths": paths}
    return {"Name": name, "Documentation": json.dumps(doc), "Function_Projection": projection}


def test_toolalpaca_apis_lists_every_api_as_one_tool(
    conv: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "ToolAlpaca", tmp_path / "cache"
    listed = [
        {"API": "Axolotl", "Description": "Collection of axolotl pictures", "Category": "Animals"},
        {"API": "Cataas", "Description": "Cat as a service", "Category": "Animals"},
        # The list repeats a name for another API: a tool of its own, the first one named.
        {"API": "Cataas", "Description": "Another cat API", "Category": "Entertainment"},
        {"API": "Nager.Date", "Description": "Public holidays", "Category": "Calendar"},
    ]
    _write(src, "data/public_apis.json", json.dumps({"count": 4, "entries": listed}))
    asks = {"Instructions": ["Show me an axolotl", "Any axolotl facts?"]}
    simulated = [{"Name": "Axolotl", **asks}, {"Name": "Unlisted", "Instructions": ["Hi"]}]
    real = [{"Name": "Nager.Date", "Instructions": ["Holidays in Spain?"]}]
    _write(src, "data/eval_simulated.json", json.dumps(simulated))
    _write(src, "data/eval_real.json", json.dumps(real))
    assert conv.main(["toolalpaca_apis", "--source", str(src), "--out", str(out)]) == 0
    names, rows = _converted(out, "toolalpaca_apis")
    assert names == [
        "animals__axolotl",
        "animals__cataas",
        "entertainment__cataas",
        "calendar__nager_date",
    ]
    records = json.loads((out / "toolalpaca_apis" / "catalogue.json").read_text())
    assert records[1]["description"] == "Cat as a service"
    assert all(r["input_schema"] == {"type": "object", "properties": {}} for r in records)
    assert [(r["id"], r["style"], r["expected"]) for r in rows] == [
        ("toolalpaca_apis-eval_simulated-axolotl-0", "simulated", ["animals__axolotl"]),
        ("toolalpaca_apis-eval_simulated-axolotl-1", "simulated", ["animals__axolotl"]),
        ("toolalpaca_apis-eval_real-nager_date-0", "real", ["calendar__nager_date"]),
    ]
    assert "skipped 1 requests of APIs not listed" in capsys.readouterr().err


def test_toolalpaca_names_operations_by_their_projection_key(
    conv: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "ToolAlpaca", tmp_path / "cache"
    fruit = _api(
        "Fruityvice",
        {
            "/api/fruit/{name}": {
                "get": {
                    "summary": "Get a fruit.",
                    "description": "Returns its nutrition facts.",
                    # The projection key, not the operationId, is the name the answers use.
                    "operationId": "fruitByName",
                    "parameters": [
                        {
                            "name": "name",
                            "in": "path",
                            "required": True,
                            "description": "The fruit's name",
                            "schema": {"type": "string"},
                        }
                    ],
                }
            },
            "/api/fruit/all": {
                "get": {
                    "summary": "All fruit",
                    "operationId": "getAllFruit",  # in no projection: named by its operationId
                    "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                }
            },
            "/api/fruit": {
                "put": {
                    "description": "Add a fruit",
                    "parameters": [
                        {
                            "name": "dryRun",
                            "in": "query",
                            "description": "Only validate",
                            "schema": {"type": "boolean"},
                        }
                    ],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string", "description": "Its name"},
                                        "calories": {"type": "number"},
                                    },
                                    "required": ["name"],
                                }
                            }
                        }
                    },
                }
            },
        },
        # As the real data has it: a path without its leading "/", a method in any case.
        {"getFruitByName": ["api/fruit/{name}", "get"], "addFruit": ["/api/fruit", "PUT"]},
    )
    fruit["Instructions"] = [
        "How many calories are in a banana? And add a mango.",
        "Tell me about yourself.",
        "List every fruit you know.",
    ]
    fruit["Golden_Answers"] = [
        [
            {"Action": "getFruitByName", "Action_Input": '{"name": "banana"}'},
            {"Action": "getFruitByName", "Action_Input": '{"name": "mango"}'},
            {"Action": "getDetails", "Action_Input": "{}"},  # asks the user: no tool
            {"Action": "getSecrets", "Action_Input": "{}"},  # documented nowhere: skipped
            # The set marks some calls; the mark is no part of the name.
            {"Action": "[Optional]addFruit", "Action_Input": '{"name": "mango"}'},
        ],
        [{"Action": "getSecrets", "Action_Input": "{}"}],  # nothing left: dropped
        [{"Action": "getAllFruit", "Action_Input": "{}"}],
    ]
    holidays = _api(
        "Nager.Date",
        {
            "/api/v3/Version": {
                "get": {"description": "The library's version."},
                # A path inside another's item, no operationId, no text, in no projection:
                # read as a path, named by path and method as the answers name it, and
                # described by the API's own line.
                "/api/v3/Countries/{code}": {"get": {}},
            }
        },
        {"VersionGetVersion": ["/api/v3/Version", "get"]},
    )
    holidays["Description"] = "Public holidays for more than 90 countries"
    holidays["Instructions"] = ["Which version of Nager.Date is this?", "Tell me about Peru."]
    holidays["Golden_Answers"] = [
        [{"Action": "VersionGetVersion", "Action_Input": "{}"}],
        [{"Action": "api_v3_Countries_code_get", "Action_Input": '{"code": "PE"}'}],
    ]
    _write(src, "data/eval_simulated.json", json.dumps([fruit]))
    _write(src, "data/eval_real.json", json.dumps([holidays]))
    assert conv.main(["toolalpaca", "--source", str(src), "--out", str(out)]) == 0
    assert "toolalpaca: skipped 2 calls to operations not found" in capsys.readouterr().err
    names, rows = _converted(out, "toolalpaca")
    assert names == [
        "fruityvice__get_fruit_by_name",
        "fruityvice__get_all_fruit",
        "fruityvice__add_fruit",
        "nager_date__version_get_version",
        "nager_date__api_v3_countries_code_get",
    ]
    assert rows == [
        {
            "id": "toolalpaca-eval_simulated-fruityvice-0",
            "query": "How many calories are in a banana? And add a mango.",
            "lang": "en",
            "style": "simulated",
            "expected": ["fruityvice__get_fruit_by_name", "fruityvice__add_fruit"],
        },
        {
            "id": "toolalpaca-eval_simulated-fruityvice-2",
            "query": "List every fruit you know.",
            "lang": "en",
            "style": "simulated",
            "expected": ["fruityvice__get_all_fruit"],
        },
        {
            "id": "toolalpaca-eval_real-nager_date-0",
            "query": "Which version of Nager.Date is this?",
            "lang": "en",
            "style": "real",
            "expected": ["nager_date__version_get_version"],
        },
        {
            "id": "toolalpaca-eval_real-nager_date-1",
            "query": "Tell me about Peru.",
            "lang": "en",
            "style": "real",
            "expected": ["nager_date__api_v3_countries_code_get"],
        },
    ]
    records = json.loads((out / "toolalpaca" / "catalogue.json").read_text())
    assert [r["description"] for r in records] == [
        "Get a fruit. Returns its nutrition facts",
        "All fruit",
        "Add a fruit",
        "The library's version",
        "Public holidays for more than 90 countries",
    ]
    assert [r["input_schema"] for r in records[:3]] == [
        {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The fruit's name"}},
            "required": ["name"],
        },
        {"type": "object", "properties": {"limit": {"type": "integer"}}, "required": []},
        {
            "type": "object",
            "properties": {
                "dryRun": {"type": "boolean", "description": "Only validate"},
                "name": {"type": "string", "description": "Its name"},
                "calories": {"type": "number"},
            },
            "required": ["name"],
        },
    ]
    assert "tangqiaoyu/ToolAlpaca" in (out / "toolalpaca" / "SOURCE.md").read_text()


def test_restbench_resolves_refs_and_shared_parameters(
    conv: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "RestGPT", tmp_path / "cache"
    movie_id = {"$ref": "#/components/parameters/movie_id"}
    tmdb = {
        "openapi": "3.0.0",
        "paths": {
            "/search/person": {
                "get": {
                    "summary": "Search for people",
                    "parameters": [
                        {
                            "name": "query",
                            "in": "query",
                            "required": True,
                            "description": "Text to search",
                            "schema": {"type": "string"},
                        },
                        {"$ref": "#/components/parameters/page"},
                    ],
                }
            },
            "/movie/{movie_id}/credits": {
                # Shared by every operation of the path.
                "parameters": [movie_id],
                "get": {
                    "description": "Get the cast and crew for a movie.",
                    "parameters": [{"name": "language", "in": "query", "schema": {}}],
                },
            },
            "/movie/{movie_id}/rating": {
                "parameters": [movie_id],
                "post": {
                    "summary": "Rate a movie",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Rating"}}
                        }
                    },
                },
                "delete": {},  # no text: described by its call
            },
        },
        "components": {
            "parameters": {
                "movie_id": {
                    "name": "movie_id",
                    "in": "path",
                    "required": True,
                    "description": "The movie's id",
                    "schema": {"type": "integer"},
                },
                "page": {
                    "name": "page",
                    "in": "query",
                    "description": "Page of results",
                    "schema": {"$ref": "#/components/schemas/Page"},
                },
            },
            "schemas": {
                "Page": {"type": "integer"},
                "Rating": {
                    "type": "object",
                    "properties": {"value": {"$ref": "#/components/schemas/Score"}},
                    "required": ["value"],
                },
                "Score": {"type": "number", "description": "From 0.5 to 10"},
            },
        },
    }
    spotify = {
        "openapi": "3.0.3",
        "paths": {"/me": {"get": {"summary": "Get Current User's Profile\n"}}},
    }
    _write(src, "specs/tmdb_oas.json", json.dumps(tmdb))
    _write(src, "specs/spotify_oas.json", json.dumps(spotify))
    requests = [
        {
            "query": "Who starred in the films of Sofia Coppola's favourite actor?",
            # As the real data has them: stray spaces, a repeat, an endpoint not in the spec.
            "solution": [
                "GET /search/person",
                " GET /movie/{movie_id}/credits ",
                "GET /search/person",
                "GET /person/{person_id}/movie_credits",
                # The spec's /movie/{movie_id}/credits, a parameter named otherwise.
                "GET /movie/{id}/credits",
            ],
        },
        {
            "query": "What is trending today?",
            "solution": ["GET /trending/{media_type}/{time_window}"],
        },
        {"query": "Rate Fight Club an 8.", "solution": ["POST /movie/{movie_id}/rating"]},
    ]
    _write(src, "datasets/tmdb.json", json.dumps(requests))
    _write(
        src, "datasets/spotify.json", json.dumps([{"query": "Who am I?", "solution": ["GET /me"]}])
    )
    assert conv.main(["restbench", "--source", str(src), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "restbench: skipped 2 calls to endpoints not in the spec" in err
    # Each named, with its request; parameters are unnamed ({}) when endpoints are compared.
    assert "restbench: tmdb request 0: no endpoint GET /person/{}/movie_credits" in err
    names, rows = _converted(out, "restbench")
    assert names == [
        "tmdb__get_search_person",
        "tmdb__get_movie_movie_id_credits",
        "tmdb__post_movie_movie_id_rating",
        "tmdb__delete_movie_movie_id_rating",
        "spotify__get_me",
    ]
    assert rows == [
        {
            "id": "restbench-tmdb-0",
            "query": "Who starred in the films of Sofia Coppola's favourite actor?",
            "lang": "en",
            "style": "tmdb",
            "expected": ["tmdb__get_search_person", "tmdb__get_movie_movie_id_credits"],
        },
        {
            "id": "restbench-tmdb-2",
            "query": "Rate Fight Club an 8.",
            "lang": "en",
            "style": "tmdb",
            "expected": ["tmdb__post_movie_movie_id_rating"],
        },
        {
            "id": "restbench-spotify-0",
            "query": "Who am I?",
            "lang": "en",
            "style": "spotify",
            "expected": ["spotify__get_me"],
        },
    ]
    records = json.loads((out / "restbench" / "catalogue.json").read_text())
    assert [r["description"] for r in records] == [
        "Search for people",
        "Get the cast and crew for a movie",
        "Rate a movie",
        "DELETE /movie/{movie_id}/rating",
        "Get Current User's Profile",
    ]
    movie = {"type": "integer", "description": "The movie's id"}
    assert [r["input_schema"] for r in records] == [
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Text to search"},
                "page": {"type": "integer", "description": "Page of results"},
            },
            "required": ["query"],
        },
        {
            "type": "object",
            "properties": {"movie_id": movie, "language": {"type": "string"}},
            "required": ["movie_id"],
        },
        {
            "type": "object",
            "properties": {
                "movie_id": movie,
                "value": {"type": "number", "description": "From 0.5 to 10"},
            },
            "required": ["movie_id", "value"],
        },
        {"type": "object", "properties": {"movie_id": movie}, "required": ["movie_id"]},
        {"type": "object", "properties": {}, "required": []},
    ]
    assert "Yifan-Song793/RestGPT" in (out / "restbench" / "SOURCE.md").read_text()


def test_openapi_operations_stops_at_a_ref_cycle(conv: ModuleType) -> None:
    spec = {
        "paths": {
            "/loop": {
                "parameters": [{"$ref": "#/components/parameters/Self"}],
                "get": {
                    "summary": "Still listed",
                    "parameters": [
                        {"$ref": "#/components/parameters/A"},
                        {
                            "name": "q",
                            "in": "query",
                            "required": True,
                            "schema": {"$ref": "#/components/schemas/Loop"},
                        },
                    ],
                    "requestBody": {"$ref": "#/components/requestBodies/Loop"},
                },
            }
        },
        "components": {
            "parameters": {
                "Self": {"$ref": "#/components/parameters/Self"},
                "A": {"$ref": "#/components/parameters/B"},
                "B": {"$ref": "#/components/parameters/A"},
            },
            "schemas": {"Loop": {"$ref": "#/components/schemas/Loop"}},
            "requestBodies": {"Loop": {"$ref": "#/components/requestBodies/Loop"}},
        },
    }
    found: list[Any] = []
    worker = threading.Thread(
        target=lambda: found.append(conv.openapi_operations(spec)), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "openapi_operations followed a $ref cycle without end"
    [ops] = found
    assert [(m, p, text, schema) for m, p, _op, text, schema in ops] == [
        (
            "get",
            "/loop",
            "Still listed",
            # The parameters that only point at themselves are dropped; the rest is kept.
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        )
    ]


def _spotify_spec(param: dict[str, Any]) -> dict[str, Any]:
    """Spotify's spec as RestGPT ships it: booleans written as strings, texts in the schema."""
    return {"paths": {"/search": {"get": {"parameters": [param]}}}}


def test_restbench_a_parameter_required_false_as_a_string_is_optional(conv: ModuleType) -> None:
    # specs/spotify_oas.json writes "required": "false" on 22 parameters (limit, offset,
    # market...), and "true" on the ones a call needs.
    spec = _spotify_spec({"in": "query", "name": "limit", "required": "false"})
    [(_, _, _, _, schema)] = conv.openapi_operations(spec)
    assert schema["required"] == []
    spec = _spotify_spec({"in": "query", "name": "q", "required": "true"})
    [(_, _, _, _, schema)] = conv.openapi_operations(spec)
    assert schema["required"] == ["q"]


def test_restbench_a_parameter_description_in_its_schema_is_kept(conv: ModuleType) -> None:
    # Every parameter of components.parameters in specs/spotify_oas.json, and 32 inline ones,
    # hold their description in "schema", none at the parameter's level.
    spec = _spotify_spec(
        {
            "in": "query",
            "name": "limit",
            "schema": {"type": "integer", "description": "The maximum number of items"},
        }
    )
    [(_, _, _, _, schema)] = conv.openapi_operations(spec)
    assert schema["properties"] == {
        "limit": {"type": "integer", "description": "The maximum number of items"}
    }


def test_openapi_a_body_property_never_replaces_a_parameter(conv: ModuleType) -> None:
    # Spotify's PUT /me/following takes "ids" in the query and again in its JSON body.
    query = {"name": "ids", "in": "query", "required": "true", "schema": {"type": "string"}}
    body = {
        "type": "object",
        "properties": {"ids": {"type": "array"}, "public": {"type": "boolean"}},
        "required": ["ids", "public"],
    }
    op = {"parameters": [query], "requestBody": {"content": {"application/json": {"schema": body}}}}
    [(_, _, _, _, schema)] = conv.openapi_operations({"paths": {"/me/following": {"put": op}}})
    assert schema == {
        "type": "object",
        "properties": {"ids": {"type": "string"}, "public": {"type": "boolean"}},
        "required": ["ids", "public"],
    }


def test_a_source_of_another_shape_stops_naming_the_set(conv: ModuleType, tmp_path: Path) -> None:
    src, out = tmp_path / "ToolAlpaca", tmp_path / "cache"
    # An API whose documentation is no JSON, and one whose answers miss a field.
    _write(src, "data/eval_simulated.json", json.dumps([{"Name": "X", "Documentation": "{"}]))
    _write(src, "data/eval_real.json", "[]")
    with pytest.raises(SystemExit, match=r"toolalpaca: .* not the set's published shape \(JSON"):
        conv.main(["toolalpaca", "--source", str(src), "--out", str(out)])
    _write(src, "data/eval_simulated.json", json.dumps([{"Name": "X", "Documentation": "{}"}]))
    with pytest.raises(SystemExit, match=r"not the set's published shape \(KeyError: 'Instr"):
        conv.main(["toolalpaca", "--source", str(src), "--out", str(out)])
    assert not (out / "toolalpaca").exists()
