"""Whether a value can be sent as standard JSON, and where it cannot.

A tool's schema travels in every request that lists the tool. A schema that cannot be
written as standard JSON (a cycle, a set, bytes, a datetime, NaN, a lone surrogate in a
string, an integer no parser agrees on) would register fine and then break every plan of
every run on that registry, so it is refused when the tool is made, naming the path inside
the schema. On the native engine the Rust copy of the schema makes the same checks on its
way (``copy_json`` declines what fails them) and this walk runs only on what it declined.

JSON *text* from outside (a catalogue file, a model's ToolSearch arguments) is read by
:func:`loads`, which raises :class:`JsonTextError` saying what was wrong where
``json.loads`` would raise ``RecursionError`` or a bare ``ValueError``, or would accept
``NaN`` and ``Infinity``, which are not JSON; each reader turns it into its own error.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

__all__ = [
    "INT_MAX_BITS",
    "MAX_DEPTH",
    "JsonTextError",
    "json_lines",
    "json_problem",
    "json_type",
    "loads",
    "text_problem",
]

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


def json_type(value: Any) -> str:
    """The JSON name of a value's type (``"object"``, ``"number"``...), else its class's."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


class JsonTextError(ValueError):
    """JSON text that :func:`loads` will not read, and why.

    A syntax error stays a ``json.JSONDecodeError``.
    """


class _ConstantError(Exception):
    """``NaN`` or an infinity met by the parser (raised from its ``parse_constant``)."""


def _refuse_constant(token: str) -> Any:
    raise _ConstantError(token)


#: A JSON string, its escapes included, its closing quote optional: a string left open runs
#: to the end of the text. A match always succeeds once begun, so a scan is linear; with the
#: quote required, an open string of escaped quotes was rescanned from each one, quadratic
#: in the text (docs/performance.md, "What a hostile request costs").
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _place(text: str, token: re.Pattern[str]) -> str:
    """Where ``token`` first matches outside a string, or nothing if it is not found.

    `` at line L column C``, or `` at column C`` in one-line text.
    """
    for match in re.finditer(f"{_STRING.pattern}|({token.pattern})", text, re.S):
        if match.group(1) is not None:
            at = match.start(1)
            column = at - text.rfind("\n", 0, at)
            if "\n" not in text:
                return f" at column {column}"
            return f" at line {text.count(chr(10), 0, at) + 1} column {column}"
    return ""


def _deeper_than(text: str, limit: int) -> bool:
    """Whether arrays and objects in ``text`` nest more than ``limit`` levels deep.

    Counted on the brackets outside strings, before any parsing, so that the depth does not
    depend on the interpreter's recursion limit (which a host may have raised far enough
    for the C parser to exhaust the stack); text with few brackets is not scanned.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def loads(
    text: str | bytes, *, max_depth: int | None = None, max_int_digits: int | None = None
) -> Any:
    """``json.loads`` of standard JSON, raising :class:`JsonTextError` for what it cannot read.

    Refused: nesting past ``max_depth`` levels (checked before parsing) or past what the
    parser can recurse into; an integer of more than ``max_int_digits`` digits (checked
    before converting it) or past Python's own limit on converting digits; ``NaN``,
    ``Infinity`` and ``-Infinity``, named with their line and column. Bytes are decoded as
    ``json.loads`` decodes them (a ``UnicodeDecodeError`` if they are not text); a syntax
    error is ``json.JSONDecodeError``.

    >>> loads('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads('{"max": NaN}')  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    JsonTextError: NaN is not JSON (JSON has no NaN or infinity) at column 9
    """
    if isinstance(text, bytes):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    if max_depth is not None and _deeper_than(text, max_depth):
        raise JsonTextError(f"JSON nested more than {max_depth} levels deep")
    parse_int: Any = None
    if max_int_digits is not None:
        parse_int = _int_reader(max_int_digits)
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=parse_int)
    except _ConstantError as exc:
        token = str(exc)
        where = _place(text, re.compile(re.escape(token)))
        raise JsonTextError(f"{token} is not JSON (JSON has no NaN or infinity){where}") from None
    except RecursionError:
        raise JsonTextError("JSON nested too deeply to read") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer past Python's digit limit for int conversion
        if isinstance(exc, JsonTextError):
            raise
        limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        where = _place(text, re.compile(rf"\d{{{limit + 1},}}")) if limit else ""
        raise JsonTextError(
            f"an integer of more than {limit} digits (Python's limit){where}"
        ) from None


def _int_reader(max_digits: int) -> Any:
    def read(digits: str) -> int:
        if len(digits) - digits.startswith("-") > max_digits:
            raise JsonTextError(f"an integer of more than {max_digits} digits")
        return int(digits)

    return read


def json_lines(text: str) -> list[str]:
    r"""The lines of JSON Lines text, numbered from 1 by their place in the list.

    A line ends at ``"\n"`` only (a ``"\r"`` before it is JSON's whitespace, left to the
    parser): ``str.splitlines`` also breaks at U+2028, U+0085, form feed and others, which a
    JSON string may hold raw, and would cut a valid line in two.
    """
    return text.split("\n")
