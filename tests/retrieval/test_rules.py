"""Boost rules in the engine (docs/analysis.md §8, §10): one engine call answers a search.

A registry with declared groups and read-only tools hands the engine its rules once; each
search then finds the request's mentions and question and applies them in that call, on
both engines alike (scores within 1e-9), singly, in batches and among admitted tools.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_available
from toolsurface import RetrievalSettings, Tool, ToolRegistry
from toolsurface.catalogue import demo_catalogue
from toolsurface.evaluation import declare_server_groups
from toolsurface.retrieval.analysis import questions
from toolsurface.retrieval.analysis.questions import asks, question_words
from toolsurface.retrieval.engine.backend import backend

REL = 1e-9
ENGINES = ["native", "pure"]

#: Requests that mention a service, ask, do both or neither (the demo catalogue's servers).
QUERIES = [
    "what's failing in ci",
    "list the open pull requests on github",
    "post the release notes in slack",
    "which pagerduty incidents are open?",
    "покажи открытые задачи в jira",
    "какие алерты горят в grafana",
    "restart the payments deployment in k8s",
    "create an issue: search page crashes",
    'send "are you up?" to the oncall channel',
    "show me yesterday's sentry errors",
    "delete the staging bucket",
    "найди письмо от бухгалтерии в gmail",
    "merge it",
    "gitlab or github, which has the failing pipeline",
]


def _need_native() -> None:
    if not native_available():
        pytest.skip("the native core is not built: parity needs both engines")


def _registries(tools: list[Tool]) -> dict[str, ToolRegistry]:
    made = {}
    for engine in ENGINES:
        registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
        declare_server_groups(registry)
        made[engine] = registry
    return made


def _same(a: list[Any], b: list[Any], label: object) -> None:
    assert [h.name for h in a] == [h.name for h in b], label
    for x, y in zip(a, b):
        assert math.isclose(x.score, y.score, rel_tol=REL, abs_tol=0.0), label
        assert x.fallback == y.fallback, label


def test_both_engines_rank_alike_with_groups_and_read_only_tools() -> None:
    _need_native()
    regs = _registries(demo_catalogue())
    admitted = {n for n in regs["pure"].names() if not n.startswith(("github__", "slack__"))}
    for q in QUERIES:
        _same(regs["native"].search(q), regs["pure"].search(q), q)
        _same(
            regs["native"].search(q, admitted=admitted),
            regs["pure"].search(q, admitted=admitted),
            (q, "admitted"),
        )
        explained = [regs[e].search(q, k=3, explain=True) for e in ENGINES]
        _same(*explained, (q, "explain"))
        for a, b in zip(*explained):
            assert a.explanation is not None and b.explanation is not None
            # The parts of an explanation add up to the hit's score, its boosts included.
            total = sum(sum(t.fields.values()) for t in a.explanation)
            assert math.isclose(total, a.score, rel_tol=1e-9), (q, a.name)
            assert [t.term for t in a.explanation] == [t.term for t in b.explanation]


def test_a_batch_answers_as_single_searches_do() -> None:
    _need_native()
    regs = _registries(demo_catalogue())
    admitted = {n for n in regs["pure"].names() if "__list" in n or "__get" in n}
    for engine, registry in regs.items():
        for allowed in (None, admitted):
            batch = registry.search_many(QUERIES, k=5, admitted=allowed)
            for q, hits in zip(QUERIES, batch):
                _same(hits, registry.search(q, k=5, admitted=allowed), (engine, q, allowed))


@pytest.mark.parametrize("engine", ENGINES)
def test_the_rules_raise_what_the_request_names_and_asks(engine: str) -> None:
    if engine == "native":
        _need_native()
    tools = [
        Tool(name="alpha__list_containers", description="List containers.", read_only=True),
        Tool(name="alpha__run_container", description="Run a container."),
        Tool(name="beta__run_container", description="Run a container."),
    ]
    registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    # Without rules: equal scores, ties by name.
    assert registry.search("run a container in podman")[0].name == "alpha__run_container"
    registry.declare_group("alpha", prefix="alpha__", aliases=["docker"])
    registry.declare_group("beta", prefix="beta__", aliases=["podman"])
    assert registry.search("run a container in podman")[0].name == "beta__run_container"
    # A question that names docker: its tools times 1.5, the one that only reads also 1.3.
    off = RetrievalSettings(mention_weight=0.0, question_weight=0.0)
    q = "which containers are running in docker"
    on = {h.name: h.score for h in registry.search(q)}
    plain = {h.name: h.score for h in registry.search(q, settings=off)}
    assert math.isclose(on["alpha__list_containers"], plain["alpha__list_containers"] * 1.5 * 1.3)
    assert math.isclose(on["alpha__run_container"], plain["alpha__run_container"] * 1.5)
    assert on["beta__run_container"] == plain["beta__run_container"]
    # Told, not asked: only the mention's factor.
    told = {h.name: h.score for h in registry.search("stop the containers in docker")}
    told_plain = {
        h.name: h.score for h in registry.search("stop the containers in docker", settings=off)
    }
    assert math.isclose(told["alpha__list_containers"], told_plain["alpha__list_containers"] * 1.5)


def test_on_the_native_engine_no_ranking_signal_is_computed_in_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _need_native()
    registry = _registries(demo_catalogue())["native"]
    want = {q: [h.name for h in registry.search(q)] for q in QUERIES}

    def refuse(*args: object) -> bool:
        raise AssertionError("a ranking signal was computed in Python")

    monkeypatch.setattr(questions, "asks", refuse)
    monkeypatch.setattr(questions, "is_question", refuse)
    monkeypatch.setattr(type(registry._current().index), "mentions", refuse, raising=False)
    registry.learn("cut a release", "github__create_release")  # a new index and new rules
    for q in QUERIES:
        got = [h.name for h in registry.search(q)]
        assert len(got) == len(want[q]), q
    assert registry.search_many(QUERIES, k=3)


def test_rules_made_for_another_index_are_refused() -> None:
    for name in ENGINES:
        if name == "native":
            _need_native()
        b = backend(name)  # type: ignore[arg-type]
        small = b.index(["a"], [("a", "", "send", "", "")])
        large = b.index(["a", "b"], [("a", "", "send", "", ""), ("b", "", "send", "", "")])
        rules = b.rules(small, None, [], [], [0], ["what"], 1.0, 2.0)
        searcher = b.searcher(large, ["a", "b"], ([1.0] * 6, [0.5] * 6, 1.2, 0.6), None, rules)
        with pytest.raises(ValueError, match="boost rules made for an index of 1 documents"):
            searcher.search("send", 3)
        with pytest.raises(ValueError, match="out of range"):
            b.rules(small, None, [5], [1], [], [], 2.0, 1.0)
        with pytest.raises(ValueError, match="finite and at least 1"):
            b.rules(small, None, [], [], [], [], 0.5, 1.0)
        for ends in ([2], [1, 0]):  # past the ids; below the previous end
            with pytest.raises(ValueError, match=r"member_ends\[\d\] = \d: not between"):
                b.rules(small, None, [0], ends, [], [], 2.0, 1.0)


_PIECES = [*"whatsliокаке?？;؟\"«»“”:'’ \n\u200b\u0301\u00adW1_-.", "what", "какие", "Show"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_both_engines_agree_on_what_asks(text: str) -> None:
    if not native_available():
        pytest.skip("the native core is not built: parity needs both engines")
    analyzer = backend("native").analyzer
    words = question_words()
    assert analyzer.asks(text, sorted(words)) == asks(text, words), text


@pytest.mark.slow
def test_real_catalogue_with_server_groups_every_dev_query(
    mcp_tools: list[Tool], dev_queries: list[dict[str, Any]]
) -> None:
    _need_native()
    regs = _registries(mcp_tools)
    queries = [str(q["query"]) for q in dev_queries]
    batches = {e: r.search_many(queries, k=10) for e, r in regs.items()}
    for i, q in enumerate(queries):
        _same(batches["native"][i], batches["pure"][i], q)
        if i % 10 == 0:
            _same(regs["native"].search(q), batches["native"][i], (q, "single"))
