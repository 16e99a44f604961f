"""The gateway's session stores as the per-call path reads them, and its stdio line reader.

``peek`` lets a session be read without a worker thread when its snapshot is the one last
read or written; these tests hold it to never answering with a stale snapshot: a write by
another store over the same directory (another process, in effect), one made within the
filesystem's timestamp granularity (right after this store's own), an expired or deleted
file.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.gateway.sessions import Sessions
from toolsurface.gateway.stdio import _Lines
from toolsurface.gateway.store import DirectoryStore, MemoryStore, Peekable, SessionStore

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic


def _settle(store: DirectoryStore, session_id: str) -> None:
    """Date the session's file back past the settling time, as if written long ago."""
    path = store._path(session_id)
    old = time.time() - 10 * store.SETTLED
    os.utime(path, (old, old))


def test_peek_answers_only_while_the_file_is_the_one_read(tmp_path: Path) -> None:
    ours, theirs = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    assert isinstance(ours, Peekable) and isinstance(MemoryStore(), Peekable)
    assert ours.peek("s") == (False, None)  # never read: only load can say
    ours.save("s", '{"a":1}')
    assert ours.peek("s") == (True, '{"a":1}')  # its own write: known at once
    assert ours.load("s") == '{"a":1}'
    assert ours.peek("s") == (True, '{"a":1}')
    theirs.save("s", '{"a":2}')  # the same size, in the same instant, by another process
    assert ours.peek("s") == (False, None)
    assert ours.load("s") == '{"a":2}'
    assert ours.peek("s") == (False, None)  # read just after a write: not settled, not trusted
    _settle(ours, "s")
    assert ours.load("s") == '{"a":2}'
    assert ours.peek("s") == (True, '{"a":2}')
    theirs.save("s", '{"a":3}')
    assert ours.peek("s") == (False, None)
    assert ours.load("s") == '{"a":3}'
    theirs.delete("s")
    assert ours.peek("s") == (False, None)
    assert ours.load("s") is None


def test_peek_never_answers_for_an_expired_snapshot(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path, ttl=5 * DirectoryStore.SETTLED)
    store.save("s", "{}")
    _settle(store, "s")  # dated back past the ttl too
    assert store.load("s") is None
    assert store.peek("s") == (False, None)
    assert not store._path("s").exists()


def test_a_session_changed_by_another_process_is_seen_through_peek(tmp_path: Path) -> None:
    registry = ToolRegistry([tool_search_tool()])
    for verb in ("list", "create", "close"):
        registry.register(Tool(name=f"gh__{verb}_issue", description=f"{verb} an issue."))
    registry.declare_group("gh", prefix="gh__", load="lazy")
    stores = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    a, b = (Sessions(lambda sid: ToolSurface(registry, session_id=sid), s) for s in stores)

    async def run() -> tuple[tuple[str, ...], tuple[str, ...]]:
        async with a.use("s", create=True) as surface:
            surface.tool_search({"select": ["gh__close_issue"]})
        _settle(stores[0], "s")
        async with a.use("s") as surface:  # read again: its stamp is kept from here
            surface.plan()
        async with b.use("s") as surface:  # the other process loads another tool
            surface.tool_search({"select": ["gh__list_issue"]})
        async with a.use("s") as surface:
            seen = surface.plan().names
        async with a.use("s") as surface:
            again = surface.plan().names
        return seen, again

    seen, again = asyncio.run(run())
    assert seen == again == ("ToolSearch", "gh__close_issue", "gh__list_issue")


def test_stdin_lines_are_read_whole_and_a_line_over_the_limit_is_skipped() -> None:
    async def run() -> list[str]:
        reader = asyncio.StreamReader(limit=16)
        reader.feed_data(b'{"a":1}\n' + b"x" * 40 + b'\n{"b":"\xd0\xb4"}\n{"c":3}')
        reader.feed_eof()
        return [line async for line in _Lines(reader)]

    assert asyncio.run(run()) == [
        '{"a":1}\n',
        "<a line over the limit>\n",
        '{"b":"д"}\n',
        '{"c":3}',
    ]


def test_a_snapshot_and_its_stored_text_compare_alike() -> None:
    """The saved text's material and the live snapshot's are equal; only the clocks differ."""
    from toolsurface.admission.admit import ToolCall
    from toolsurface.gateway.sessions import _material, _material_of

    registry = ToolRegistry(
        [tool_search_tool(), Tool(name="ops__restart", description="Restart a service.")]
    )
    registry.declare_group("ops", prefix="ops__", load="lazy")
    surface = ToolSurface(registry, session_id="s", mark_key=b"a key of sixteen bytes")
    surface.plan()
    surface.tool_search({"query": "restart a service"})
    surface.plan()
    surface.admit([ToolCall("ops__restart", {})])  # the first call marks the tool called
    before = surface.snapshot()
    assert _material(before.to_json()) == _material_of(before)
    surface.admit([ToolCall("ops__restart", {})])  # a second moves only the use clock
    after = surface.snapshot()
    assert after.to_json() != before.to_json()
    assert _material_of(after) == _material(before.to_json())


def _broken_sessions(store: SessionStore) -> tuple[Sessions, ToolRegistry]:
    registry = ToolRegistry([tool_search_tool()])
    registry.register(Tool(name="gh__close_issue", description="close an issue."))
    registry.declare_group("gh", prefix="gh__", load="lazy")
    return Sessions(lambda sid: ToolSurface(registry, session_id=sid), store), registry


def break_and_resume(
    sessions: Sessions, breaks: list[Callable[[], None]], caplog: pytest.LogCaptureFixture
) -> None:
    """Between two requests of a session its stored text is broken; the next starts fresh."""

    async def run(brk: Callable[[], None]) -> tuple[str, ...]:
        async with sessions.use("brokensession1", create=True) as surface:
            surface.tool_search({"select": ["gh__close_issue"]})
        sessions._held.clear()  # another process, or this one restarted
        brk()
        await sessions.check("brokensession1")
        async with sessions.use("brokensession1") as surface:
            return surface.plan().names

    for brk in breaks:
        caplog.clear()
        with caplog.at_level("WARNING", logger="toolsurface.gateway"):
            names = asyncio.run(run(brk))
        assert names == ("ToolSearch",), brk  # fresh: the load is gone
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert any("brokense" in m and "starting fresh" in m for m in warned), warned


def test_a_broken_stored_file_starts_the_session_fresh_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DirectoryStore(tmp_path)
    sessions, _ = _broken_sessions(store)
    path = store._path("brokensession1")

    def truncate() -> None:
        path.write_bytes(path.read_bytes()[:25])

    def garbage() -> None:
        path.write_bytes(b"\xff\xfe\x00not json at all")

    def empty() -> None:
        path.write_bytes(b"")

    def other_json() -> None:
        path.write_text('["a list", 1]', "utf-8")

    break_and_resume(sessions, [truncate, garbage, empty, other_json], caplog)


def test_writes_are_durable_and_leftovers_are_cleaned_when_a_store_opens(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = time.time() - 3600
    leftovers = [tmp_path / "tmpab12cd.tmp", tmp_path / "session-x1y2.tmp"]
    for path in leftovers:
        path.write_text("{half", "utf-8")
        os.utime(path, (old, old))
    live = tmp_path / "session-live.tmp"  # another process's write under way: kept
    live.write_text("{", "utf-8")
    with caplog.at_level("INFO", logger="toolsurface.gateway"):
        store = DirectoryStore(tmp_path)
    assert not any(p.exists() for p in leftovers) and live.exists()
    assert any("2 leftover" in r.getMessage() for r in caplog.records)

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    store.save("s", '{"a":1}')
    assert len(synced) == 2  # the file, then the directory
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["session-live.tmp", store._path("s").name]
    )
    assert store.load("s") == '{"a":1}'


def test_a_store_keeps_at_most_its_cap_dropping_the_least_recently_written(
    tmp_path: Path,
) -> None:
    for store in (DirectoryStore(tmp_path, max_sessions=3), MemoryStore(max_sessions=3)):
        for i in range(3):
            store.save(f"s{i}", f'{{"n":{i}}}')
            if isinstance(store, DirectoryStore):  # distinct write times on coarse clocks
                old = time.time() - 100 + i
                os.utime(store._path(f"s{i}"), (old, old))
        store.save("s0", '{"n":"again"}')  # s0 is written again: now s1 is the oldest
        store.save("s3", '{"n":3}')  # one over the cap
        assert store.load("s1") is None, store
        assert [store.load(s) for s in ("s0", "s2", "s3")] == [
            '{"n":"again"}',
            '{"n":2}',
            '{"n":3}',
        ]
        if isinstance(store, DirectoryStore):
            assert len(list(tmp_path.glob("session-*.json"))) == 3


def test_writes_within_one_clock_tick_are_dropped_in_the_order_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bound session's snapshot and its client's binding are written one after the other;
    a filesystem's clock may give both the same tick, and eviction then went by the files'
    names. Each write of a store is stamped later than its last, however the clock reads."""
    frozen = time.time_ns()
    monkeypatch.setattr(time, "time_ns", lambda: frozen)  # every write in one tick
    store = DirectoryStore(tmp_path, max_sessions=3)
    written = ["s9", "s1", "s5", "s0", "s7"]  # an order their files' names do not have
    for name in written:
        store.save(name, f'"{name}"')
    assert [store.load(n) for n in written] == [None, None, '"s5"', '"s0"', '"s7"']


def test_a_session_ended_or_expired_elsewhere_is_unknown_to_a_process_still_holding_it(
    tmp_path: Path,
) -> None:
    # The store is the truth: a process holding the surface must not serve it, nor write
    # it back (that brought an ended session back for every process).
    from toolsurface.gateway.sessions import UnknownSessionError

    registry = ToolRegistry([tool_search_tool()])
    registry.register(Tool(name="gh__list_issue", description="list an issue."))
    registry.declare_group("gh", prefix="gh__", load="lazy")
    stores = DirectoryStore(tmp_path), DirectoryStore(tmp_path)
    a, b = (Sessions(lambda sid: ToolSurface(registry, session_id=sid), s) for s in stores)

    async def run() -> list[str]:
        async with a.use("s", create=True) as surface:
            surface.tool_search({"select": ["gh__list_issue"]})
        await b.end("s")  # another process ends it
        seen = []
        for _ in range(2):
            try:
                async with a.use("s") as surface:
                    seen.append(",".join(surface.plan().names))
            except UnknownSessionError:
                seen.append("unknown")
        return seen

    assert asyncio.run(run()) == ["unknown", "unknown"]
    assert list(tmp_path.glob("session-*.json")) == []


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "huge"])
def test_a_session_file_no_store_wrote_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    # A link (to /dev/zero, say), a FIFO, a directory or a file past the bound in a session's
    # place is never read: one would read forever, block a thread, or cost seconds to parse.
    from toolsurface.gateway.store import MAX_SNAPSHOT_BYTES, StoreError

    store = DirectoryStore(tmp_path)
    path = store._path("s")
    if kind == "symlink":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        with path.open("wb") as out:
            out.truncate(MAX_SNAPSHOT_BYTES + 1)
    with pytest.raises(StoreError, match=f"session file {path.name} in "):
        store.load("s")
    assert store.load("other") is None  # the store serves the other sessions
