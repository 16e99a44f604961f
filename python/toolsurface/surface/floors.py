"""Held-back floors read from snapshots: one set object per distinct floor.

A stateless host restores its session's snapshot on every request, and the held-back floor
(a few hundred group names at 500 groups) is nearly always the one it restored last time.
Comparing the parsed list with that one costs a third of building and hashing a new set;
and the set it returns is the object the shared decision's key already holds, so that key
is matched by identity rather than name by name.

Snapshots are read before their seal is checked, so what is kept is bounded by names in
all (``MAX_KEPT_NAMES``), not by requests: a stream of unchecked snapshots costs the
process a few megabytes at most, and only evicts floors, never changes one.
"""

from __future__ import annotations

import threading

__all__ = ["MAX_KEPT_NAMES", "floor_set", "kept_names"]

#: Group names kept over all floors (past this the table starts over); a longer floor is
#: answered but not kept.
MAX_KEPT_NAMES = 16_384

# Floors by their length: (the names, their set). Each entry is replaced whole, never
# changed, so a reader needs no lock; writers take _LOCK.
_FLOORS: dict[int, tuple[list[str], frozenset[str]]] = {}
_KEPT = [0]
_LOCK = threading.Lock()


def floor_set(names: list[str]) -> frozenset[str]:
    """The set of ``names``; the same object as for the last equal list of their length.

    Only a list without repeats is kept (a snapshot that repeats a name is refused).
    """
    found = _FLOORS.get(len(names))
    if found is not None and found[0] == names:
        return found[1]  # nothing is kept on this path, so an edit meanwhile cannot stick
    # One read of the caller's list: a host editing it meanwhile cannot leave a kept list
    # and a kept set that disagree.
    copy = list(names)
    made = frozenset(copy)
    if len(made) == len(copy) <= MAX_KEPT_NAMES:
        with _LOCK:
            old = _FLOORS.get(len(copy))
            kept = _KEPT[0] - (len(old[0]) if old is not None else 0)
            if kept + len(copy) > MAX_KEPT_NAMES:
                _FLOORS.clear()
                kept = 0
            _FLOORS[len(copy)] = (copy, made)
            _KEPT[0] = kept + len(copy)
    return made


def kept_names() -> int:
    """Group names the floors kept now hold (at most ``MAX_KEPT_NAMES``)."""
    return _KEPT[0]
