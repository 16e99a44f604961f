"""Pause Python's cyclic garbage collector around a bulk load.

Registering 100,000 tools from mappings makes millions of containers (schema copies,
models, field tuples), none of them garbage; the collector's passes over the growing heap
took 60% of it (7.2 s against 2.9 s paused, `docs/performance.md`). A bulk load pauses it
and restores the state it found: a collector the host had turned off stays off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off, turning it back on only if it was on.

    Nested or concurrent uses are safe: only the outermost one that found it on turns it back
    on. Reference counting still frees everything that is not in a cycle as usual.
    """
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
