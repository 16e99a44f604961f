"""Fuzz targets: the catalogue readers and the snapshot loader take any bytes.

Each target feeds one input to the code under test and accepts only the library's own
documented errors; anything else (a crash, an unexpected exception type) is a finding.
``tests/test_fuzz_seeds.py`` replays the kept seeds through the same targets in every test
run; ``fuzz/run.py`` drives them with atheris.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import parse_catalogue
from toolsurface.errors import CatalogueFormatError
from toolsurface.surface.snapshot import SnapshotError
from toolsurface.surface.snapshot_read import SnapshotFields, read_fields

__all__ = ["catalogue_target", "snapshot_reads_agree", "snapshot_target"]

_REGISTRY: ToolRegistry | None = None

# The registries here rank lexically (``semantic=False``) whatever the environment has: the
# encoders take any text, and with them a run cost tens of milliseconds, so in CI's 20 seconds
# the fuzzers replayed their seeds and tried nothing new.


def catalogue_target(data: bytes) -> None:
    """Parse any bytes as a catalogue; only a CatalogueFormatError may come out."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        fmt, tools = parse_catalogue(text, source="fuzz")
    except CatalogueFormatError:
        return
    registry = ToolRegistry(engine=None, semantic=False)
    registry.register_many(tools, replace=True)
    registry.search(text[:200], k=3)
    assert fmt


def _registry() -> ToolRegistry:
    global _REGISTRY
    if _REGISTRY is None:
        reg = ToolRegistry(semantic=False)
        reg.register_many(
            [Tool(name=f"srv__t{i}", description=f"Tool {i}.") for i in range(12)]
            + [Tool(name="host_a"), Tool(name="host_b")]
        )
        reg.declare_group("srv", prefix="srv__", dynamic=True, rules="Be careful.")
        reg.register(tool_search_tool())
        _REGISTRY = reg
    return _REGISTRY


def snapshot_target(data: bytes) -> None:
    """Restore any bytes as a snapshot; only a SnapshotError may come out, never half a state.

    The text is also read natively and by the model alone, which must agree
    (``snapshot_reads_agree``).
    """
    snapshot_reads_agree(data)
    surface = ToolSurface(_registry(), limits=SurfaceLimits(max_advertised_tools=6))
    before = surface.snapshot()
    try:
        surface.restore(data)
    except SnapshotError:
        assert surface.snapshot() == before
        return
    plan = surface.plan()
    assert len(plan.tools) <= 6


def _read(text: str, reader: Callable[[str], Any]) -> SnapshotFields | str:
    try:
        return read_fields(text, reader=reader)
    except SnapshotError as err:
        return str(err)


def snapshot_reads_agree(data: bytes) -> None:
    """Read any text as a snapshot natively and by the model: the same fields or error."""
    try:
        import toolsurface._native as native
    except ImportError:
        return
    reader = getattr(native, "read_snapshot", None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    if reader is not None:
        assert _read(text, reader) == _read(text, lambda _text: None)
