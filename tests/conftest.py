"""Shared fixtures: the live engine, both engines for parity, and the shared data paths."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

import pytest

# The suite asserts the lexical rankings (figures, doctests, parity to 1e-9), so the
# semantic extra, which the test extra installs, is off unless a test turns it on
# (tests/retrieval/test_semantic.py does, through the constructor and the variable).
os.environ["TOOLSURFACE_SEMANTIC"] = "off"

import toolsurface
from toolsurface.retrieval.engine.backend import backend

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(os.environ.get("TOOLSURFACE_SHARED", ROOT.parent / "shared")) / "data"
MCP_TOOLS = SHARED / "catalogue" / "mcp_tools.json"
DEV_QUERIES = SHARED / "queries" / "dev.jsonl"
NO_SHARED = "shared data (../shared/data) is absent: the real-catalogue checks need it"


def native_available() -> bool:
    try:
        backend("native")
    except ImportError:
        return False
    return True


def _agnostic(item: pytest.Item) -> bool:
    """Whether ``item`` checks the same thing on either engine (see below)."""
    fixtures = getattr(item, "fixturenames", ())
    return item.get_closest_marker("engine_agnostic") is not None or "both_backends" in fixtures


def _pure_share(item: pytest.Item) -> bool:
    """Whether a split run gives an engine-agnostic test to the pure suite: half, stably."""
    return zlib.crc32(item.nodeid.encode("utf-8")) % 2 == 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run an engine-agnostic test once per environment: on the native engine where built.

    CI runs the suite twice, ``TOOLSURFACE_ENGINE=native`` then ``=pure``. A test marked
    ``engine_agnostic`` (a gateway's transport, forwarding, store or HTTP doors through
    real processes; static typing; imports) or one that compares both engines itself
    (``both_backends``) checks the same thing either way, so the pure run skips it when
    the native core is built here, and runs it where it is not (the pure engine is then
    the only one). ``TOOLSURFACE_TEST_EVERY_ENGINE=1`` runs them on the pure engine too.
    ``TOOLSURFACE_TEST_SPLIT=1`` (CI, whose two suites run side by side) gives half of them,
    by their id's hash, to the pure suite instead: each still runs once, and neither suite
    waits on the other's share.
    """
    forced = os.environ.get("TOOLSURFACE_ENGINE", "").strip().lower()
    if forced not in ("native", "pure") or os.environ.get("TOOLSURFACE_TEST_EVERY_ENGINE") == "1":
        return
    if not native_available():
        return
    split = os.environ.get("TOOLSURFACE_TEST_SPLIT") == "1"
    if forced == "native" and not split:
        return
    other = "pure" if forced == "native" else "native"
    skip = pytest.mark.skip(
        reason=f"engine-agnostic: run by this environment's {other}-engine suite "
        "(TOOLSURFACE_TEST_EVERY_ENGINE=1 runs it here too)"
    )
    for item in items:
        if _agnostic(item) and (not split or _pure_share(item) == (forced == "native")):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def engine_name() -> str:
    """The live engine: every retrieval test runs on it; CI runs the suite on each."""
    return toolsurface.engine()


@pytest.fixture(scope="session")
def both_backends() -> tuple[Any, Any]:
    if not native_available():
        pytest.skip("the native core is not built: parity needs both engines")
    return backend("pure"), backend("native")


def vector_settings(s: dict[str, Any]) -> toolsurface.RetrievalSettings:
    """A conformance file's settings (five weights and ``b``) as ``RetrievalSettings``."""
    fields = ("name", "search_hint", "summary", "body", "params")
    return toolsurface.RetrievalSettings(
        weights=toolsurface.FieldValues(**dict(zip(fields, s["weights"]))),
        b=toolsurface.FieldValues(**dict(zip(fields, s["b"]))),
        k1=s["k1"],
        expansion_weight=s["expansion_weight"],
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def mcp_tools() -> list[toolsurface.Tool]:
    if not MCP_TOOLS.exists():
        pytest.skip(NO_SHARED)
    from toolsurface.catalogue import load_catalogue

    return load_catalogue(MCP_TOOLS)[1]


@pytest.fixture(scope="session")
def dev_queries() -> list[dict[str, Any]]:
    if not DEV_QUERIES.exists():
        pytest.skip(NO_SHARED)
    return read_jsonl(DEV_QUERIES)
