"""The bulk loads pause Python's cyclic garbage collector and put it back as they found it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from toolsurface._internal.gcpause import gc_paused
from toolsurface.catalogue import parse_catalogue
from toolsurface.errors import CatalogueFormatError, ToolDefinitionError
from toolsurface.registry import ToolRegistry


@pytest.fixture
def gc_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    # Put back exactly what the test found, whatever the test did meanwhile.
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_back_on_after(gc_on: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the inner one leaves it to the outer
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_host_turned_off_stays_off(gc_on: None) -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
    ToolRegistry(engine="pure").register_many([{"name": "a"}])
    assert not gc.isenabled()


def test_register_many_turns_it_back_on_after_a_bad_tool(gc_on: None) -> None:
    registry = ToolRegistry()
    seen: list[bool] = []

    def tools() -> Iterator[dict[str, str]]:
        seen.append(gc.isenabled())
        yield {"name": "ok"}
        yield {"name": "bad name!"}

    with pytest.raises(ToolDefinitionError, match="bad name!"):
        registry.register_many(tools())
    assert seen == [False]  # paused while it validated
    assert gc.isenabled()
    assert registry.names() == []  # all or nothing, as before


def test_parse_catalogue_turns_it_back_on_after_bad_input(gc_on: None) -> None:
    with pytest.raises(CatalogueFormatError, match="bad name!"):
        parse_catalogue('[{"name": "bad name!"}]')
    assert gc.isenabled()
    assert parse_catalogue('[{"name": "ok"}]')[1][0].name == "ok"
    assert gc.isenabled()


def test_overlapping_loads_in_two_threads(gc_on: None) -> None:
    # A enters, B enters, A leaves: B is still loading, so the collector stays off.
    a_in, b_in, a_out, b_may_leave = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def load_a() -> None:
        with gc_paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def load_b() -> None:
        a_in.wait(5)
        with gc_paused():
            b_in.set()
            a_out.wait(5)
            seen["after A left"] = gc.isenabled()
            b_may_leave.wait(5)

    threads = [threading.Thread(target=load_a), threading.Thread(target=load_b)]
    for t in threads:
        t.start()
    a_out.wait(5)
    b_may_leave.set()
    for t in threads:
        t.join(5)
    assert seen == {"after A left": False}
    assert gc.isenabled()
