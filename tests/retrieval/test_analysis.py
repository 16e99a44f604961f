"""Analysis: hand-checked token streams, the conformance file, and the first-sentence cut."""

from __future__ import annotations

import pytest

from conftest import DATA, read_jsonl
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.fields import params_text, schema_texts, split_description


@pytest.fixture(scope="module")
def tokens(engine_name: str):  # type: ignore[no-untyped-def]
    return backend(engine_name).tokens  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("BrowserOpen", ["browser", "open", "browseropen"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
        ("getHTTPResponseCode", ["get", "http", "respons", "code", "gethttpresponsecod"]),
        ("create_pull_request", ["creat", "pull", "request", "createpullrequest"]),
        ("list-issues", ["list", "issu", "listissu"]),
        ("v2Api", ["api", "v2api"]),
        ("github__create_issue", ["github", "creat", "issu", "githubcreateissu"]),
        ("api.github.com", ["api", "github", "com", "apigithubcom"]),
        ("GitHub", ["git", "hub", "github"]),
        ("oauth2", ["oauth", "oauth2"]),
        ("Покажи открытые пулреквесты, пожалуйста!", ["покаж", "открыт", "пулреквест"]),
        ("ЁЛКА и ёлки", ["елк", "елк"]),
        ("cre\u200bate \u202eissue\u202c", ["creat", "issu"]),
        ("Can you please list the files?", ["list", "file"]),
        ("можешь, пожалуйста, найти тикет", ["найт", "тикет"]),
        ("пулRequest", ["пул", "request", "пулrequest"]),
        ("a b c x y", []),
        ("🚀 deploy 🔥 now", ["deploy", "now"]),
        ("", []),
    ],
)
def test_hand_checked_tokens(tokens, text: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert tokens(text) == expected


def test_inflections_share_a_stem(tokens) -> None:  # type: ignore[no-untyped-def]
    forms = ["пулреквест", "пулреквесты", "пулреквестов", "пулреквестами"]
    assert len({tuple(tokens(f)) for f in forms}) == 1
    assert tokens("tickets") == tokens("ticket")
    assert tokens("deployments") == tokens("deployment")


def test_conformance_vectors(tokens) -> None:  # type: ignore[no-untyped-def]
    vectors = read_jsonl(DATA / "analysis_vectors.jsonl")
    assert len(vectors) >= 300
    bad = [
        (v["text"], v["tokens"], tokens(v["text"]))
        for v in vectors
        if tokens(v["text"]) != v["tokens"]
    ]
    assert not bad, f"{len(bad)} vectors differ, first: {bad[0]}"


def test_first_sentence_vectors() -> None:
    cases = read_jsonl(DATA / "first_sentence.jsonl")
    assert len(cases) >= 40
    bad = [
        (c["text"], c["summary"], split_description(c["text"])[0], c.get("why"))
        for c in cases
        if split_description(c["text"])[0] != c["summary"]
    ]
    assert not bad, f"{len(bad)} cuts differ, first: {bad[0]}"


@pytest.mark.parametrize(
    ("text", "summary", "body"),
    [
        (
            "Transition an issue to a new status (e.g. Done). Needs a key.",
            "Transition an issue to a new status (e.g. Done).",
            "Needs a key.",
        ),
        (
            "Lists files, i.e. the entries of a folder. Hidden ones too.",
            "Lists files, i.e. the entries of a folder.",
            "Hidden ones too.",
        ),
        (
            "Handles logs, metrics etc. and traces. More.",
            "Handles logs, metrics etc. and traces.",
            "More.",
        ),
        ("Handles logs, metrics etc. More here.", "Handles logs, metrics etc.", "More here."),
        (
            "Notion | Retrieve a user\nError Responses:\n400: Bad request",
            "Notion | Retrieve a user",
            "Error Responses:\n400: Bad request",
        ),
        ("  Find it (see the docs. or not)  ", "Find it (see the docs. or not)", ""),
        ("Показывает задачи, т.е. тикеты. Потом.", "Показывает задачи, т.е. тикеты.", "Потом."),
        ("", "", ""),
    ],
)
def test_first_sentence(text: str, summary: str, body: str) -> None:
    assert split_description(text) == (summary, body)


def test_enum_values_are_collected_beside_params() -> None:
    schema = {
        "type": "object",
        "properties": {
            "genre": {"type": "string", "enum": ["Comedy", "Family Counselor", 3, ""]},
            "filter": {
                "type": "object",
                "properties": {"state": {"type": "string", "enum": ["open", "closed"]}},
            },
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x"]}},
        },
    }
    params, enums = schema_texts(schema)
    assert params == params_text(schema)
    assert "Comedy" not in params
    # Strings only, nested properties and an array's items too.
    assert enums.split("\n") == ["Comedy", "Family Counselor", "open", "closed", "x"]


def test_enum_values_of_alternatives_are_collected() -> None:
    # What pydantic writes for `Optional[Literal["acknowledged", "resolved"]]`.
    schema = {
        "properties": {
            "status": {
                "anyOf": [
                    {"enum": ["acknowledged", "resolved"], "type": "string"},
                    {"type": "null"},
                ],
                "description": "The status to set",
            },
            "mode": {"oneOf": [{"enum": ["fast"]}, {"allOf": [{"enum": ["safe"]}]}]},
        }
    }
    params, enums = schema_texts(schema)
    assert params.split("\n") == ["status", "The status to set", "mode"]
    assert enums.split("\n") == ["acknowledged", "resolved", "fast", "safe"]


def test_local_refs_are_followed_once_each() -> None:
    # Pydantic models put a tool's real parameters behind `$ref` (PagerDuty's MCP server).
    schema = {
        "$defs": {
            "Request": {
                "properties": {
                    "incident_ids": {"description": "IDs of the incidents"},
                    "assignee": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}]},
                    "reviewer": {"$ref": "#/$defs/User"},
                }
            },
            "User": {
                "properties": {"id": {"description": "User ID"}, "boss": {"$ref": "#/$defs/User"}}
            },
            "Unused": {"properties": {"never_shown": {}}},
        },
        "definitions": {"Old": {"properties": {"legacy": {}}}},
        "properties": {
            "request": {"$ref": "#/$defs/Request"},
            "old": {"$ref": "#/definitions/Old"},
            "remote": {"$ref": "https://example.com/schema.json"},
            "missing": {"$ref": "#/$defs/Nothing"},
        },
    }
    assert params_text(schema).split("\n") == [
        "request",
        "incident_ids",
        "IDs of the incidents",
        "assignee",
        "id",
        "User ID",
        "boss",  # the cycle back to User ends here: each definition is read once
        "reviewer",  # User again: already read, not repeated
        "old",
        "legacy",
        "remote",
        "missing",
    ]


def test_params_text_walks_nested_properties() -> None:
    schema = {
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "Repository name"},
            "filter": {
                "type": "object",
                "properties": {"state": {"type": "string", "description": "open or closed"}},
            },
            "labels": {"type": "array", "items": {"type": "object", "properties": {"color": {}}}},
        },
        "$defs": {"ignored": {"properties": {"secret_def": {}}}},
    }
    text = params_text(schema)  # a definition nothing refers to is not read
    assert text.split("\n") == [
        "repo",
        "Repository name",
        "filter",
        "state",
        "open or closed",
        "labels",
        "color",
    ]


def test_a_request_analysed_again_reads_as_the_first_time() -> None:
    # The pure analyzer keeps its last requests' analyses (the registry reads a request that
    # finds nothing twice): what one caller does with its lists never reaches the next.
    analyzer = backend("pure").analyzer
    first = analyzer.query_analysis("erstelle ein Issue im Repository", 0.5)
    for part in first:
        part.clear()
    again = analyzer.query_analysis("erstelle ein Issue im Repository", 0.5)
    assert again[0] and len(again[0]) == len(again[1]) == len(again[3]) == len(again[4])
    assert again == analyzer.query_analysis("erstelle ein Issue im Repository", 0.5)
    # The payload's weight is part of what is kept: the same words weigh by the caller's.
    quoted = 'send "quarterly numbers" to the team'
    assert 0.5 in analyzer.query_analysis(quoted, 0.5)[1]
    assert 0.5 not in analyzer.query_analysis(quoted, 1.0)[1]
