"""Held-back floors read from snapshots: one set object per distinct floor.

A stateless host restores its session's snapshot on every request, and the held-back floor
(a few hundred group names at 500 groups) is nearly always the one it restored last time.
Comparing the parsed list with that one costs a third of building and hashing a new set;
and the set it returns is the object the shared decision's key already holds, so that key
is matched by identity rather than name by name.
"""

from __future__ import annotations

import threading

__all__ = ["floor_set"]

#: Floors kept, by their length (one each; past this many lengths the table starts over).
MAX_FLOORS = 64

_FLOORS: dict[int, tuple[list[str], frozenset[str]]] = {}
_LOCK = threading.Lock()


def floor_set(names: list[str]) -> frozenset[str]:
    """The set of ``names``; the same object as for the last equal list of their length.

    Only a list without repeats is kept (a snapshot that repeats a name is refused).
    """
    found = _FLOORS.get(len(names))
    if found is not None and found[0] == names:
        return found[1]
    made = frozenset(names)
    if len(made) == len(names):
        with _LOCK:
            if len(_FLOORS) >= MAX_FLOORS:
                _FLOORS.clear()
            _FLOORS[len(names)] = (list(names), made)
    return made
