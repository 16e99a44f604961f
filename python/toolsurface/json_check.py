"""Whether a value can be sent as standard JSON, and where it cannot.

A tool's schema travels in every request that lists the tool. A schema that cannot be
written as standard JSON (a cycle, a set, bytes, a datetime, NaN, a lone surrogate in a
string, an integer no parser agrees on) would register fine and then break every plan of
every run on that registry, so it is refused when the tool is made, naming the path inside
the schema. On the native engine the Rust copy of the schema makes the same checks on its
way (``copy_json`` declines what fails them) and this walk runs only on what it declined.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["INT_MAX_BITS", "MAX_DEPTH", "json_problem", "text_problem"]

#: Nesting deeper than this is refused: every supported CPython's json writes it (3.11's C
#: encoder stops short of 400). The native copy declines past 192, leaving the rest to this.
MAX_DEPTH = 256
#: A path in an error keeps its last this many characters.
_PATH_SHOWN = 160
#: Integers of more bits than this are refused: JSON parsers past 64 bits disagree.
INT_MAX_BITS = 64


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent (a lone surrogate), or ``None``."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}"
    return None


def json_problem(value: Any) -> str | None:
    """The first place where ``value`` is not standard JSON, with why, or ``None``.

    >>> json_problem({"type": "object", "properties": {"n": {"maximum": float("nan")}}})
    '$.properties.n.maximum: NaN or an infinity is not JSON'
    >>> json_problem({"enum": [1, {2, 3}]})
    '$.enum[1]: a set is not JSON'
    >>> json_problem({"type": "object"}) is None
    True
    """
    # An explicit stack: a schema nested past Python's recursion limit is refused, not a
    # RecursionError. ``open`` holds the containers on the current path (a cycle's mark).
    stack: list[tuple[Any, str, int, bool]] = [(value, "$", 0, False)]
    open_ids: set[int] = set()
    while stack:
        item, path, depth, leaving = stack.pop()
        if leaving:
            open_ids.discard(id(item))
            continue
        if isinstance(item, dict | list | tuple):
            if depth > MAX_DEPTH:
                return f"{_shown(path)}: nested too deeply (more than {MAX_DEPTH} levels)"
            if id(item) in open_ids:
                return f"{_shown(path)}: refers back to itself (a cycle), which JSON cannot write"
            open_ids.add(id(item))
            stack.append((item, path, depth, True))
            children = _children(item, path)
            if isinstance(children, str):
                return children
            stack.extend((child, where, depth + 1, False) for child, where in reversed(children))
            continue
        problem = _scalar_problem(item)
        if problem is not None:
            return f"{_shown(path)}: {problem}"
    return None


def _shown(path: str) -> str:
    return path if len(path) <= _PATH_SHOWN else "..." + path[-_PATH_SHOWN:]


def _children(item: dict[Any, Any] | list[Any] | tuple[Any, ...], path: str) -> Any:
    """A container's members with their paths, or why one of its keys is not JSON."""
    if isinstance(item, dict):
        out: list[tuple[Any, str]] = []
        for key, member in item.items():
            if not isinstance(key, str):
                return f"{_shown(path)}: key {key!r} is a {type(key).__name__}, not a string"
            problem = text_problem(key)
            if problem is not None:
                return f"{_shown(path)}: key {key!r}: {problem}"
            out.append((member, f"{path}.{key}"))
        return out
    return [(member, f"{path}[{i}]") for i, member in enumerate(item)]


def _scalar_problem(item: Any) -> str | None:
    if item is None or isinstance(item, bool):
        return None
    if isinstance(item, str):
        return text_problem(item)
    if isinstance(item, int):
        if item.bit_length() > INT_MAX_BITS:
            return f"an integer of {item.bit_length()} bits is past {INT_MAX_BITS}"
        return None
    if isinstance(item, float):
        return None if math.isfinite(item) else "NaN or an infinity is not JSON"
    return f"a {type(item).__name__} is not JSON"
