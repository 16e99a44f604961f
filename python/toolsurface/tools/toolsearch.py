"""ToolSearch: the tool a model calls to find and load held-back tools.

The host registers :func:`tool_search_tool` like any other tool and hands its calls to
:meth:`toolsurface.surface.ToolSurface.tool_search`, which searches, loads and writes the
result. This module holds what does not need the surface: the definition, the argument
parsing; the one-line form of a tool, ``safe_text`` and the near names live in
``toolsurface.admission.text`` and are re-exported here.
"""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsurface._internal.json_check import INT_MAX_BITS, JsonTextError, json_type, loads
from toolsurface.admission.text import LINE_MAX_CHARS, nearest_names, safe_text, tool_line
from toolsurface.models import Tool

__all__ = [
    "ARGUMENTS_MAX_CHARS",
    "ARGUMENTS_MAX_DEPTH",
    "ARGUMENTS_MAX_INT_DIGITS",
    "LINE_MAX_CHARS",
    "SELECT_MAX_ITEMS",
    "TOOL_SEARCH_NAME",
    "ToolSearchRequest",
    "nearest_names",
    "parse_tool_search_arguments",
    "refusal_text",
    "safe_text",
    "tool_line",
    "tool_search_tool",
]

TOOL_SEARCH_NAME = "ToolSearch"
#: At most this many names in ``select``; the rest are ignored with a note.
MAX_SELECT = 32
_QUERY_MAX = 1_000
#: The arguments ToolSearch takes; any other key is named back to the model.
_KEYS = ("query", "select", "group")
#: At most this many unknown keys are named.
_UNKNOWN_SHOWN = 5
#: Arguments sent as JSON text longer than this (characters, or bytes) are refused unread;
#: so is a ``query``, ``group`` or ``select`` string this long, and a ``select`` list whose
#: strings add up past it, however the arguments came.
ARGUMENTS_MAX_CHARS = 65_536
#: JSON text nesting arrays and objects deeper than this is refused before it is parsed
#: (ToolSearch's own arguments are two levels deep).
ARGUMENTS_MAX_DEPTH = 32
#: JSON text holding an integer of more digits than this is refused (2**64 has 20).
ARGUMENTS_MAX_INT_DIGITS = 20
#: A ``select`` list of more items than this is refused before any item is read.
SELECT_MAX_ITEMS = 1_024

REFUSAL = (
    "ToolSearch needs one of: query (a description of the job, e.g. "
    '{"query": "list open pull requests"}), select (exact tool names, e.g. '
    '{"select": ["github__list_pull_requests"]}), or group (a group from the catalogue, e.g. '
    '{"group": "github"}).'
)


def tool_search_tool(name: str = TOOL_SEARCH_NAME) -> Tool:
    """The ToolSearch definition a host registers (and admits) to enable discovery."""
    return Tool(
        name=name,
        description=(
            "Find and load tools that are held back from your tool list (the catalogue in "
            "the system prompt names them). Pass query to search by what the job needs, "
            "select to load exact tool names, or group to load a whole group. Loaded tools "
            "are callable from your next step. It loads tools only: skills, documents and "
            "other things are not tools."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool should do, in any language.",
                },
                "select": {
                    "anyOf": [
                        {"type": "array", "items": {"type": "string"}},
                        {"type": "string"},
                    ],
                    "description": "Exact tool names to load, as a list or comma-separated; "
                    "'group:NAME' loads a whole group.",
                },
                "group": {"type": "string", "description": "A group to load whole."},
            },
        },
        always_load=True,
    )


@dataclass(frozen=True)
class ToolSearchRequest:
    """A parsed ToolSearch call: what to search, which names and groups to load.

    ``notes`` say what was wrong with the arguments or what was cut, so the model can fix
    the next call; the result (or the refusal) carries them.
    """

    query: str = ""
    names: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: ``query`` was sent as a blank string and nothing else was asked: a search with no
    #: terms, answered with the first tools in order (not refused as asking for nothing).
    blank_query: bool = False

    @property
    def empty(self) -> bool:
        """Whether the call asks for nothing (a blank ``query`` string asks for a listing)."""
        return not (self.query or self.names or self.groups or self.blank_query)

    @property
    def refusal(self) -> str:
        """The answer to a call that asks for nothing: what was wrong, then the three forms."""
        return refusal_text(self.notes)


def refusal_text(notes: Iterable[str] = ()) -> str:
    """The three-form help, after what was wrong with the arguments, so the retry is a fix."""
    said = [n for n in notes if n]
    if not said:
        return REFUSAL
    problems = "".join(f"\n- {n}" for n in said)
    return f"ToolSearch could not use its arguments:{problems}\n{REFUSAL}"


_json_type = json_type


class _OutOfBoundsError(Exception):
    """An argument past a bound: the call is refused with this note (``str(exc)``)."""


def _as_object(arguments: Any) -> tuple[Mapping[Any, Any] | None, str]:
    """The arguments as a mapping (a JSON-object string parsed), or why they are not one.

    JSON text is read within bounds (:data:`ARGUMENTS_MAX_CHARS`, :data:`ARGUMENTS_MAX_DEPTH`,
    :data:`ARGUMENTS_MAX_INT_DIGITS`), standard JSON only (no ``NaN``): whatever a model
    writes, it is refused with a note, never an exception.
    """
    if isinstance(arguments, Mapping):
        return arguments, ""
    if isinstance(arguments, str | bytes):
        kind = "a string" if isinstance(arguments, str) else "bytes"
        if len(arguments) > ARGUMENTS_MAX_CHARS:
            unit = "characters" if isinstance(arguments, str) else "bytes"
            return None, (
                f"arguments must be a JSON object of at most {ARGUMENTS_MAX_CHARS:,} {unit}, "
                f"got {kind} of {len(arguments):,}"
            )
        try:
            parsed = loads(
                arguments, max_depth=ARGUMENTS_MAX_DEPTH, max_int_digits=ARGUMENTS_MAX_INT_DIGITS
            )
        except JsonTextError as exc:
            return None, f"arguments must be a JSON object, got {kind} that cannot be read: {exc}"
        except (json.JSONDecodeError, UnicodeDecodeError):
            verb = "is" if isinstance(arguments, str) else "are"
            return None, f"arguments must be a JSON object, got {kind} that {verb} not JSON"
        if isinstance(parsed, Mapping):
            return parsed, ""
        return None, f"arguments must be a JSON object, got {kind} holding {_json_type(parsed)}"
    return None, f"arguments must be an object, got {_json_type(arguments)}"


def _name_of(value: Any) -> str | None:
    """``value`` as a name to read or show: a string, or an integer of at most 64 bits.

    ``str`` of a larger integer can raise (Python's digit limit), and of anything else can
    run any code, so nothing else is turned into text.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if value.bit_length() <= INT_MAX_BITS else None
    return None


def _checked_text(value: Any, what: str) -> None:
    """Refuse a string argument past :data:`ARGUMENTS_MAX_CHARS`."""
    if isinstance(value, str) and len(value) > ARGUMENTS_MAX_CHARS:
        raise _OutOfBoundsError(
            f"{what} must be at most {ARGUMENTS_MAX_CHARS:,} characters, got {len(value):,}"
        )


def _unknown_keys(arguments: Mapping[Any, Any]) -> list[str]:
    """A note naming the keys ToolSearch does not take, with the nearest known key.

    Bounded however many keys there are: the first few unknown ones are named, the rest
    counted from the mapping's size.
    """
    known = sum(1 for k in _KEYS if k in arguments)
    count = len(arguments) - known
    if count <= 0:
        return []
    unknown = list(itertools.islice((k for k in arguments if k not in _KEYS), _UNKNOWN_SHOWN))
    named = []
    for key in unknown:
        name = _name_of(key)
        if name is None:
            named.append(f"a key of type {_json_type(key)}")
            continue
        near = difflib.get_close_matches(name[:64].casefold(), _KEYS, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]}?)" if near else ""
        named.append(f"{safe_text(name, 64)!r}{hint}")
    more = count - len(unknown)
    tail = f" and {more} more" if more > 0 else ""
    word = "argument" if count == 1 else "arguments"
    return [f"unknown {word} {', '.join(named)}{tail}: ToolSearch takes query, select, group"]


def _split_select(value: Any, notes: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        _checked_text(value, "select")
        if value.count(",") >= SELECT_MAX_ITEMS:
            raise _OutOfBoundsError(f"select must name at most {SELECT_MAX_ITEMS:,} tools")
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        if len(value) > SELECT_MAX_ITEMS:
            raise _OutOfBoundsError(
                f"select must be a list of at most {SELECT_MAX_ITEMS:,} names, "
                f"got {len(value):,} items"
            )
        chars = sum(len(v) for v in value if isinstance(v, str))
        if chars > ARGUMENTS_MAX_CHARS:
            raise _OutOfBoundsError(
                f"select's names must add up to at most {ARGUMENTS_MAX_CHARS:,} characters, "
                f"got {chars:,}"
            )
        items = value
    else:
        notes.append(f"select must be a list of tool names or a string, got {_json_type(value)}")
        return []
    names: list[str] = []
    bad: list[tuple[int, str]] = []
    for i, v in enumerate(items):
        name = _name_of(v)
        if name is not None:
            if name.strip():
                names.append(name.strip())
        else:
            bad.append((i, _json_type(v)))
    if bad:
        i, kind = bad[0]
        more = f" (and {len(bad) - 1} more items that are not names)" if len(bad) > 1 else ""
        notes.append(f"select[{i}] must be a tool name (a string), got {kind}{more}")
    return names


def parse_tool_search_arguments(arguments: Any) -> ToolSearchRequest:
    """Read ToolSearch's arguments leniently, noting what was wrong so the model can fix it.

    An object, or a string holding one (OpenAI's ``function.arguments``), is read; a null
    field counts as absent (OpenAI's strict mode sends one for every unused field). Names
    win over a description sent beside them.
    """
    mapping, problem = _as_object(arguments)
    if mapping is None:
        return ToolSearchRequest(notes=(problem,))
    try:
        return _read(mapping)
    except _OutOfBoundsError as exc:
        return ToolSearchRequest(notes=(str(exc),))


def _read(arguments: Mapping[Any, Any]) -> ToolSearchRequest:
    """The request in ``arguments``; :class:`_OutOfBoundsError` for a value past a bound."""
    notes: list[str] = _unknown_keys(arguments)
    query = arguments.get("query")
    _checked_text(query, "query")
    _checked_text(arguments.get("group"), "group")
    if query is not None and not isinstance(query, str):
        notes.append(f"query must be a string, got {_json_type(query)}")
    blank = isinstance(query, str) and not query.strip()
    query = query.strip() if isinstance(query, str) else ""
    if len(query) > _QUERY_MAX:
        query = query[:_QUERY_MAX]
        notes.append(f"the query was cut to {_QUERY_MAX} characters")
    select = _split_select(arguments.get("select"), notes)
    if query.lower().startswith("select:"):
        select += _split_select(query[len("select:") :], notes)
        query = ""
    if len(select) > MAX_SELECT:
        notes.append(f"only the first {MAX_SELECT} names of select were read")
        select = select[:MAX_SELECT]
    names = [s for s in select if not s.lower().startswith("group:")]
    groups = [s.split(":", 1)[1].strip() for s in select if s.lower().startswith("group:")]
    group = arguments.get("group")
    if isinstance(group, str) and group.strip():
        groups.insert(0, group.strip())
    elif group is not None and not isinstance(group, str):
        notes.append(f"group must be a string, got {_json_type(group)}")
    if names or groups:
        query = ""
    return ToolSearchRequest(
        query=query,
        names=tuple(dict.fromkeys(names)),
        groups=tuple(dict.fromkeys(g for g in groups if g)),
        notes=tuple(notes),
        blank_query=blank and not (names or groups),
    )
