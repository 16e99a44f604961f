"""Questions (docs/analysis.md section 10): what asks, and the read-only boost it gives."""

from __future__ import annotations

import json

import pytest

from toolsurface import CatalogueFormatError, Tool, ToolRegistry
from toolsurface.catalogue import parse_catalogue
from toolsurface.retrieval.analysis.questions import is_question

ENGINES = ["native", "pure"]


@pytest.mark.parametrize(
    "text",
    [
        "what's running in docker",
        "What’s on my calendar for thursday",
        "which pods are crashing",
        "who is on call tonight",
        "how many open incidents are there",
        "is the deploy done?",
        "the deploy is done？",
        "какие инциденты сейчас открыты",
        "Что мне писали в телеге",
        "чё крутится в докере",
        "сколько весит dump.sql",
        "ok so did the build pass?",
        # an imperative of looking wants to read as a question does
        "list the running containers",
        "Show me open merge requests on gitlab",
        "find the notion page about hiring",
        "покажи, что крутится в докере",
        "Найди в почте письмо от бухгалтерии",
    ],
)
def test_asking_requests_are_questions(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "restart the running containers",
        "stop what is running",  # a question word later on does not ask
        "can you dig up the on-call runbook",  # a polite imperative
        "get me a new API token",  # verbs that read and change alike are not listed
        "open a PR for the fix",
        "showcase the new dashboard",  # the whole first word, not its start
        "have Anna cover my on-call",
        "do a backup of the database",
        'post "is the deploy done?" in #releases',  # the question is the payload's
        "create an issue: why does login fail?",
        "перезапусти то, что крутится в докере",
        "",
        "?!" * 0,
    ],
)
def test_telling_requests_are_not(text: str) -> None:
    assert not is_question(text)


def test_a_huge_request_is_read_on_its_first_characters() -> None:
    assert not is_question("stop " * 2000 + "?")
    assert is_question("what " + '"x" ' * 5000)


def _tools() -> list[Tool]:
    return [
        Tool(
            name="docker__run_container",
            description="Run a new container from an image.",
            read_only=False,
        ),
        Tool(
            name="docker__list_containers",
            description="List the containers that are running or stopped, with their state.",
            read_only=True,
        ),
        Tool(name="docker__container_logs", description="Show a container's logs."),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_question_raises_only_read_only_tools(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    assert registry.search("run a container")[0].name == "docker__run_container"
    # The name's "run" outweighs a small factor here; a large one puts the reading tool first.
    heavy = registry.settings.model_copy(update={"question_weight": 1.0})
    assert registry.search("what's running in docker?", settings=heavy)[0].name == (
        "docker__list_containers"
    )
    # The same words, told rather than asked, get no boost.
    told = registry.search("running in docker", settings=heavy)
    assert told[0].name == "docker__run_container"
    assert [h.score for h in told] == [
        h.score for h in registry.search("running in docker", settings=registry.settings)
    ]
    asked = registry.search("what's running in docker?")
    by_name = {h.name: h.score for h in asked}
    base = {
        h.name: h.score
        for h in registry.search(
            "what's running in docker?",
            settings=registry.settings.model_copy(update={"question_weight": 0.0}),
        )
    }
    factor = 1.0 + registry.settings.question_weight
    assert by_name["docker__list_containers"] == pytest.approx(
        base["docker__list_containers"] * factor
    )
    assert by_name["docker__run_container"] == base["docker__run_container"]
    assert by_name.get("docker__container_logs") == base.get("docker__container_logs")
    # The batch form and an explanation agree with the single search.
    many = registry.search_many(["what's running in docker?"], settings=heavy)[0]
    assert many[0].name == "docker__list_containers"
    assert [h.name for h in registry.search_many(["what's running in docker?"])[0]] == [
        h.name for h in asked
    ]
    explained = registry.search("what's running in docker?", explain=True)
    for hit in explained:
        parts = sum(sum(t.fields.values()) for t in hit.explanation or ())
        assert parts == pytest.approx(hit.score), hit.name


@pytest.mark.parametrize("engine", ENGINES)
def test_only_admitted_tools_are_boosted_or_named(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    admitted = {"docker__run_container", "docker__container_logs"}
    heavy = registry.settings.model_copy(update={"question_weight": 1.0})
    hits = registry.search("what's running in docker?", admitted=admitted, settings=heavy)
    assert hits and {h.name for h in hits} <= admitted
    assert hits[0].name == "docker__run_container"


@pytest.mark.parametrize("engine", ENGINES)
def test_weight_zero_turns_it_off(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    off = registry.settings.model_copy(update={"question_weight": 0.0})
    hits = registry.search("what's running in docker?", settings=off)
    plain = registry.search("what's running in docker", settings=off)
    assert [h.score for h in hits] == [h.score for h in plain]
    assert hits[0].name == "docker__run_container"


def test_catalogues_carry_the_servers_read_only_hint() -> None:
    items = [
        {"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
        {"name": "b", "inputSchema": {"type": "object"}, "annotations": {"title": "B"}},
        {"server": "s", "name": "c", "annotations": {"readOnlyHint": False}},
        {"name": "d", "input_schema": {"type": "object"}, "read_only": True},
    ]
    _, tools = parse_catalogue(json.dumps(items))
    assert {t.name: t.read_only for t in tools} == {
        "a": True,
        "b": None,
        "s__c": False,
        "d": True,
    }


@pytest.mark.parametrize(
    ("annotations", "field"),
    [({"readOnlyHint": "yes"}, "annotations.readOnlyHint"), (["readOnlyHint"], "annotations")],
)
def test_a_malformed_hint_names_the_tool_and_field(annotations: object, field: str) -> None:
    items = [
        {"name": "good", "inputSchema": {"type": "object"}},
        {"name": "bad", "inputSchema": {"type": "object"}, "annotations": annotations},
    ]
    with pytest.raises(CatalogueFormatError) as err:
        parse_catalogue(json.dumps(items), source="cat.json")
    assert f"'{field}'" in str(err.value) and "item 1" in str(err.value)
