"""Work sent off the loop runs with a short switch interval; the host's comes back after."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface._internal.off_loop import off_loop
from toolsurface._internal.switch_interval import switch_shortened


@pytest.fixture
def host_interval() -> Iterator[float]:
    """The host's interval for the test: the default 5 ms, whatever the runner set."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield 0.005
    sys.setswitchinterval(before)


def test_asearch_runs_with_a_short_interval_and_restores_the_hosts(host_interval: float) -> None:
    registry = ToolRegistry([Tool(name="fs__read_file", description="Read a file.")])
    seen: list[float] = []
    original = registry.search

    def search(*args: object, **kwargs: object) -> object:
        seen.append(sys.getswitchinterval())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    registry.search = search  # type: ignore[assignment, method-assign]
    hits = asyncio.run(registry.asearch("read a file"))
    assert [h.name for h in hits] == ["fs__read_file"]
    assert seen and seen[0] <= 0.001
    assert sys.getswitchinterval() == pytest.approx(host_interval)


def test_a_hosts_shorter_interval_is_kept(host_interval: float) -> None:
    sys.setswitchinterval(0.0002)
    with switch_shortened():
        assert sys.getswitchinterval() == pytest.approx(0.0002, rel=0.01)
    assert sys.getswitchinterval() == pytest.approx(0.0002, rel=0.01)


def test_overlapping_work_restores_only_when_the_last_ends(host_interval: float) -> None:
    first_in = threading.Event()
    second_done = threading.Event()
    during: list[float] = []

    def first() -> None:
        with switch_shortened():
            first_in.set()
            second_done.wait(5)
            during.append(sys.getswitchinterval())

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait(5)
    with switch_shortened():
        pass
    second_done.set()
    worker.join(5)
    assert during == [pytest.approx(0.001)]
    assert sys.getswitchinterval() == pytest.approx(host_interval)


def test_an_error_in_the_work_still_restores(host_interval: float) -> None:
    def fail() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(off_loop(fail))
    assert sys.getswitchinterval() == pytest.approx(host_interval)


def test_the_worker_thread_starts_with_the_short_interval(host_interval: float) -> None:
    """The interval is short when the work is handed to the executor, not once it runs."""
    from concurrent.futures import ThreadPoolExecutor

    at_submit: list[float] = []

    class Recording(ThreadPoolExecutor):
        def submit(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            at_submit.append(sys.getswitchinterval())
            return super().submit(*args, **kwargs)  # type: ignore[arg-type]

    async def main() -> int:
        asyncio.get_running_loop().set_default_executor(Recording(max_workers=1))
        return await off_loop(lambda: 7)

    assert asyncio.run(main()) == 7
    assert at_submit == [pytest.approx(0.001)]
    assert sys.getswitchinterval() == pytest.approx(host_interval)
