"""Shorten the interpreter's thread switch interval while toolsurface works off a loop.

A worker thread running Python (registering tools, building groups, the pure engine) keeps
the interpreter's lock until another thread has waited ``sys.getswitchinterval()`` for it:
5 ms by default, which an event loop sees as a stall of at least that long on every
switch. While work sent off the loop runs, the interval is at most ``_INTERVAL``, so the
loop waits about that long instead; when the last such work ends, the host's own interval
comes back. A host that set a shorter one keeps it: the interval is only ever lowered.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["switch_shortened"]

# The loop's wait for the lock is bounded by this, plus the time the worker takes to reach
# its next switch point; below it, switching costs the worker more than the loop gains.
_INTERVAL = 0.001

_lock = threading.Lock()
_running = 0  # blocks inside ``switch_shortened`` now, in every thread
_host = 0.0  # the interval the first of them found


@contextmanager
def switch_shortened() -> Iterator[None]:
    """Run the block with the switch interval at most 1 ms; the last block out restores it.

    Blocks may nest and overlap across threads: the host's interval comes back only when the
    last running one ends. A host that changes the interval meanwhile should do so outside
    such work, or its value is replaced by the one found when the first block began.
    """
    global _running, _host
    with _lock:
        if _running == 0:
            _host = sys.getswitchinterval()
            sys.setswitchinterval(min(_host, _INTERVAL))
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                sys.setswitchinterval(_host)
