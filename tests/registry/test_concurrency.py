"""Threads and processes: one registry under concurrent search and change; same bytes anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from toolsurface import Tool, ToolRegistry


def _race(write: Callable[[], None], read: Callable[[], None], readers: int) -> None:
    """Run ``write`` once while ``readers`` threads call ``read`` until it is done.

    An exception in any thread fails the test with it.
    """
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            write()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            stop.set()

    def reader() -> None:
        try:
            while not stop.is_set():
                read()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer)]
    threads += [threading.Thread(target=reader) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


def test_searches_see_whole_generations(engine_name: str) -> None:
    """Tools are registered in pairs with one call; a search must see both or neither."""
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register(Tool(name="base_tool", description="Unrelated base tool."))
    torn: list[tuple[str, ...]] = []

    def write() -> None:
        for i in range(60):
            word = f"zebra{i:03d}"
            reg.register_many(
                [
                    Tool(name=f"a_{i:03d}", description=f"Handles {word} records."),
                    Tool(name=f"b_{i:03d}", description=f"Handles {word} records."),
                ]
            )
            if i % 7 == 0:
                reg.declare_group(f"grp{i}", prefix=f"a_{i:03d}")
            if i % 11 == 0 and i:
                reg.unregister_many([f"a_{i - 1:03d}", f"b_{i - 1:03d}"])

    def read() -> None:
        for i in range(0, 60, 3):
            names = tuple(h.name for h in reg.search(f"zebra{i:03d} records", k=5))
            pair = {n for n in names if n.endswith(f"_{i:03d}")}
            if len(pair) == 1:
                torn.append(names)

    _race(write, read, readers=3)
    assert not torn, torn[:3]
    assert len(reg.names()) > 60


def test_group_lookups_survive_concurrent_declarations(engine_name: str) -> None:
    """One session connects and drops servers while another asks which group a tool is in."""
    reg = ToolRegistry(
        [Tool(name=f"srv{i}__tool", description="A server tool.") for i in range(40)],
        engine=engine_name,  # type: ignore[arg-type]
    )
    wrong: list[tuple[str, str | None]] = []

    def write() -> None:
        for _ in range(300):
            for i in range(40):
                reg.declare_group(f"srv{i}", prefix=f"srv{i}__")
            for i in range(40):
                reg.undeclare_group(f"srv{i}")

    def read() -> None:
        for i in range(40):
            group = reg.group_of(f"srv{i}__tool")
            if group not in (None, f"srv{i}"):
                wrong.append((f"srv{i}__tool", group))

    _race(write, read, readers=1)
    assert not wrong, wrong[:3]


def test_group_lookups_are_never_stale_after_a_change_is_done(engine_name: str) -> None:
    """Declares, undeclares and registrations race lookups; none may see an undone change.

    The writer takes the tools through numbered steps (group "sK" declared over their
    prefix at step K, undeclared at K + 1; "t__000" registered again at K + 2 with its own
    group "sK+2_own") and publishes a step's number once its call has returned. A reader
    notes the published number before each lookup: the answer may come from that step or
    a later one, never an earlier one, whichever of the prefixes or the generation's map
    (made after a few lookups, perhaps by a reader that began before the change) gave it.
    The writer looks up a tool right after each change as well.
    """
    reg = ToolRegistry(
        [Tool(name=f"t__{i:03d}", description="A server tool.") for i in range(100)],
        engine=engine_name,  # type: ignore[arg-type]
    )
    done = [-1]  # the last step whose change has returned
    stale: list[tuple[str, int, str, str | None]] = []
    steps = 600

    def step_of(group: str) -> int:
        return int(group[1:].split("_")[0])

    def write() -> None:
        for k in range(steps):
            if k % 3 == 0:
                reg.declare_group(f"s{k}", prefix="t__")
                name, want = "t__050", f"s{k}"
            elif k % 3 == 1:
                reg.undeclare_group(f"s{k - 1}")
                name, want = "t__050", None
            else:
                moved = Tool(name="t__000", description="Moved.", group=f"s{k}_own")
                reg.register(moved, replace=True)
                name, want = "t__000", f"s{k}_own"
            done[0] = k
            got = reg.group_of(name)
            if got != want:
                stale.append(("writer", k, name, got))

    def read() -> None:
        for i in (0, *range(1, 100, 7)):
            seen = done[0]
            name = f"t__{i:03d}"
            group = reg.group_of(name)
            if seen < 0 or group is None:
                # None: no group declared, now or at a later step (one that undeclares).
                continue
            if name == "t__000" and seen >= 2:
                # Its own group from its last registration at or before ``seen``.
                ok = group.endswith("_own") and step_of(group) >= seen - (seen - 2) % 3
            elif group.endswith("_own"):
                ok = name == "t__000" and step_of(group) > seen
            else:
                # "sK" stands from step K until K + 1 undeclares it.
                ok = step_of(group) + 1 > seen
            if not ok:
                stale.append(("reader", seen, name, group))

    _race(write, read, readers=2)
    assert not stale, stale[:5]
    assert reg.group_of("t__001") is None
    assert reg.group_of("t__000") == f"s{steps - 1 - (steps - 1 - 2) % 3}_own"


def test_search_many_from_threads_matches_serial(engine_name: str) -> None:
    tools = [
        Tool(name=f"t{i:03d}", description=f"Tool number {i} for task {i % 17}.")
        for i in range(300)
    ]
    reg = ToolRegistry(tools, engine=engine_name)  # type: ignore[arg-type]
    queries = [f"task {i}" for i in range(17)] * 4
    expected = [reg.search(q, k=5) for q in queries]
    results: list[list[object]] = [[] for _ in range(4)]

    def work(slot: int) -> None:
        results[slot] = list(reg.search_many(queries, k=5))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(r == expected for r in results)


def test_same_bytes_whatever_the_hash_seed(engine_name: str) -> None:
    script = Path(__file__).resolve().parents[1] / "scripted_run.py"
    outputs = []
    for seed in ("0", "1", "12345", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [
                sys.executable,
                str(script),
                "--engine",
                engine_name,
                "--mark-key",
                "a fixed key for reproducible runs",
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        outputs.append(json.loads(out.stdout)["requests"])
    assert all(o == outputs[0] for o in outputs)


def _while_the_pool_is_busy(
    reg: ToolRegistry, call: Callable[[], object]
) -> tuple[float, float, float]:
    """``call`` made while two large batches keep the engine's pool busy: the longest pause
    of a ticking thread during it, how long it took, and how long the pool stayed busy
    from its start."""
    big = [f"read item {i} store {i % 50}" for i in range(40_000)]
    stop = threading.Event()
    gaps: list[tuple[float, float]] = []
    ends: list[float] = []

    def ticker() -> None:
        while not stop.is_set():
            start = time.perf_counter()
            time.sleep(0.0005)
            gaps.append((start, time.perf_counter() - start))

    def large() -> None:
        reg.search_many(big)
        ends.append(time.perf_counter())

    runs = [threading.Thread(target=large) for _ in range(2)]
    tick = threading.Thread(target=ticker)
    tick.start()
    for run in runs:
        run.start()
    time.sleep(0.3)  # the large batches have the pool
    start = time.perf_counter()
    call()
    took = time.perf_counter() - start
    for run in runs:
        run.join(timeout=120)
    stop.set()
    tick.join()
    # Every pause of the ticker that overlaps the call.
    during = [gap for at, gap in gaps if at + gap >= start and at <= start + took]
    return max(during, default=0.0), took, max(ends) - start


def test_a_search_or_batch_beside_a_busy_pool_lets_other_threads_run() -> None:
    # A single search and a small batch, each under new settings, asked while large batches
    # keep the engine's pool busy. The search's score table is made on the pool, so it
    # waits for it, and that wait must let the interpreter go, or every other Python thread
    # stops until the large batches end. The batch's caller makes its one chunk itself and
    # returns, without waiting for the pool at all.
    from toolsurface import RetrievalSettings

    tools = [
        {"name": f"s{i % 300}__read_item_{i}", "description": f"Read item {i} from store {i % 97}."}
        for i in range(20_000)
    ]
    reg = ToolRegistry(tools, engine="native")
    reg.search("warm up")
    one: list[object] = []
    pause, took, busy = _while_the_pool_is_busy(
        reg, lambda: one.append(reg.search("read item 6", k=5, settings=RetrievalSettings(k1=1.33)))
    )
    if took <= 0.05:
        pytest.skip(f"the search took {took * 1e3:.1f} ms: the pool was not busy")
    assert pause < 0.5 * took, ("search", pause, took)
    batch: list[object] = []
    settings = RetrievalSettings(k1=1.31)
    reg.search("warm up", settings=settings)  # its table made: the batch only scores
    pause, took, busy = _while_the_pool_is_busy(
        reg, lambda: batch.extend(reg.search_many(["read item 5"], k=5, settings=settings))
    )
    assert busy > 0.05, f"the pool was busy for {busy * 1e3:.1f} ms only"
    assert took < 0.25 * busy, ("search_many", took, busy)
    assert one == [reg.search_many(["read item 6"], k=5, settings=RetrievalSettings(k1=1.33))[0]]
    assert batch == [reg.search("read item 5", k=5, settings=settings)]
