"""pytest-benchmark: one search on the real catalogue per engine (run: pytest benches/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolsurface.catalogue import load_catalogue
from toolsurface.registry import ToolRegistry

CATALOGUE = Path(__file__).resolve().parent.parent.parent / "shared/data/catalogue/mcp_tools.json"
QUERIES = ["list open pull requests in repo", "покажи открытые пулреквесты"]


@pytest.fixture(scope="module")
def tools() -> list[Any]:
    if not CATALOGUE.exists():
        pytest.skip("shared data is absent")
    return load_catalogue(CATALOGUE)[1]


@pytest.mark.parametrize("engine", ["native", "pure"])
@pytest.mark.parametrize("query", QUERIES)
def test_search(benchmark: Any, tools: list[Any], engine: str, query: str) -> None:
    registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    registry.search(query)
    hits = benchmark(registry.search, query, 10)
    assert hits
