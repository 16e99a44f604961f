"""Learned hints one session cannot steer (issue 40, item 3), on both engines.

The attack of the issue: one session pairs a request with a destructive tool twenty times,
and with ``--learn`` that tool became the top hit of every other session's unrelated
request. What a host checks: a session counts once per pair; a request ranks only once
several distinct sessions taught it; a word of what sessions taught weighs a bounded
amount; and what sessions taught never lifts a tool the request's own words do not reach,
however many sessions an attacker opens. What learning still does: reorder the tools a
request finds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface.retrieval.hints.learned import LearnedFormatError, LearnedHints

ENGINES = ["native", "pure"]
WIPE = "fs__delete_everything"
#: The request the attacker teaches, and the unrelated one another session then makes.
TAUGHT = "summarize my week"
VICTIM = "summarize my week of meetings"


def _tools() -> list[Tool]:
    return [
        Tool(name="slack__send_message", description="Send a message to a Slack channel."),
        Tool(name="email__send_message", description="Send a message by email to a person."),
        Tool(name=WIPE, description="Delete every file and folder in the workspace, for good."),
        Tool(name="calendar__list_events", description="List the meetings on your calendar."),
        Tool(name="docs__summarize", description="Summarize a document or a thread."),
    ]


def _names(registry: ToolRegistry, query: str) -> list[str]:
    return [h.name for h in registry.search(query, k=5)]


@pytest.mark.parametrize("engine", ENGINES)
def test_one_session_teaching_twenty_times_does_not_steer_another_sessions_search(
    engine: str,
) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    before = _names(registry, VICTIM)
    taught = [registry.learn(TAUGHT, WIPE, session="attacker") for _ in range(20)]
    assert taught == [True] + [False] * 19  # the pair counts once for the session
    [row] = registry.learned(WIPE)[WIPE]
    assert (row.count, row.sessions, row.by_host) == (1, 1, False)
    after = _names(registry, VICTIM)
    assert after == before and WIPE not in after

    # The door the rules shut: taught as the host's own (trusted) words, the request lifts
    # the tool into the hits of a request that shares none of the tool's words.
    trusting = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    for _ in range(20):
        trusting.learn(TAUGHT, WIPE)
    assert WIPE in _names(trusting, VICTIM)


@pytest.mark.parametrize("engine", ENGINES)
def test_many_sessions_cannot_lift_a_tool_the_requests_words_do_not_reach(engine: str) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    before = _names(registry, VICTIM)
    for i in range(10):  # an attacker who opens ten sessions, each teaching once
        registry.learn(f"{TAUGHT}, then delete every file", WIPE, session=f"attacker {i}")
    # Only the words the tool's own text has entered its field: the summary's did not.
    assert registry.learned(WIPE)[WIPE][0].sessions == 10
    after = _names(registry, VICTIM)
    assert after == before and WIPE not in after
    # A request that reaches the tool by its own words still finds it, as before.
    assert _names(registry, "delete every file")[0] == WIPE


@pytest.mark.parametrize("engine", ENGINES)
def test_a_request_ranks_once_enough_sessions_taught_it_and_reorders_what_it_finds(
    engine: str,
) -> None:
    registry = ToolRegistry(_tools(), engine=engine)  # type: ignore[arg-type]
    request = "send a message to the team"
    assert _names(registry, request)[:2] == ["email__send_message", "slack__send_message"]
    for session in ("one", "two"):
        registry.learn(request, "slack__send_message", session=session)
    assert _names(registry, request)[0] == "email__send_message"  # two of three: not yet
    registry.learn(request, "slack__send_message", session="three")
    assert _names(registry, request)[:2] == ["slack__send_message", "email__send_message"]
    assert registry.forget("slack__send_message") == 1
    assert _names(registry, request)[0] == "email__send_message"


def test_a_word_sessions_taught_stands_at_most_word_cap_times_in_a_field() -> None:
    hints = LearnedHints(min_sessions=1, word_cap=2)
    for i in range(6):
        hints.add(f"wipe wipe everything now {i}", "t", session=f"s{i}")
    text = hints.texts()["t"]
    words = text.split()
    assert words.count("wipe") == 2 and words.count("everything") == 2
    # Through the reach of the tool's own words, only those stand.
    assert hints.texts(lambda tool, req: [w for w in req.split() if w == "everything"]) == {
        "t": "everything\neverything"
    }
    with pytest.raises(ValueError, match="min_sessions"):
        LearnedHints(min_sessions=0)
    with pytest.raises(ValueError, match="word_cap"):
        LearnedHints(word_cap=True)


def test_the_file_keeps_session_digests_never_ids_and_an_old_file_reads_as_the_hosts(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry(_tools())
    secret = "mcp-session-5f1c0ffee0ddba11"  # an HTTP session id is a credential
    for session in (secret, "two", "three"):
        registry.learn("send a message to the team", "slack__send_message", session=session)
    path = tmp_path / "learned.json"
    registry.save_learned(path)
    text = path.read_text("utf-8")
    assert secret not in text and "5f1c0ffee0ddba11" not in text
    [row] = json.loads(text)["tools"]["slack__send_message"]
    assert (row["host"], len(row["sessions"]), row["count"]) == (False, 3, 3)
    fresh = ToolRegistry(_tools())
    assert fresh.load_learned(path) == 1 and fresh.learned() == registry.learned()
    # The store's settings are the host's, not the file's: a stricter store keeps the
    # request, and it does not rank there.
    strict = ToolRegistry(_tools(), learned=LearnedHints(min_sessions=4))
    strict.load_learned(path)
    assert strict.learned_hints.texts() == {}

    old = {
        "format": "toolsurface-learned",
        "version": 1,
        "cap": 32,
        "clock": 1,
        "tools": {"slack__send_message": [{"query": "ping the team", "count": 1, "last": 1}]},
    }
    path.write_text(json.dumps(old), "utf-8")
    assert fresh.load_learned(path) == 1
    assert fresh.learned()["slack__send_message"][0].by_host

    data = json.loads(text)
    data["tools"]["slack__send_message"][0]["sessions"] = ["not a digest"]
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(LearnedFormatError, match=r"slack__send_message\[0\]\.sessions"):
        fresh.load_learned(path)
