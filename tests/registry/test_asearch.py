"""``asearch`` and ``aprepare``: the same hits as ``search``, from a worker thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface.catalogue import demo_catalogue


def test_asearch_gives_what_search_gives_with_every_parameter() -> None:
    tools = demo_catalogue()
    registry = ToolRegistry(tools)
    admitted = {t.name for t in tools if t.name.startswith("github__")}
    for query, kwargs in [
        ("list open pull requests", {}),
        ("покажи открытые пулреквесты", {"k": 3}),
        ("send a message", {"admitted": admitted, "explain": True}),
    ]:
        got = asyncio.run(registry.asearch(query, **kwargs))  # type: ignore[arg-type]
        assert got == registry.search(query, **kwargs)  # type: ignore[arg-type]


def test_aprepare_builds_the_index_off_the_calling_thread() -> None:
    registry = ToolRegistry([Tool(name="fs__read_file", description="Read a file.")])
    built_in: list[str] = []
    original = registry.prepare

    def prepare() -> None:
        built_in.append(threading.current_thread().name)
        original()

    registry.prepare = prepare  # type: ignore[method-assign]
    asyncio.run(registry.aprepare())
    assert built_in and built_in[0] != threading.current_thread().name
    assert registry._built is not None and registry._built.generation == registry.generation


def test_asearch_errors_are_the_searchs() -> None:
    registry = ToolRegistry([Tool(name="fs__read_file", description="Read a file.")])
    with pytest.raises(TypeError, match="query must be a string"):
        asyncio.run(registry.asearch(5))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be a whole number"):
        asyncio.run(registry.asearch("read", k=-1))
