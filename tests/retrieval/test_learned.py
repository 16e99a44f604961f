"""Learned hints (issue 24, item 3): teach, forget, inspect, keep, on both engines.

What a host checks: a request it taught finds its tool; forgetting undoes it exactly; the
cap keeps frequent requests; the file comes back byte for byte and a broken one is refused
naming the field; nothing learned ever reaches what a provider is sent, and a tool the
policy blocks is never found through what it was taught.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, vector_settings
from toolsurface import Tool, ToolRegistry, ToolSurface
from toolsurface.catalogue import load_catalogue
from toolsurface.errors import UnknownToolError
from toolsurface.evaluation import declare_server_groups
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.hints.learned import (
    LEARNED_QUERY_CHARS,
    LearnedFormatError,
    LearnedHints,
)
from toolsurface.tools.toolsearch import tool_search_tool

ENGINES = ["native", "pure"]
DATA = Path(__file__).resolve().parents[1] / "data"
VECTORS = json.loads((DATA / "learned_vectors.json").read_text("utf-8"))


def _tools() -> list[Tool]:
    return [
        Tool(name="pagerduty__get_oncalls", description="List who is on call for a schedule."),
        Tool(name="pagerduty__list_incidents", description="List open incidents."),
        Tool(name="slack__send_message", description="Send a message to a channel."),
        Tool(name="slack__add_reaction", description="Add an emoji reaction to a message."),
        Tool(name="k8s__rollout_restart", description="Restart the pods of a deployment."),
    ]


def _names(hits: Any) -> list[str]:
    return [h.name for h in hits]


@pytest.mark.parametrize("engine", ENGINES)
def test_learned_vectors(engine: str) -> None:
    base = vector_settings(VECTORS["settings"])
    lexicon = [tuple(e) for e in VECTORS["lexicon"]]
    registry = ToolRegistry(VECTORS["tools"], engine=engine, lexicon=lexicon, word_forms=False)  # type: ignore[arg-type]
    registry.learn_many([(query, tool) for tool, query in VECTORS["learned"]])
    admitted = set(VECTORS["admitted"])
    for case in VECTORS["cases"]:
        chosen = base.model_copy(
            update={"learned_weight": case["learned_weight"], "learned_b": case["learned_b"]}
        )
        allowed = admitted if case["admitted"] else None
        hits = registry.search(case["query"], 10, settings=chosen, admitted=allowed)
        where = (case["query"], case["learned_weight"], case["learned_b"], case["admitted"])
        assert _names(hits) == case["names"], where
        for h, want in zip(hits, case["scores"]):
            assert math.isclose(h.score, want, rel_tol=1e-9), where
        many = registry.search_many([case["query"]], 10, settings=chosen, admitted=allowed)
        assert _names(many[0]) == case["names"], where


@pytest.mark.parametrize("engine", ENGINES)
def test_a_taught_request_finds_its_tool_and_forgetting_undoes_it(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    query = "who's babysitting prod tonight"
    before = registry.search(query, k=3)
    assert "pagerduty__get_oncalls" not in _names(before)[:1]
    assert registry.learn("who is babysitting prod tonight?", "pagerduty__get_oncalls")
    after = registry.search(query, k=3)
    assert _names(after)[0] == "pagerduty__get_oncalls"
    why = registry.search(query, k=1, explain=True)[0].explanation
    assert why is not None and any(t.fields["learned"] > 0 for t in why)
    # What the tool is (and so what a provider is sent) did not change.
    assert registry.get("pagerduty__get_oncalls") == _tools()[0]
    assert registry.forget("pagerduty__get_oncalls") == 1
    again = registry.search(query, k=3)
    assert [(h.name, h.score) for h in again] == [(h.name, h.score) for h in before]


class _CountingBuilds:
    """A registry's backend as it is, counting the indexes it builds."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.builds = inner, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def index(self, *args: Any) -> Any:
        self.builds += 1
        return self.inner.index(*args)

    def index_in_parts(self, *args: Any) -> Any:
        self.builds += 1
        return self.inner.index_in_parts(*args)


@pytest.mark.parametrize("engine", ENGINES)
def test_prepare_builds_the_index_so_the_next_search_builds_nothing(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    counting = registry._backend = _CountingBuilds(registry._backend)
    registry.learn("who is babysitting prod tonight?", "pagerduty__get_oncalls")
    registry.prepare()
    assert counting.builds == 1  # built now, with the new hint
    hits = registry.search("who's babysitting prod", k=1)
    assert _names(hits) == ["pagerduty__get_oncalls"]
    assert counting.builds == 1  # and the search built nothing


def test_both_engines_rank_taught_requests_alike() -> None:
    pairs = [
        ("bounce checkout", "k8s__rollout_restart"),
        ("передёрни поды", "k8s__rollout_restart"),
        ("who holds the pager", "pagerduty__get_oncalls"),
        ("кто дежурит", "pagerduty__get_oncalls"),
        ("put eyes on it", "slack__add_reaction"),
    ]
    queries = ["bounce the pods", "кто держит пейджер", "eyes on that message", "передёрни"]
    results = []
    for engine in ENGINES:
        registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
        registry.learn_many(pairs)
        results.append([[(h.name, h.score) for h in registry.search(q)] for q in queries])
    for native, pure in zip(*results):
        assert [n for n, _ in native] == [n for n, _ in pure]
        for (_, a), (_, b) in zip(native, pure):
            assert math.isclose(a, b, rel_tol=1e-9)


class _Relearns:
    """A native backend that replaces learned texts in place, or (``relearns=False``) not."""

    def __init__(self, inner: Any, relearns: bool) -> None:
        self.inner, self.relearns, self.calls = inner, relearns, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def relearned(self, index: Any, learned: list[str]) -> Any:
        self.calls += 1
        return self.inner.relearned(index, learned)


def test_a_hint_learned_after_the_build_ranks_as_a_fresh_build_does() -> None:
    # The native registry keeps no copy of the tools' texts: a hint learned once the index
    # is built replaces the learned texts in the index it has (``Index.with_learned``).
    # Its rankings must be a fresh build's, and the pure engine's, after every change.
    tools = load_catalogue(ROOT / "python/toolsurface/data/demo_catalogue.json")[1]
    tools += [t for t in _tools() if t.name not in {d.name for d in tools}]
    steps: list[tuple[str, list[tuple[str, str]]]] = [
        (
            "learn",
            [
                ("bounce checkout", "k8s__rollout_restart"),
                ("кто дежурит", "pagerduty__get_oncalls"),
            ],
        ),
        (
            "learn",
            [
                ("put eyes on it", "slack__add_reaction"),
                ("bounce it again", "k8s__rollout_restart"),
            ],
        ),
        ("forget", [("", "k8s__rollout_restart")]),
        ("learn", [("who holds the pager tonight", "pagerduty__get_oncalls")] * 2),
    ]
    queries = [
        "bounce the pods",
        "кто держит пейджер",
        "eyes on that message",
        "pager",
        "checkout",
        "what is open on github?",  # a server mentioned, a question: the boost rules
        "send a slack message",
    ]
    in_place = ToolRegistry(tools, engine="native")
    spy = in_place._backend = _Relearns(in_place._backend, relearns=True)  # type: ignore[assignment]
    fresh = ToolRegistry(tools, engine="native")
    fresh._backend = _Relearns(fresh._backend, relearns=False)  # type: ignore[assignment]
    reference = ToolRegistry(tools, engine="pure")
    registries = (in_place, fresh, reference)
    for registry in registries:
        assert declare_server_groups(registry)  # the boost rules are rebuilt on each index
    before = [[(h.name, h.score) for h in in_place.search(q, k=5)] for q in queries]
    for registry in registries[1:]:
        registry.search("anything")  # built before the first hint
    moved = 0
    for what, pairs in steps:
        for registry in registries:
            if what == "learn":
                registry.learn_many(pairs)
            else:
                registry.forget(pairs[0][1])
        got = [[[(h.name, h.score) for h in r.search(q, k=5)] for q in queries] for r in registries]
        assert got[0] == got[1], what  # equal to a fresh build, to the last bit
        moved += got[0] != before
        for native, pure in zip(got[0], got[2]):
            assert [n for n, _ in native] == [n for n, _ in pure]
            assert all(math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(native, pure))
    assert spy.calls == len(steps)
    assert moved == len(steps)  # every step's hints changed what the requests find


def test_replacing_learned_texts_refuses_a_wrong_count_or_text_naming_it() -> None:
    native = backend("native")
    index: Any = native.index(["a__x", "b__y"], [native.fields(t) for t in _tools()[:2]])
    with pytest.raises(ValueError, match="1 learned texts for 2 documents"):
        index.with_learned(["only one"])
    with pytest.raises(ValueError, match=r"learned\[1\] \(document 'b__y'\).*lone surrogate"):
        index.with_learned(["fine", "bad \ud800"])
    assert len(index.with_learned(["fine", "also fine"])) == 2


def test_the_cap_forgets_the_rarest_then_the_oldest() -> None:
    hints = LearnedHints(cap=3)
    hints.add("first request", "t")
    hints.add("second request", "t")
    hints.add("second request", "t")  # taught twice: the most frequent
    hints.add("third request", "t")
    hints.add("fourth request", "t")  # over the cap: "first" is rarest and oldest
    kept = [r.query for r in hints.export()["t"]]
    assert kept == ["second request", "third request", "fourth request"]
    assert [r.count for r in hints.export()["t"]] == [2, 1, 1]


def test_requests_are_kept_cleaned_and_bounded() -> None:
    hints = LearnedHints()
    assert hints.add("  Who   is\ton call\u200b? ", "t")
    assert not hints.add(" \u200b ", "t")  # nothing left: kept nowhere
    assert hints.add("WHO IS ON CALL?", "t")  # the same request in other case: counted
    (row,) = hints.export()["t"]
    assert row.count == 2
    huge = "word " * 200_000
    assert hints.add(huge, "u")
    assert len(hints.export()["u"][0].query) <= LEARNED_QUERY_CHARS


@pytest.mark.parametrize("engine", ENGINES)
def test_the_file_round_trips_and_the_hits_with_it(engine: str, tmp_path: Path) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    registry.learn_many(
        [("bounce checkout", "k8s__rollout_restart"), ("кто дежурит", "pagerduty__get_oncalls")]
    )
    registry.learn("bounce checkout", "k8s__rollout_restart")
    path = tmp_path / "learned.json"
    registry.save_learned(path)
    text = path.read_text("utf-8")
    data = json.loads(text)
    assert (data["format"], data["version"]) == ("toolsurface-learned", 2)
    fresh = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    assert fresh.load_learned(path) == 2
    assert fresh.learned() == registry.learned()
    assert fresh.learned_hints.to_json() == text
    for q in ("bounce the pods", "кто дежурит сегодня"):
        assert _names(fresh.search(q)) == _names(registry.search(q))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d.update(version=3), "'version'"),
        (lambda d: d.update(format="other"), "'format'"),
        (lambda d: d.update(cap=0), "'cap'"),
        (lambda d: d["tools"]["t"][0].update(count=-1), "tools.t[0].count"),
        (lambda d: d["tools"]["t"][0].update(last=10**9), "tools.t[0].last"),
        (lambda d: d["tools"]["t"][0].update(query="  spaced  "), "tools.t[0].query"),
        (lambda d: d["tools"]["t"][0].update(extra=1), "tools.t[0]"),
        (lambda d: d["tools"].update(t="not a list"), "tools.t"),
        (lambda d: d["tools"].update(t=[d["tools"]["t"][0]] * 40), "tools.t"),
    ],
)
def test_a_broken_file_is_refused_naming_the_field(change: Any, named: str, tmp_path: Path) -> None:
    hints = LearnedHints()
    hints.add("some request", "t")
    data = json.loads(hints.to_json())
    change(data)
    path = tmp_path / "learned.json"
    path.write_text(json.dumps(data), "utf-8")
    registry = ToolRegistry(_tools())
    registry.learn("bounce checkout", "k8s__rollout_restart")
    kept = registry.learned()
    with pytest.raises(LearnedFormatError, match=named.replace("[", r"\[").replace("]", r"\]")):
        registry.load_learned(path)
    assert registry.learned() == kept  # the failed load lost nothing


def test_a_file_not_utf8_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "learned.json"
    path.write_bytes(b"\xff\xfe{}")
    registry = ToolRegistry(_tools())
    with pytest.raises(LearnedFormatError, match=r"learned\.json: not UTF-8 text .* at byte 0"):
        registry.load_learned(path)


def test_two_rows_of_one_request_keep_the_first_and_say_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Requests are kept casefolded, so a hand-edited file may hold one twice: nothing is
    # dropped without a word.
    hints = LearnedHints()
    hints.add("open prs", "t")
    data = json.loads(hints.to_json())
    row = data["tools"]["t"][0]
    data["tools"]["t"].append({**row, "query": "Open PRs", "count": 7})
    path = tmp_path / "learned.json"
    path.write_text(json.dumps(data), "utf-8")
    registry = ToolRegistry(_tools())
    with caplog.at_level("WARNING", logger="toolsurface"):
        assert registry.load_learned(path) == 1
    assert "tools.t[1]: the same request as [0]" in caplog.text
    assert [r.query for r in registry.learned()["t"]] == ["open prs"]


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"format": NaN}', "[" * 100_000])
def test_text_that_is_no_file_is_refused(text: str) -> None:
    with pytest.raises(LearnedFormatError):
        LearnedHints.from_json(text)


def test_wrong_names_and_arguments_are_named() -> None:
    registry = ToolRegistry(_tools())
    with pytest.raises(UnknownToolError, match="nope"):
        registry.learn("a request", "nope")
    with pytest.raises(TypeError, match="query must be a string"):
        registry.learn(b"bytes", "slack__send_message")  # type: ignore[arg-type]
    with pytest.raises(UnknownToolError, match="item 1"):
        registry.learn_many([("a", "slack__send_message"), ("b", "gone__tool")])
    assert registry.learned() == {}  # checked before any was taught
    kept = registry.learn_many(
        [("a request", "slack__send_message"), ("b request", "gone__tool")], missing_ok=True
    )
    assert kept == 1
    with pytest.raises(TypeError, match="item 0"):
        registry.learn_many(["just a string"])  # type: ignore[list-item]


def test_the_engines_take_five_or_six_fields_and_refuse_others() -> None:
    for engine in ENGINES:
        b = backend(engine)  # type: ignore[arg-type]
        index = b.index(["a", "b"], [("a", "", "", "", ""), ("b", "", "", "", "", "learned")])
        assert len(index) == 2
        for bad in [("a", "", "", ""), ("a", "", "", "", "", "", "")]:
            with pytest.raises((TypeError, ValueError), match="five or six"):
                b.index(["a"], [bad])
        w = (1.0,) * 4
        with pytest.raises(ValueError, match="five or six values"):
            index.search("a", 1, w, w, 1.2, 0.5)


def test_nothing_learned_reaches_the_provider_or_a_blocked_tool() -> None:
    registry = ToolRegistry([tool_search_tool(), *_tools()])
    registry.declare_group("pagerduty", prefix="pagerduty__", load="lazy")
    registry.declare_group("k8s", prefix="k8s__", load="lazy")
    blocked = "pagerduty__get_oncalls"
    surface = ToolSurface(registry, policy=lambda name: name != blocked, session_id="s")
    first = surface.plan()
    before = json.dumps(first.definitions(), sort_keys=True), first.catalogue
    registry.learn("who is babysitting prod tonight", blocked)
    registry.learn("who is babysitting prod tonight", blocked)
    registry.learn("bounce checkout", "k8s__rollout_restart")
    second = surface.plan()
    assert (json.dumps(second.definitions(), sort_keys=True), second.catalogue) == before
    assert "babysitting" not in json.dumps(second.definitions())
    result = surface.tool_search({"query": "who is babysitting prod tonight"})
    assert blocked not in result.text and blocked not in result.loaded
    found = surface.tool_search({"query": "bounce checkout"})
    assert "k8s__rollout_restart" in found.loaded


def test_learning_while_others_search() -> None:
    registry = ToolRegistry(_tools())
    errors: list[BaseException] = []

    def teach() -> None:
        try:
            for i in range(200):
                registry.learn(f"request number {i}", "slack__send_message")
                if i % 50 == 0:
                    registry.forget("slack__send_message")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def search() -> None:
        try:
            for _ in range(200):
                registry.search("request number", k=3)
                registry.search_many(["send a message", "request"], k=2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=teach), threading.Thread(target=search)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _names(registry.search("request number 199", k=1)) == ["slack__send_message"]


def test_the_file_is_written_durably_and_a_crashed_writes_leftovers_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import time

    registry = ToolRegistry(_tools())
    registry.learn("bounce checkout", "k8s__rollout_restart")
    path = tmp_path / "learned.json"
    old = time.time() - 3600
    crashed = tmp_path / ".learned.json.ab12cd.tmp"  # a write that never finished
    crashed.write_text("{half", "utf-8")
    os.utime(crashed, (old, old))
    under_way = tmp_path / ".learned.json.ef34gh.tmp"  # another process's write, just begun
    under_way.write_text("{", "utf-8")
    others = tmp_path / "notes.tmp"  # not this file's: never touched
    others.write_text("mine", "utf-8")
    os.utime(others, (old, old))

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    registry.save_learned(path)
    assert len(synced) == 2  # the file, then its directory
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, under_way.name, others.name]
    )
    assert ToolRegistry(_tools()).load_learned(path) == 1

    # A write that fails half way leaves the old file whole and nothing beside it.
    registry.learn("restart the pods", "k8s__rollout_restart")

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        registry.save_learned(path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, under_way.name, others.name]
    )
    assert ToolRegistry(_tools()).load_learned(path) == 1
