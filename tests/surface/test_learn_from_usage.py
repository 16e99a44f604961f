"""The surface learns from usage (issue 24, item 3): a search, then a call of what it found.

``ToolSurface(learn_from_usage=True)`` teaches the registry (query, tool) when a call that
runs, not blind, of a tool a recent ToolSearch search returned follows it; every other move
teaches nothing. Run on the live engine (CI runs the suite on each).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall, Verdict
from toolsurface.surface import Event
from toolsurface.surface.usage import LEARN_WINDOW

QUERY = "search for the release runbook"
#: The search's second hit: the one the model calls, so learning has a ranking to change.
WIKI = "wiki__search_pages"
NOTES = "notes__search_notes"
PAGER = "pager__list_oncalls"


def _registry(engine: str) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(
        [
            tool_search_tool(),
            Tool(name="fs__read_file", description="Read a file from disk."),
            Tool(name=WIKI, description="Search the pages of the team wiki."),
            Tool(name=NOTES, description="Search your notes by text."),
            Tool(name=PAGER, description="List who is on call for a schedule."),
        ]
    )
    for group in ("wiki", "notes", "pager"):
        reg.declare_group(group, prefix=f"{group}__", load="lazy")
    return reg


class _Run:
    """A surface over a registry, with the events it reported."""

    def __init__(self, registry: ToolRegistry, **kw: Any) -> None:
        self.events: list[Event] = []
        kw.setdefault("learn_from_usage", True)
        kw.setdefault("session_id", "learn")
        self.surface = ToolSurface(registry, on_event=self.events.append, **kw)
        self.registry = registry
        self.surface.plan()

    def search(self, arguments: Any) -> Any:
        result = self.surface.tool_search(arguments)
        self.surface.plan()
        return result

    def call(self, *names: str) -> list[Verdict]:
        verdicts = self.surface.admit([ToolCall(n, {}, id=str(i)) for i, n in enumerate(names)])
        self.surface.plan()
        return verdicts

    def taught(self) -> list[tuple[str, str]]:
        return [
            (e.data["query"], e.data["tool"]) for e in self.events if e.kind == "tool_hint_learned"
        ]


def _learned(registry: ToolRegistry) -> dict[str, list[tuple[str, int]]]:
    return {t: [(r.query, r.count) for r in rows] for t, rows in registry.learned().items()}


def _first(registry: ToolRegistry, query: str) -> str:
    return next(h.name for h in registry.search(query, k=5) if h.name != "ToolSearch")


def test_a_search_then_a_call_of_a_returned_tool_teaches_that_pair(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    result = run.search({"query": QUERY})
    assert WIKI in result.loaded
    assert [v.runs for v in run.call(WIKI)] == [True]
    assert _learned(reg) == {WIKI: [(QUERY, 1)]}
    assert run.taught() == [(QUERY, WIKI)]
    assert reg.learned()[WIKI][0].sessions == 1  # taught as the run's session


def test_what_three_sessions_taught_ranks_for_every_session(engine_name: str) -> None:
    slack, email = "slack__send_message", "email__send_message"
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many(
        [
            tool_search_tool(),
            Tool(name=slack, description="Send a message to a Slack channel."),
            Tool(name=email, description="Send a message by email to a person."),
        ]
    )
    for group in ("slack", "email"):
        reg.declare_group(group, prefix=f"{group}__", load="lazy")
    request = "send a message to the team"
    assert _first(reg, request) == email  # before: the other tool ranks first
    for session in ("one", "two", "three"):
        run = _Run(reg, session_id=session)
        assert slack in run.search({"query": request}).loaded
        assert [v.runs for v in run.call(slack)] == [True]
        expected = email if session != "three" else slack  # ranks once three sessions did
        assert _first(reg, request) == expected
    # The registry is shared: another session over it finds the tool first too.
    other = _Run(reg, learn_from_usage=False, session_id="reader")
    assert other.search({"query": request}).loaded[0] == slack


def test_off_by_default_nothing_is_taught(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg, learn_from_usage=False)
    run.search({"query": QUERY})
    assert [v.runs for v in run.call(WIKI)] == [True]
    assert reg.learned() == {} and run.taught() == []


def test_a_tool_the_search_did_not_return_teaches_nothing(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    result = run.search({"query": QUERY})
    assert PAGER not in result.matches and "fs__read_file" not in result.matches
    run.search({"select": [PAGER]})  # found another way: by name
    assert [v.runs for v in run.call(PAGER, "fs__read_file")] == [True, True]
    assert reg.learned() == {} and run.taught() == []


def test_select_and_group_loads_teach_nothing(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    run.search({"select": [WIKI]})
    run.search({"group": "notes"})
    assert [v.runs for v in run.call(WIKI, NOTES)] == [True, True]
    assert reg.learned() == {}


def test_a_refused_or_blind_call_teaches_nothing(engine_name: str) -> None:
    reg = _registry(engine_name)
    # One load a search and one call a message: the search's second hit is only offered.
    limits = SurfaceLimits(search_loads=1, max_tool_calls_per_turn=1)
    run = _Run(reg, limits=limits)
    result = run.search({"query": QUERY})
    assert result.loaded == (NOTES,) and WIKI in result.matches
    misspelt, capped = run.call("notes__search_note"), run.call("fs__read_file", NOTES)
    assert [v.not_run for v in misspelt + capped] == ["unknown", "", "capped"]
    blind = run.call(WIKI)  # offered, never loaded: the model called it by name
    assert blind[0].runs and blind[0].blind
    assert reg.learned() == {} and run.taught() == []


def test_a_tool_blocked_after_the_search_is_never_taught(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    assert WIKI in run.search({"query": QUERY}).loaded
    run.surface.set_policy(lambda name: name != WIKI)
    assert [v.runs for v in run.call(WIKI, NOTES)] == [False, True]
    assert _learned(reg) == {NOTES: [(QUERY, 1)]}
    assert WIKI not in json.dumps([e.data for e in run.events if e.kind == "tool_hint_learned"])


def test_a_tool_blocked_from_the_start_is_never_returned_nor_taught(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg, policy=lambda name: name != WIKI)
    assert WIKI not in run.search({"query": QUERY}).matches
    assert [v.runs for v in run.call(WIKI)] == [False]
    assert reg.learned() == {}


def test_each_pair_is_taught_once_a_search_and_within_the_window(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    run.search({"query": QUERY})
    run.call(WIKI, WIKI)
    run.call(WIKI)
    assert _learned(reg) == {WIKI: [(QUERY, 1)]}
    run.search({"query": QUERY})  # a new search: the pair again, from the same session
    run.call(WIKI)
    assert _learned(reg) == {WIKI: [(QUERY, 1)]}  # which counts once however often
    assert run.taught() == [(QUERY, WIKI)]
    # The last message of the window still teaches; the one after it does not.
    run.search({"query": QUERY})
    for _ in range(LEARN_WINDOW - 1):
        run.call("fs__read_file")
    run.call(NOTES)
    run.search({"query": QUERY})
    for _ in range(LEARN_WINDOW):
        run.call("fs__read_file")
    run.call(WIKI)
    assert _learned(reg) == {WIKI: [(QUERY, 1)], NOTES: [(QUERY, 1)]}


def test_the_discovery_tool_is_never_taught(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    assert "ToolSearch" in [h.name for h in reg.search(QUERY, k=8)]
    run.search({"query": QUERY})
    assert [v.runs for v in run.call("ToolSearch")] == [True]
    assert reg.learned() == {}


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_native_delivery_teaches_the_native_search_query(engine_name: str, provider: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg, provider=provider, delivery="native")
    arguments: Any = {"query": QUERY}
    if provider == "openai-responses":
        arguments = {"type": "tool_search_call", "call_id": "c1", "arguments": arguments}
    result = run.search(arguments)
    assert WIKI in result.loaded and result.native is not None
    if provider == "anthropic":
        assert {"type": "tool_reference", "tool_name": WIKI} in result.native
    assert [(v.runs, v.blind) for v in run.call(WIKI)] == [(True, False)]
    assert _learned(reg) == {WIKI: [(QUERY, 1)]}


def test_the_learned_text_never_reaches_the_request_nor_the_snapshot(engine_name: str) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    query = "search the zorblatt handbook"
    assert WIKI in run.search({"query": query}).loaded
    run.call(WIKI)
    assert _learned(reg) == {WIKI: [(query, 1)]}  # it was learned
    plan = run.surface.plan()
    sent = json.dumps([plan.definitions(), plan.render("anthropic"), plan.catalogue])
    assert WIKI in sent and "zorblatt" not in sent
    assert "zorblatt" not in run.surface.snapshot().to_json()


def test_a_restored_surface_does_not_learn_from_a_search_before_the_snapshot(
    engine_name: str,
) -> None:
    reg = _registry(engine_name)
    run = _Run(reg)
    run.search({"query": QUERY})
    again = _Run(reg)
    again.surface.restore(run.surface.snapshot().to_json())
    assert [v.runs for v in again.call(WIKI)] == [True]
    assert reg.learned() == {}
    again.search({"query": QUERY})  # a search made after the restart teaches as usual
    again.call(WIKI)
    assert _learned(reg) == {WIKI: [(QUERY, 1)]}
