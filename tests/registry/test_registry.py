"""The registry: tools in and out, generations, and search as a host uses it."""

from __future__ import annotations

import gc
import itertools
import logging
import pickle
import sys
from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from toolsurface import (
    DuplicateToolError,
    FusionSettings,
    RetrievalSettings,
    SearchHit,
    Tool,
    ToolDefinitionError,
    ToolRegistry,
    UnknownToolError,
)
from toolsurface.registry import QUERY_MAX_CHARS

TOOLS = [
    Tool(
        name="github__list_pull_requests",
        description="List pull requests in a repository. Filter by state.",
        input_schema={
            "type": "object",
            "properties": {
                "repo": {"type": "string", "description": "Repository"},
                "state": {"type": "string", "enum": ["open", "closed"]},
            },
        },
    ),
    Tool(name="github__create_issue", description="Create a new issue in a repository."),
    Tool(name="slack__send_message", description="Send a message to a Slack channel."),
    Tool(
        name="calendar__create_event",
        description="Create a calendar event or meeting.",
        search_hint="schedule a call",
    ),
    Tool(name="fs__read_file", description="Read the contents of a file from disk."),
    Tool(name="pagerduty__list_incidents", description="List open incidents and alerts."),
]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]


def test_register_get_names_and_generation(registry: ToolRegistry) -> None:
    g = registry.generation
    assert registry.names() == sorted(t.name for t in TOOLS)
    registry.register({"name": "x.tool", "description": "Does x."})
    assert registry.generation > g
    assert registry.get("x.tool").description == "Does x."
    g = registry.generation
    assert registry.unregister("x.tool").name == "x.tool"
    assert registry.generation > g
    assert "x.tool" not in registry


def test_duplicate_names_both_definitions(registry: ToolRegistry) -> None:
    with pytest.raises(DuplicateToolError) as err:
        registry.register({"name": "fs__read_file", "description": "Again."}, where="server B")
    message = str(err.value)
    assert "fs__read_file" in message and "item 4" in message and "server B" in message
    replaced = registry.register({"name": "fs__read_file", "description": "New."}, replace=True)
    assert registry.get("fs__read_file") is replaced


def test_register_many_is_all_or_nothing(registry: ToolRegistry) -> None:
    before = registry.names()
    with pytest.raises(ToolDefinitionError) as err:
        registry.register_many([{"name": "ok_tool"}, {"name": "bad tool!"}], where="file.json")
    assert "'bad tool!'" in str(err.value) and "name" in str(err.value)
    assert "file.json item 1" in str(err.value)
    assert registry.names() == before


def test_unknown_names(registry: ToolRegistry) -> None:
    with pytest.raises(UnknownToolError, match="nope"):
        registry.get("nope")
    with pytest.raises(UnknownToolError, match="nope"):
        registry.unregister("nope")


def test_search_ranks_best_first(registry: ToolRegistry) -> None:
    hits = registry.search("list open pull requests", k=3)
    assert hits[0].name == "github__list_pull_requests"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_payload_words_weigh_half(registry: ToolRegistry) -> None:
    # Quoted text and the text after "word: " are what the action is given, not the action.
    terms = dict(registry.query_terms("create an issue: search page crashes"))
    assert terms["creat"] == terms["issu"] == 1.0
    assert terms["search"] == terms["page"] == terms["crash"] == 0.5
    terms = dict(registry.query_terms('post "deploy finished" in releases'))
    assert (terms["post"], terms["deploy"], terms["releas"]) == (1.0, 0.5, 1.0)
    # A word both inside and outside the payload keeps its full weight.
    assert dict(registry.query_terms('deploy "deploy"'))["deploy"] == 1.0
    # A colon without white space after it (ports, times, tags) starts no payload.
    assert dict(registry.query_terms("run redis:7 at 14:05"))["redi"] == 1.0
    # Nor does the closing colon of an emoji shortcode, common in chat requests.
    terms = dict(registry.query_terms("put an :eyes: on the latest message"))
    assert terms["latest"] == terms["messag"] == 1.0
    assert dict(registry.query_terms(":tada: deploy: done"))["done"] == 0.5
    # Expansions of a payload word weigh half as much as the lexicon's weight.
    assert dict(registry.query_terms("note: пулреквест"))["pull"] == 0.5
    # A number is an argument's value too; a word with digits in it is not a number.
    terms = dict(registry.query_terms("merge PR 231 into v2 after 2024-05-01"))
    assert (terms["231"], terms["2024"], terms["v2"], terms["merg"]) == (0.5, 0.5, 1.0, 1.0)
    # What comes before the ask ("can you", "go ahead and", "можешь") is context: it weighs
    # as the payload does. An ask that opens the request leaves every word whole.
    terms = dict(registry.query_terms("the checks are green, go ahead and merge it"))
    assert (terms["check"], terms["green"], terms["merg"]) == (0.5, 0.5, 1.0)
    assert dict(registry.query_terms("Can you merge the checks"))["check"] == 1.0
    terms = dict(registry.query_terms("упал деплой, МОЖЕШЬ глянуть логи"))
    assert (terms["депл"], terms["deploy"], terms["лог"], terms["log"]) == (0.5, 0.5, 1.0, 1.0)
    assert dict(registry.query_terms("go ahead merge the checks"))["check"] == 1.0
    # A marker that opens the request keeps its context whole, a second one too; a marker
    # inside the payload is the message's words, no ask.
    assert dict(registry.query_terms("can you check the build and can you merge"))["build"] == 1.0
    assert dict(registry.query_terms('post "can you review this?" in reviews'))["post"] == 1.0
    # So is a file name; the words around it are not, nor is a product named "X.js".
    terms = dict(registry.query_terms("rename notes.txt and app.YAML in the config of node.js"))
    assert (terms["note"], terms["txt"], terms["notestxt"], terms["yaml"]) == (0.5,) * 4
    assert (terms["renam"], terms["config"], terms["node"], terms["js"]) == (1.0,) * 4
    # So is a path (a repository, a branch, a folder), but not an upper-case pair.
    terms = dict(registry.query_terms("list merge requests of platform/api, not CI/CD"))
    assert (terms["platform"], terms["api"]) == (0.5, 0.5)
    assert (terms["merg"], terms["ci"], terms["cd"]) == (1.0, 1.0, 1.0)
    # What a search's items are about ("about", "mentioning", "про") is no part of the
    # action: from the marker on, past the first word and the ask, words weigh half.
    terms = dict(registry.query_terms("find the wiki page about release runbooks"))
    assert (terms["find"], terms["page"], terms["releas"], terms["runbook"]) == (1, 1, 0.5, 0.5)
    terms = dict(registry.query_terms("найди письмо ПРО акт сверки"))
    assert (terms["письм"], terms["акт"]) == (1.0, 0.5)
    terms = dict(registry.query_terms("about the outage, can you post an update"))
    assert (terms["outag"], terms["post"], terms["updat"]) == (0.5, 1.0, 1.0)
    assert dict(registry.query_terms('post "about time" in releases'))["releas"] == 1.0


def test_russian_request_finds_english_tool(registry: ToolRegistry) -> None:
    assert (
        registry.search("покажи открытые пулреквесты", k=1)[0].name == "github__list_pull_requests"
    )
    assert registry.search("назначь созвон на завтра", k=1)[0].name == "calendar__create_event"
    assert registry.search("отправь сообщение в канал", k=1)[0].name == "slack__send_message"


def test_lexicon_off_loses_the_russian_match(engine_name: str) -> None:
    plain = ToolRegistry(TOOLS, engine=engine_name, lexicon=None)  # type: ignore[arg-type]
    assert plain.search("покажи открытые пулреквесты") == []
    zero = ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        settings=RetrievalSettings(expansion_weight=0.0),
    )
    assert zero.search("покажи открытые пулреквесты") == []


def test_host_lexicon(engine_name: str) -> None:
    reg = ToolRegistry(TOOLS, engine=engine_name, lexicon=[("кальмар", "incident")])  # type: ignore[arg-type]
    assert reg.search("кальмары", k=1)[0].name == "pagerduty__list_incidents"


def test_ties_break_by_name(engine_name: str) -> None:
    twins = [Tool(name=n, description="Archive a ticket.") for n in ("b_tool", "a_tool", "c_tool")]
    reg = ToolRegistry(twins, engine=engine_name)  # type: ignore[arg-type]
    hits = reg.search("archive ticket")
    assert [h.name for h in hits] == ["a_tool", "b_tool", "c_tool"]
    assert hits[0].score == hits[1].score == hits[2].score


def test_k_and_admitted(registry: ToolRegistry) -> None:
    assert registry.search("repository", k=0) == []
    assert len(registry.search("repository", k=1)) == 1
    hits = registry.search("repository", admitted={"github__create_issue", "not_registered"})
    assert [h.name for h in hits] == ["github__create_issue"]
    assert registry.search("repository", admitted=set()) == []


def test_explain_adds_up(registry: ToolRegistry) -> None:
    hit = registry.search("list pull requests", k=1, explain=True)[0]
    assert hit.explanation is not None
    terms = {c.term for c in hit.explanation}
    assert {"list", "pull", "request"} <= terms
    assert sum(c.total for c in hit.explanation) == pytest.approx(hit.score, rel=1e-12)
    name_part = next(c for c in hit.explanation if c.term == "pull").fields
    assert name_part["name"] > 0 and name_part["summary"] > 0 and name_part["search_hint"] == 0


def test_enum_values_are_searched_with_the_body(registry: ToolRegistry) -> None:
    # "closed" is only an enum value of github__list_pull_requests' "state" parameter.
    hit = registry.search("closed", k=1, explain=True)[0]
    assert hit.name == "github__list_pull_requests"
    assert hit.explanation is not None
    parts = next(c for c in hit.explanation if c.term == "close").fields
    assert parts["body"] > 0 and parts["params"] == 0


def test_typo_falls_back_to_similar_forms(registry: ToolRegistry) -> None:
    hits = registry.search("pul reqests", k=2)
    assert hits and hits[0].name == "github__list_pull_requests" and hits[0].fallback
    assert not registry.search("list pull requests", k=1)[0].fallback


def test_one_letter_words_never_match(registry: ToolRegistry) -> None:
    # No terms to search for: the first tools in registration order, none scored.
    assert registry.search("a i x q") == registry.search("")
    assert all(hit.score == 0.0 for hit in registry.search("a i x q"))


def test_bad_queries_get_clear_errors(registry: ToolRegistry) -> None:
    with pytest.raises(TypeError, match="query must be a string, got int"):
        registry.search(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got NoneType"):
        registry.search(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be"):
        registry.search("x", k=-1)
    with pytest.raises(ValueError, match="k must be"):
        registry.search("x", k=True)


def test_bad_arguments_beside_the_query_get_clear_errors(registry: ToolRegistry) -> None:
    # A lone string is no set of names (it was read as its letters: no hit, no error).
    name = registry.names()[0]
    with pytest.raises(TypeError, match="admitted must be a collection of tool names, not a str"):
        registry.search("read a file", admitted=name)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="admitted must be a collection"):
        registry.search_many(["read a file"], admitted=name)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="query must be a string, got NoneType"):
        registry.mentioned_groups(None)  # type: ignore[arg-type]
    # A lone surrogate reads as a search reads it, on either engine.
    assert registry.terms("read github\ud800 issues") == registry.terms("read github issues")
    with pytest.raises(ValueError, match=r"alias 'chat\\ud800 app' must be text: a lone surrogate"):
        registry.declare_group("chat", prefix="slack__", aliases=["chat\ud800 app"])
    with pytest.raises(ValueError, match="must be text: a lone surrogate U\\+D800"):
        registry.declare_group("chat", prefix="slack__", description="d\ud800")
    assert "chat" not in registry.groups()


def test_settings_past_any_useful_value_are_refused() -> None:
    # At 1e308 every score of a search was infinite, and the ranking fell to name order.
    for field in ("k1", "expansion_weight", "mention_weight", "question_weight"):
        with pytest.raises(ValidationError, match="less than or equal to 1000000"):
            RetrievalSettings(**{field: 1e308})
    with pytest.raises(ValidationError, match=r"weight of name must be within \[0, 1e\+06\]"):
        RetrievalSettings(weights={**RetrievalSettings().weights.model_dump(), "name": 1e9})


def test_enormous_query_is_capped(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    query = "send message " + "zzz " * QUERY_MAX_CHARS
    with caplog.at_level(logging.INFO, logger="toolsurface"):
        hits = registry.search(query, k=1)
    assert hits[0].name == "slack__send_message"
    assert "analysed on its first" in caplog.text
    assert registry.search("\x00\uffff\ud800" * 1000) == registry.search("")  # no terms


def test_index_rebuilds_only_when_generation_moves(registry: ToolRegistry) -> None:
    registry.search("file")
    built = registry._built
    registry.search("message")
    assert registry._built is built
    registry.register({"name": "fs__write_file", "description": "Write a file."})
    assert registry.search("write file", k=1)[0].name == "fs__write_file"
    assert registry._built is not built


class _Host:
    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)
        self.seen: list[str] = []

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        self.seen = list(names)
        return [n for n in self.order if n in names][:k]


class _Broken:
    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        raise RuntimeError("embedding service down")


class _Garbled:
    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        return [["not", "a", "name"]]  # type: ignore[list-item]


def test_fusion_with_a_host_ranker(registry: ToolRegistry) -> None:
    host = _Host(["fs__read_file", "slack__send_message"])
    hits = registry.search("send message", k=3, retrievers=[host])
    assert hits[0].name == "slack__send_message"
    assert "fs__read_file" in [h.name for h in hits]
    admitted = {"slack__send_message", "github__create_issue"}
    registry.search("send message", admitted=admitted, retrievers=[host])
    assert set(host.seen) == admitted


def test_failing_host_ranker_is_logged_and_lexical_served(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    lexical = registry.search("send message", k=3)
    with caplog.at_level(logging.ERROR, logger="toolsurface"):
        hits = registry.search("send message", k=3, retrievers=[_Broken()])
    assert hits == lexical
    assert "embedding service down" in caplog.text
    # A ranking that is no list of names fails the same way, beside a host that answers.
    host = _Host(["fs__read_file"])
    with caplog.at_level(logging.ERROR, logger="toolsurface"):
        both = registry.search("send message", k=3, retrievers=[host, _Garbled()])
    assert both == registry.search("send message", k=3, retrievers=[host])


class _Declining:
    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        return []  # cannot read the request


def test_declining_host_ranker_leaves_the_lexical_hits(registry: ToolRegistry) -> None:
    lexical = registry.search("send message", k=3)
    assert registry.search("send message", k=3, retrievers=[_Declining()]) == lexical
    # A ranking of names outside the admitted pool is a declined one too.
    outside = _Host(["not_registered"])
    assert registry.search("send message", k=3, retrievers=[outside]) == lexical
    # Beside a host that answers, a declining one counts for nothing.
    host = _Host(["fs__read_file", "slack__send_message"])
    both = registry.search("send message", k=3, retrievers=[host, _Declining()])
    assert both == registry.search("send message", k=3, retrievers=[host])


def test_a_host_ranking_is_fused_to_the_fusion_depth(engine_name: str) -> None:
    # The host returns more names than it was asked for: only its first FUSION_DEPTH (50)
    # are fused, so a lexical hit it lists 51st gains nothing from it.
    fillers = [Tool(name=f"tool_{i:02d}", description=f"Does thing number {i}.") for i in range(55)]
    zebras = [
        Tool(name="zebra_a", description="Feeds a zebra, a zebra, a zebra."),
        Tool(name="zebra_b", description="Counts a zebra and a zebra."),
        Tool(name="zebra_c", description="Paints a zebra in a long sentence of many words."),
    ]
    reg = ToolRegistry(fillers + zebras, engine=engine_name)  # type: ignore[arg-type]
    first_fifty = [t.name for t in fillers[:50]]

    class _Overlong(_Host):
        def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
            return [n for n in self.order if n in names]  # ignores k

    over = reg.search("zebra", k=10, retrievers=[_Overlong([*first_fifty, "zebra_c"])])
    exact = reg.search("zebra", k=10, retrievers=[_Host(first_fifty)])
    assert [h.name for h in reg.search("zebra", k=3)] == ["zebra_a", "zebra_b", "zebra_c"]
    assert over == exact


def test_fusion_weights_and_constant(registry: ToolRegistry) -> None:
    lexical = [h.name for h in registry.search("send message", k=3)]
    assert lexical[0] == "slack__send_message"
    host = _Host(["fs__read_file", "github__create_issue"])
    # Lexical weight 1.5, k 6 (the defaults): lexical first 1.5/7, host first 1/7.
    hits = registry.search("send message", k=3, retrievers=[host])
    assert registry.fusion == FusionSettings(k=6.0, lexical_weight=1.5)
    assert hits[0].name == "slack__send_message"
    assert hits[0].score == pytest.approx(1.5 / 7)
    assert hits[1].name == "fs__read_file" and hits[1].score == pytest.approx(1 / 7)
    # Lexical weight 0.5: the host's first place wins.
    light = FusionSettings(k=6.0, lexical_weight=0.5)
    hits = registry.search("send message", k=3, retrievers=[host], fusion=light)
    assert hits[0].name == "fs__read_file" and hits[0].score == pytest.approx(1 / 7)
    # Plain RRF (k 60, weights 1): the lexical first place wins the tie with the host's.
    plain = ToolRegistry(
        TOOLS,
        engine=registry.engine,
        retrievers=[host],
        fusion=FusionSettings(k=60.0, lexical_weight=1.0),
    )
    hits = plain.search("send message", k=3)
    assert [h.name for h in hits[:2]] == ["slack__send_message", "fs__read_file"]
    assert hits[0].score == pytest.approx(1 / 61) and hits[1].score == pytest.approx(1 / 61)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"k": 0.0}, "k"),
        ({"k": float("inf")}, "k"),
        ({"lexical_weight": -1.0}, "lexical_weight"),
        ({"lexical_weight": float("nan")}, "lexical_weight"),
        ({"k": "6"}, "k"),
        ({"lexical_weight": True}, "lexical_weight"),
        ({"depth": 3}, "depth"),
    ],
)
def test_fusion_settings_are_checked(kwargs: dict[str, object], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        FusionSettings(**kwargs)  # type: ignore[arg-type]
    assert FusionSettings(k=6, lexical_weight=1).k == 6.0


def test_fusion_must_be_fusion_settings(registry: ToolRegistry) -> None:
    with pytest.raises(TypeError, match="FusionSettings"):
        registry.search("send message", fusion={"k": 6})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="FusionSettings"):
        ToolRegistry(fusion=(6, 1.5))  # type: ignore[arg-type]


def test_search_many_matches_search(registry: ToolRegistry) -> None:
    # Every query found, a query that finds nothing, one of function words only (answered
    # in registration order), and k=0.
    every = ["send message", "покажи пулреквесты", "read file"]
    for queries in (every, [*every, "zzzz"], [*every, "what is it?"]):
        many = registry.search_many(queries, k=3)
        assert many == [registry.search(q, k=3) for q in queries]
    assert registry.search("what is it?", k=3)
    assert registry.search_many(every, k=0) == [[], [], []]


def test_search_many_across_many_chunks_matches_search(registry: ToolRegistry) -> None:
    # Past the native core's chunk (256 hits between letting the GIL go) many times over,
    # on both paths, with the collector paused meanwhile and as it was afterwards.
    queries = ["send message", "покажи пулреквесты", "read file", "zzzz", "issue"] * 120
    one = {q: registry.search(q, k=10) for q in set(queries)}
    names = registry.names()
    assert gc.isenabled()
    assert registry.search_many(queries, k=10) == [one[q] for q in queries]
    assert registry.search_many(queries, k=10, admitted=names) == [one[q] for q in queries]
    assert gc.isenabled()


_BATCH_ON_POOL = """
import json, sys
from toolsurface import ToolRegistry
tools = [{"name": f"s{i}__read_item_{i}", "description": f"Read item {i}."} for i in range(300)]
registry = ToolRegistry(tools, engine=sys.argv[1])
queries = [f"read item {i}" for i in range(700)] + ["zzzz"]
one = [[(h.name, h.score) for h in registry.search(q, k=5)] for q in queries]
many = [[(h.name, h.score) for h in hits] for hits in registry.search_many(queries, k=5)]
print(json.dumps(many == one))
"""


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_search_many_on_a_pool_of_any_size_answers_as_search(
    engine_name: str, threads: str
) -> None:
    # The calling thread scores chunks too when it has none to convert: with a pool of one
    # thread it scores them all, with more it shares them (many chunks, in order).
    import os
    import subprocess

    env = {**os.environ, "RAYON_NUM_THREADS": threads}
    run = subprocess.run(
        [sys.executable, "-c", _BATCH_ON_POOL, engine_name],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "true"


def test_search_many_prepares_every_query_as_search_does(registry: ToolRegistry) -> None:
    # A batch of plain strings is checked in a few passes over it; a lone surrogate, an
    # over-long request or a str subclass anywhere in it must still be searched as alone.
    class Text(str):
        pass

    queries = ["send message", "read file\ud800", "read file " * 600, Text("send message")]
    assert registry.search_many(queries, k=5) == [registry.search(q, k=5) for q in queries]
    assert registry.search_many(queries[:1], k=5) == [registry.search(queries[0], k=5)]
    assert registry.search_many([], k=5) == []
    # Plain and short, the batch goes to the engine as it is: a lone surrogate there too.
    plain = ["send message", "read file\ud800", "прочитай файл\udc00"]
    assert registry.search_many(plain, k=5) == [registry.search(q, k=5) for q in plain]
    assert registry.search_many(plain, k=5)[1][0].name == registry.search("read file")[0].name


def test_search_many_refuses_a_lone_string_and_names_a_bad_query(registry: ToolRegistry) -> None:
    with pytest.raises(TypeError, match="not a single string"):
        registry.search_many("github")
    with pytest.raises(TypeError, match=r"queries\[1\] must be a string, got int"):
        registry.search_many(["send message", 5])  # type: ignore[list-item]


def _full_path(registry: ToolRegistry, query: str, k: int = 10) -> list[tuple[str, float, int]]:
    """What the explaining path (no bound searcher) ranks: the hot path's reference."""
    return [(h.name, h.score, h.rank) for h in registry.search(query, k, explain=True)]


def test_hot_path_follows_the_catalogue_and_the_settings(registry: ToolRegistry) -> None:
    queries = ["write file", "send a message", "покажи пулреквесты", "zzqx", "file\ud800"]
    for q in queries:
        hits = registry.search(q)
        assert all(type(h) is SearchHit for h in hits)
        assert [(h.name, h.score, h.rank) for h in hits] == _full_path(registry, q)
    registry.register({"name": "fs__write_file", "description": "Write a file to disk."})
    assert registry.search("write file", k=1)[0].name == "fs__write_file"
    before = registry.search("send a message in a channel")
    registry.settings = RetrievalSettings(k1=0.3)
    after = registry.search("send a message in a channel")
    assert [h.score for h in after] != [h.score for h in before]
    assert [(h.name, h.score, h.rank) for h in after] == _full_path(
        registry, "send a message in a channel"
    )
    registry.unregister("fs__write_file")
    assert "fs__write_file" not in [h.name for h in registry.search("write file")]


def test_native_searcher_rejects_mismatched_arguments() -> None:
    native = pytest.importorskip("toolsurface._native", reason="the native core is not built")
    reg = ToolRegistry(TOOLS, engine="native")
    reg.search("file")
    built = reg._current()
    args = ((1.0,) * 5, (0.5,) * 5, 1.2, 1.0)
    with pytest.raises(ValueError, match="one name per document: 1 names for"):
        built.index.searcher(["x"], SearchHit, *args, None)
    with pytest.raises(ValueError, match="hit_type must be a tuple subclass, got dict"):
        built.index.searcher(built.names, dict, *args, None)
    searcher = built.index.searcher(built.names, SearchHit, *args, None)
    assert isinstance(searcher, native.Searcher)
    with pytest.raises(ValueError, match="k must be >= 0"):
        searcher.search("file", -1)


def test_native_hits_made_directly_are_the_named_tuples_python_makes() -> None:
    """Hits allocated in Rust (Python 3.10 to 3.13) equal, hash and behave as built ones."""
    pytest.importorskip("toolsurface._native", reason="the native core is not built")
    reg = ToolRegistry(TOOLS, engine="native")
    reg.search("file")
    built = reg._current()
    args = ((1.0,) * 5, (0.5,) * 5, 1.2, 1.0)
    direct = built.index.searcher(built.names, SearchHit, *args, None)
    generic = built.index.searcher(built.names, SearchHit, *args, None, direct_hits=False)
    if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
        assert direct.direct_hits is True
    else:  # 3.14's tuples cache their hash: always through tuple.__new__
        assert direct.direct_hits is False
    assert generic.direct_hits is False
    queries = ["file", "read a file", "send a message in a channel", "zzqx"]
    for q in queries:
        a, b = direct.search(q, 10), generic.search(q, 10)
        assert a == b
        for hit, ref in zip(a, b):
            assert type(hit) is SearchHit and len(hit) == 5
            rebuilt = SearchHit(ref.name, ref.score, ref.rank, ref.fallback, None)
            assert hit == rebuilt and hash(hit) == hash(rebuilt) == hash(tuple(rebuilt))
            assert hit.explanation is None and hit._replace(rank=99).rank == 99
            assert hit._asdict()["name"] == hit[0] == ref.name
            assert pickle.loads(pickle.dumps(hit)) == hit
            # Made directly, a hit of atomic items is untracked, as the collector leaves
            # such tuples of Python's after a pass (the next test).
            assert gc.is_tracked(hit) is not direct.direct_hits
            referents = {id(r) for r in gc.get_referents(hit)}
            assert {id(hit.name), id(hit.score), id(hit.rank)} <= referents
    assert any(direct.search(q, 10) for q in queries)


def test_native_hits_keep_reference_counts_balanced() -> None:
    """Thousands of hits made and dropped leave each name's reference count as it was."""
    pytest.importorskip("toolsurface._native", reason="the native core is not built")
    reg = ToolRegistry(TOOLS, engine="native")
    k = len(TOOLS)
    query = "create list read send file issue message event"
    reg.search(query, k=k)
    first = reg.search(query, k=k)  # the second search has the bound searcher made
    assert len(first) > 1
    built = reg._current()
    # The searcher's own name strings: each hit holds one more reference to one of them.
    # Counts go in lists: a dict keyed by the names would itself add a reference.
    strings = [n2 for n2 in built.names for n in [h.name for h in first] if n2 == n]
    del first
    searcher = reg._fast[4] if reg._fast is not None else None
    assert searcher is not None
    if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
        assert searcher.direct_hits  # type: ignore[attr-defined]

    def moved() -> tuple[list[int], int, int]:
        """What 2,000 searches leave changed: the names' counts, the type's, the blocks."""
        gc.collect()  # what earlier garbage still holds goes first
        names_before = [sys.getrefcount(s) for s in strings]
        type_refs = sys.getrefcount(SearchHit)
        blocks = sys.getallocatedblocks()
        for _ in range(2_000):
            reg.search(query, k=k)
        gc.collect()
        names_after = [sys.getrefcount(s) for s in strings]  # counted as before was
        names = [a - b for a, b in zip(names_after, names_before)]
        return names, sys.getrefcount(SearchHit) - type_refs, sys.getallocatedblocks() - blocks

    # The counts and blocks are the process's: another test's thread winding down can move
    # them during a pass. A leak moves them on every pass, so the quietest of three counts.
    # What the suite made before this test is frozen out of the collections, which then
    # walk only this test's objects (a full collection of the whole suite's took seconds).
    gc.collect()
    gc.freeze()
    try:
        passes = [moved() for _ in range(3)]
    finally:
        gc.unfreeze()
    names_moved, type_moved, blocks_moved = min(
        passes, key=lambda p: (sum(map(abs, p[0])) + abs(p[1]), p[2])
    )
    assert names_moved == [0] * len(strings)
    assert type_moved == 0
    # A leaked score, rank or hit per hit would be over 12,000 blocks.
    assert blocks_moved < 1_000
    gc.collect()
    before = [sys.getrefcount(s) for s in strings]
    held = reg.search(query, k=k)
    assert {id(h.name) for h in held} == {id(s) for s in strings}
    # From 3.12 the names (literals, so interned) are immortal: their counts do not move.
    if all(b < 1 << 29 for b in before):
        assert [sys.getrefcount(s) for s in strings] == [b + 1 for b in before]


@pytest.mark.parametrize("hit_type", ["time.struct_time", "os.stat_result"])
def test_native_hits_of_a_tuple_type_with_its_own_constructor_go_through_tuple_new(
    hit_type: str,
) -> None:
    """A struct sequence holds more fields than a hit: refused as ``tuple.__new__`` refuses it."""
    pytest.importorskip("toolsurface._native", reason="the native core is not built")
    module, _, name = hit_type.partition(".")
    kind = getattr(__import__(module), name)
    reg = ToolRegistry(TOOLS, engine="native")
    reg.search("file")
    built = reg._current()
    args = ((1.0,) * 5, (0.5,) * 5, 1.2, 1.0)
    searcher = built.index.searcher(built.names, kind, *args, None)
    assert searcher.direct_hits is False
    with pytest.raises(TypeError, match="is not safe"):
        searcher.search("read a file", 3)


def test_native_hits_are_left_to_the_collector_only_when_they_could_be_in_a_cycle() -> None:
    """Hits of atomic items and no ``__dict__`` are made untracked, as CPython's tuples are.

    A hit type whose instances have a ``__dict__`` could be made part of a cycle through it,
    so its hits stay tracked, and such a cycle is still collected.
    """
    pytest.importorskip("toolsurface._native", reason="the native core is not built")
    reg = ToolRegistry(TOOLS, engine="native")
    reg.search("read a file")
    hits = reg.search("read a file")
    assert hits and all(type(h) is SearchHit for h in hits)
    direct = reg._fast is not None and reg._fast[4].direct_hits  # type: ignore[attr-defined]
    assert all(gc.is_tracked(h) is not direct for h in hits)

    collected: list[bool] = []

    class WithDict(tuple):  # type: ignore[type-arg]
        def __del__(self) -> None:
            collected.append(True)

    built = reg._current()
    args = ((1.0,) * 5, (0.5,) * 5, 1.2, 1.0)
    searcher = built.index.searcher(built.names, WithDict, *args, None)
    hits_with_dict = searcher.search("read a file", 3)
    assert hits_with_dict and all(gc.is_tracked(h) for h in hits_with_dict)
    hit = hits_with_dict[0]
    hit.me = hit  # type: ignore[attr-defined]
    del hit, hits_with_dict
    collected.clear()  # the other hits went with their list
    gc.collect()
    assert collected == [True]  # the cycle through the hit's __dict__ was collected


def test_native_hits_follow_a_hit_type_whose_bases_change() -> None:
    """Bases reassigned after the searcher was made: hits go back through ``tuple.__new__``."""
    pytest.importorskip("toolsurface._native", reason="the native core is not built")

    class First(tuple):  # type: ignore[type-arg]
        __slots__ = ()

    class Second(tuple):  # type: ignore[type-arg]
        __slots__ = ()

        def __getitem__(self, i: object) -> object:
            return "second"

    class Hit(First):
        __slots__ = ()

    reg = ToolRegistry(TOOLS, engine="native")
    reg.search("file")
    built = reg._current()
    args = ((1.0,) * 5, (0.5,) * 5, 1.2, 1.0)
    searcher = built.index.searcher(built.names, Hit, *args, None)
    hits = searcher.search("read a file", 3)
    assert hits and all(type(h) is Hit and h[0] in built.names for h in hits)
    direct = searcher.direct_hits
    Hit.__bases__ = (Second,)
    assert searcher.direct_hits is False
    assert direct is (sys.implementation.name == "cpython" and sys.version_info < (3, 14))
    again = searcher.search("read a file", 3)
    assert [tuple.__getitem__(h, 0) for h in again] == [tuple.__getitem__(h, 0) for h in hits]
    assert all(type(h) is Hit and h[0] == "second" for h in again)
