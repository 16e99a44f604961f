"""A held-back list read before is not read again: the snapshot must come out the same.

``surface/floors.py`` keeps the JSON text of floors it has read; a snapshot whose held-back
list is such a text is read without it. Whatever the text, reading it with the texts kept
must give what reading it afresh gives: the same snapshot, or the same error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snapshot_data import snapshot_data

from toolsurface.surface.floors import (
    MAX_KEPT_TEXTS,
    MAX_TEXT_CHARS,
    TEXT_MIN_NAMES,
    forget_kept,
    kept_text_names,
)
from toolsurface.surface.snapshot import SnapshotError, SurfaceSnapshot, parse_snapshot


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_kept()
    yield
    forget_kept()


def _snapshot(held: list[str], **over: Any) -> str:
    return SurfaceSnapshot.model_validate(snapshot_data(held, **over)).to_json()


def _outcome(text: str) -> tuple[str, object]:
    try:
        return "snapshot", parse_snapshot(text)
    except SnapshotError as err:
        return "error", str(err)


def _groups(n: int) -> list[str]:
    return [f"server-{i:03d}" for i in range(n)]


def test_a_floor_read_again_gives_the_same_snapshot_without_reading_its_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = _snapshot(_groups(40))
    first = parse_snapshot(text)
    assert kept_text_names() == 40
    read: list[str] = []
    original = SurfaceSnapshot.model_validate_json

    def spy(data: str | bytes, *args: Any, **kwargs: Any) -> SurfaceSnapshot:
        read.append(data if isinstance(data, str) else data.decode())
        return original(data, *args, **kwargs)

    monkeypatch.setattr(SurfaceSnapshot, "model_validate_json", spy)
    again = parse_snapshot(text)
    assert again == first and again.held_back == _groups(40)
    assert len(read) == 1 and '"held_back":["toolsurface-held-back-' in read[0]  # not read
    # Bytes, another floor or a list with spaces are read in full.
    for other in (
        text.encode(),
        _snapshot(_groups(41)),
        text.replace('"held_back":["server-000",', '"held_back":[ "server-000",'),
    ):
        read.clear()
        assert parse_snapshot(other).held_back[0] == "server-000"
        assert '"held_back":["toolsurface-held-back-' not in read[0]


def test_the_list_handed_out_is_the_hosts_own() -> None:
    text = _snapshot(_groups(40))
    parse_snapshot(text)
    given_out = parse_snapshot(text)
    given_out.held_back[:] = ["edited"] * 40  # a host editing the snapshot it was given
    assert parse_snapshot(text).held_back == _groups(40)


def test_short_repeated_or_unchecked_floors_are_not_kept_past_the_bound() -> None:
    parse_snapshot(_snapshot(_groups(TEXT_MIN_NAMES - 1)))
    assert kept_text_names() == 0
    with pytest.raises(SnapshotError, match="held_back"):
        parse_snapshot(_snapshot(_groups(40)).replace("server-001", "server-000"))
    assert kept_text_names() == 0
    sizes = range(900, 1_000, 7)
    for size in sizes:
        parse_snapshot(_snapshot(_groups(size)))
        assert kept_text_names() <= sum(sorted(sizes)[-MAX_KEPT_TEXTS:])
    # A text past the length bound is answered, not kept (names of 120 astral characters
    # would take 4 bytes a character).
    long_names = [f"{i:04d}" + "\U0001f600" * 116 for i in range(MAX_TEXT_CHARS // 100)]
    forget_kept()
    assert parse_snapshot(_snapshot(long_names)).held_back == long_names
    assert kept_text_names() == 0


@pytest.mark.parametrize(
    "again",
    [
        '"held_back":["other"]',
        '"held_back" :[]',  # the same key, written otherwise: not found as a repeat
        '"held\\u005fback":[]',
        '"held_back":[]',
    ],
)
def test_a_repeated_key_is_read_as_the_reader_reads_it(again: str) -> None:
    text = _snapshot(_groups(40))
    for twice in (text[:-1] + "," + again + "}", text.replace("{", "{" + again + ",", 1)):
        forget_kept()
        fresh = _outcome(twice)
        parse_snapshot(text)  # its floor's text is kept now
        assert kept_text_names() == 40
        assert _outcome(twice) == fresh, twice


_NAME = st.text(alphabet=st.sampled_from(list('ab-_.0]["\\ ,é\u2028')), min_size=1, max_size=12)
_EDIT = st.tuples(
    st.sampled_from(["insert", "delete", "replace", "none"]),
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(list('"[],:\\ a0}{')),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(_NAME, min_size=TEXT_MIN_NAMES, max_size=60, unique=True),
    edits=st.lists(_EDIT, max_size=3),
)
def test_reading_with_kept_floors_is_reading_afresh(
    names: list[str], edits: list[tuple[str, int, str]]
) -> None:
    text = _snapshot(names)
    for how, at, char in edits:
        at %= len(text) + 1
        if how == "insert":
            text = text[:at] + char + text[at:]
        elif how == "delete":
            text = text[:at] + text[at + 1 :]
        elif how == "replace":
            text = text[:at] + char + text[at + 1 :]
    forget_kept()
    fresh = _outcome(text)
    parse_snapshot(_snapshot(names))  # the original floor's text is now kept
    assert _outcome(text) == fresh
    assert _outcome(text) == fresh  # and once more, with whatever the edited text kept
    forget_kept()


def test_the_snapshots_json_writes_the_floor_as_the_memo_keeps_it() -> None:
    # The memo finds a floor by the text json.dumps writes; a snapshot's serializer must
    # write the same, or no restore would ever take the short way.
    names = [*_groups(38), "naïve-é", "x\u2028y"]
    text = _snapshot(names)
    assert f'"held_back":{json.dumps(names, separators=(",", ":"), ensure_ascii=False)}' in text
