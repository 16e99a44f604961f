"""Durable file writes: a temporary file fsynced, renamed into place, its directory fsynced.

After a crash a file written here is the old text or the new one, never half of either;
what a crash leaves behind is a temporary file named for its target, which
:func:`remove_leftovers` removes once it is old enough not to be another process's write
under way.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

__all__ = ["LEFTOVER_AGE", "leftover_prefix", "remove_leftovers", "sync_directory", "write_durably"]

#: A temporary file older than this many seconds is a leftover of a write that never
#: finished; a younger one may be another process's write under way.
LEFTOVER_AGE = 60.0


def leftover_prefix(target: Path) -> str:
    """The name every temporary file of ``target`` starts with (hidden, named for it)."""
    return f".{target.name}."


def sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a directory; its renames are journaled
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_durably(target: Path, data: bytes) -> None:
    """Replace ``target`` by ``data``: written, flushed, fsynced, renamed, directory fsynced.

    A failure removes the temporary file and raises; ``target`` is then as it was.
    """
    directory = target.parent
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=leftover_prefix(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_directory(directory)


def remove_leftovers(target: Path, age: float = LEFTOVER_AGE) -> int:
    """Remove ``target``'s temporary files older than ``age`` seconds; how many went."""
    removed = 0
    cutoff = time.time() - age
    for path in target.parent.glob(f"{leftover_prefix(target)}*.tmp"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:
            continue  # gone already, or not ours to remove
    return removed
