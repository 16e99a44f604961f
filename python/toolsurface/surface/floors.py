"""Held-back floors read from snapshots: one set object per distinct floor.

A stateless host restores its session's snapshot on every request, and the held-back floor
(a few hundred group names at 500 groups) is nearly always the one it restored last time.
Comparing the parsed list with that one costs a third of building and hashing a new set;
and the set it returns is the object the shared decision's key already holds, so that key
is matched by identity rather than name by name.

A floor's JSON text is kept too (``floor_in_text``): a snapshot whose held-back list is,
character for character, a kept floor's text is read without that list, which is most of
its strings, so a restore costs what the session holds, not what the catalogue holds back.
A JSON reader reads the same characters as the same value, so a kept text stands for
exactly the names it was read as; a text that differs in any way (another floor, spaces,
escapes, a repeated key) is read in full.

Snapshots are read before their seal is checked, so what is kept is bounded, not by
requests: the sets by names in all (``MAX_KEPT_NAMES``), the texts by their number and
length (``MAX_KEPT_TEXTS``, ``MAX_TEXT_CHARS``). A stream of unchecked snapshots costs the
process some megabytes at most, and only evicts floors, never changes one.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "MAX_KEPT_NAMES",
    "MAX_KEPT_TEXTS",
    "MAX_TEXT_CHARS",
    "STAND_IN",
    "TEXT_MIN_NAMES",
    "floor_in_text",
    "floor_set",
    "forget_kept",
    "kept_names",
    "kept_text_names",
    "read_keeping_floors",
    "remember_floor_text",
]

#: Group names kept over all floors (past this the table starts over); a longer floor is
#: answered but not kept.
MAX_KEPT_NAMES = 16_384

# Floors by their length: (the names, their set). Each entry is replaced whole, never
# changed, so a reader needs no lock; writers take _LOCK.
_FLOORS: dict[int, tuple[list[str], frozenset[str]]] = {}
_KEPT = [0]
_LOCK = threading.Lock()

#: A floor's text is kept from this many names on (a shorter one is read faster than found).
TEXT_MIN_NAMES = 32
#: Floor texts kept (the most recent ones), and the longest kept, in characters: at most
#: 2 M characters in all, 8 MB even at four bytes a character.
MAX_KEPT_TEXTS = 8
MAX_TEXT_CHARS = 1 << 18
#: Compact JSON array of a floor -> its names, the most recently kept last. Each entry is
#: added or removed whole under _LOCK; readers take a copy of the items.
_TEXTS: dict[str, list[str]] = {}
#: The held-back list's key as the snapshot's serializer writes it (compact JSON).
_KEY = '"held_back":'
#: What a kept floor's text is replaced by while the rest of a snapshot is read: a group
#: name no snapshot holds (random per process, so none can be written to match it).
STAND_IN = f"toolsurface-held-back-{secrets.token_hex(16)}"


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


def _held_back_at(text: str) -> int:
    """Where the value of ``text``'s one ``"held_back":`` starts; -1 if none or repeated.

    A repeated key is left to the full read (which of the two counts is the reader's
    business). A match that is not the snapshot's own key (its first quote escaped, ending
    another key) names a field no snapshot has, so that text fails to read either way, and
    the full read names the error.
    """
    at = text.find(_KEY)
    if at < 0 or text.find(_KEY, at + 1) >= 0:
        return -1
    return at + len(_KEY)


def floor_in_text(text: str) -> tuple[int, int, list[str]] | None:
    """(start, end, a copy of the names) of a kept floor's text as ``text``'s held-back list.

    None when the list is not one kept (then ``text`` is read in full).
    """
    if not _TEXTS:
        return None
    start = _held_back_at(text)
    if start < 0:
        return None
    for kept, names in reversed(list(_TEXTS.items())):
        if text.startswith(kept, start):
            return start, start + len(kept), list(names)
    return None


def remember_floor_text(text: str, names: list[str]) -> None:
    """Keep the JSON text of ``names`` when ``text`` holds it as its one held-back list.

    ``names`` is the list a JSON reader made of ``text``; kept only without repeats, from
    ``TEXT_MIN_NAMES`` names on and up to ``MAX_TEXT_CHARS`` characters of text.
    """
    if len(names) < TEXT_MIN_NAMES or len(set(names)) != len(names):
        return
    kept = json.dumps(names, separators=(",", ":"), ensure_ascii=False)
    start = _held_back_at(text)
    if len(kept) > MAX_TEXT_CHARS or start < 0 or not text.startswith(kept, start):
        return
    # The floor table's own list when it is this floor: a copy of it then matches there
    # name by name by identity.
    found = _FLOORS.get(len(names))
    same = found[0] if found is not None and found[0] == names else list(names)
    with _LOCK:
        if kept in _TEXTS:
            return
        while len(_TEXTS) >= MAX_KEPT_TEXTS:
            del _TEXTS[next(iter(_TEXTS))]
        _TEXTS[kept] = same


_Read = TypeVar("_Read")


def read_keeping_floors(
    text: str,
    read: Callable[[str], _Read | None],
    held_back: Callable[[_Read], list[str]],
    with_held_back: Callable[[_Read, list[str]], _Read],
) -> _Read | None:
    """``read(text)`` with its held-back list taken from the kept floor it is, if it is one.

    ``read`` gives what a text holds, or None; ``held_back`` its list, ``with_held_back`` a
    copy with another list. When the list is a kept floor's text, the rest is read with a
    one-name stand-in there (the kept floor passed every check a list does when it was
    read), and only the stand-in read back says the list read was the one replaced: the
    same key again, written otherwise ('"held_back" :', an escape), is the one a reader
    keeps. Anything else is read in full, and its list kept for next time.
    """
    found = floor_in_text(text)
    if found is not None:
        start, end, names = found
        got = read(f'{text[:start]}["{STAND_IN}"]{text[end:]}')
        if got is not None and held_back(got) == [STAND_IN]:
            return with_held_back(got, names)
    got = read(text)
    if got is not None:
        remember_floor_text(text, held_back(got))
    return got


def kept_text_names() -> int:
    """Group names the kept floor texts hold now (at most ``MAX_KEPT_TEXTS`` floors)."""
    return sum(map(len, list(_TEXTS.values())))


def forget_kept() -> None:
    """Forget every kept floor and floor text: what a fresh process starts with."""
    with _LOCK:
        _FLOORS.clear()
        _KEPT[0] = 0
        _TEXTS.clear()
