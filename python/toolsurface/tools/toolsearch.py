"""ToolSearch: the tool a model calls to find and load held-back tools.

The host registers :func:`tool_search_tool` like any other tool and hands its calls to
:meth:`toolsurface.surface.ToolSurface.tool_search`, which searches, loads and writes the
result. This module holds what does not need the surface: the definition, the argument
parsing; the one-line form of a tool, ``safe_text`` and the near names live in
``toolsurface._text`` and are re-exported here.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsurface._text import LINE_MAX_CHARS, nearest_names, safe_text, tool_line
from toolsurface.models import Tool

__all__ = [
    "LINE_MAX_CHARS",
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

    @property
    def empty(self) -> bool:
        """Whether the call asks for nothing."""
        return not (self.query or self.names or self.groups)

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


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, as the model wrote it."""
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


def _as_object(arguments: Any) -> tuple[Mapping[Any, Any] | None, str]:
    """The arguments as a mapping (a JSON-object string parsed), or why they are not one."""
    if isinstance(arguments, Mapping):
        return arguments, ""
    if isinstance(arguments, str | bytes):
        try:
            parsed = json.loads(arguments)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, "arguments must be a JSON object, got a string that is not JSON"
        if isinstance(parsed, Mapping):
            return parsed, ""
        return None, f"arguments must be a JSON object, got a string holding {_json_type(parsed)}"
    return None, f"arguments must be an object, got {_json_type(arguments)}"


def _unknown_keys(arguments: Mapping[Any, Any]) -> list[str]:
    """A note naming the keys ToolSearch does not take, with the nearest known key."""
    unknown = [str(k) for k in arguments if k not in _KEYS]
    if not unknown:
        return []
    named = []
    for key in unknown[:_UNKNOWN_SHOWN]:
        near = difflib.get_close_matches(key.casefold(), _KEYS, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]}?)" if near else ""
        named.append(f"{safe_text(key, 64)!r}{hint}")
    more = len(unknown) - _UNKNOWN_SHOWN
    tail = f" and {more} more" if more > 0 else ""
    word = "argument" if len(unknown) == 1 else "arguments"
    return [f"unknown {word} {', '.join(named)}{tail}: ToolSearch takes query, select, group"]


def _split_select(value: Any, notes: list[str]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        notes.append(f"select must be a list of tool names or a string, got {_json_type(value)}")
        return []
    names: list[str] = []
    bad: list[tuple[int, str]] = []
    for i, v in enumerate(items):
        if isinstance(v, str | int) and not isinstance(v, bool):
            if str(v).strip():
                names.append(str(v).strip())
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
    arguments = mapping
    notes: list[str] = _unknown_keys(arguments)
    query = arguments.get("query")
    if query is not None and not isinstance(query, str):
        notes.append(f"query must be a string, got {_json_type(query)}")
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
    )
