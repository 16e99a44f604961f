"""The versioned snapshot of a run (kept for import compatibility).

The module lives in :mod:`toolsurface.surface.snapshot`; this path re-exports its names.
"""

from toolsurface.surface.snapshot import (
    MAX_COUNTER,
    SNAPSHOT_VERSION,
    LoadedRow,
    SnapshotError,
    SurfaceSnapshot,
    check_seal,
    parse_snapshot,
    seal_of,
)

__all__ = [
    "MAX_COUNTER",
    "SNAPSHOT_VERSION",
    "LoadedRow",
    "SnapshotError",
    "SurfaceSnapshot",
    "check_seal",
    "parse_snapshot",
    "seal_of",
]
