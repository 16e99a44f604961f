"""ToolSearch: the tool a model calls to find and load held-back tools.

The host registers :func:`tool_search_tool` like any other tool and hands its calls to
:meth:`toolsurface.surface.ToolSurface.tool_search`, which searches, loads and writes the
result. This module holds what does not need the surface: the definition, the argument
parsing, and the one-line form of a tool that results and errors share.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsurface.models import Tool
from toolsurface.retrieval.fields import split_description

__all__ = [
    "LINE_MAX_CHARS",
    "TOOL_SEARCH_NAME",
    "ToolSearchRequest",
    "nearest_names",
    "parse_tool_search_arguments",
    "safe_text",
    "tool_line",
    "tool_search_tool",
]

TOOL_SEARCH_NAME = "ToolSearch"
#: A tool's line (name, parameters, first sentence) is cut to this many characters.
LINE_MAX_CHARS = 300
#: At most this many names in ``select``; the rest are ignored with a note.
MAX_SELECT = 32
_QUERY_MAX = 1_000
#: Control, format (zero-width, bidi), surrogate, private-use and line/paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")

REFUSAL = (
    "ToolSearch needs one of: query (a description of the job, e.g. "
    '{"query": "list open pull requests"}), select (exact tool names, e.g. '
    '{"select": ["github__list_pull_requests"]}), or group (a group from the catalogue, e.g. '
    '{"group": "github"}).'
)


def safe_text(text: str, limit: int = LINE_MAX_CHARS) -> str:
    """Text fit for the model: control, zero-width and bidi characters gone, length capped."""
    kept = []
    for ch in text:
        if ch in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(ch) not in _UNSAFE_CATEGORIES:
            kept.append(ch)
    cleaned = " ".join("".join(kept).split())
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def tool_line(tool: Tool) -> str:
    """``Name(param1*, param2) — first sentence``; ``*`` marks a required parameter."""
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    params = ", ".join(f"{p}*" if p in required else str(p) for p in props)
    summary = split_description(tool.description)[0]
    head = f"{tool.name}({params})"
    line = f"{head} — {summary}" if summary else head
    return safe_text(line)


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
    """A parsed ToolSearch call: what to search, which names and groups to load."""

    query: str = ""
    names: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """Whether the call asks for nothing."""
        return not (self.query or self.names or self.groups)


def _split_select(value: Any) -> list[str]:
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        return []
    return [str(v).strip() for v in items if isinstance(v, str | int) and str(v).strip()]


def parse_tool_search_arguments(arguments: Any) -> ToolSearchRequest:
    """Read ToolSearch's arguments leniently; names win over a description sent beside them."""
    if not isinstance(arguments, Mapping):
        return ToolSearchRequest(notes=("arguments must be an object",))
    notes: list[str] = []
    query = arguments.get("query")
    query = query.strip() if isinstance(query, str) else ""
    if len(query) > _QUERY_MAX:
        query = query[:_QUERY_MAX]
        notes.append(f"the query was cut to {_QUERY_MAX} characters")
    select = _split_select(arguments.get("select"))
    if query.lower().startswith("select:"):
        select += _split_select(query[len("select:") :])
        query = ""
    if len(select) > MAX_SELECT:
        notes.append(f"only the first {MAX_SELECT} names of select were read")
        select = select[:MAX_SELECT]
    names = [s for s in select if not s.lower().startswith("group:")]
    groups = [s.split(":", 1)[1].strip() for s in select if s.lower().startswith("group:")]
    group = arguments.get("group")
    if isinstance(group, str) and group.strip():
        groups.insert(0, group.strip())
    if names or groups:
        query = ""
    return ToolSearchRequest(
        query=query,
        names=tuple(dict.fromkeys(names)),
        groups=tuple(dict.fromkeys(g for g in groups if g)),
        notes=tuple(notes),
    )


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.split(name) if w]


def nearest_names(asked: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``asked``: a case change or one word away first."""
    asked_folded = asked.casefold()
    asked_words = _words(asked)
    scored: list[tuple[int, float, str]] = []
    for name in candidates:
        if name == asked:
            continue
        if name.casefold() == asked_folded:
            scored.append((0, 0.0, name))
            continue
        words = _words(name)
        diff = len(set(words) ^ set(asked_words))
        ratio = difflib.SequenceMatcher(None, asked_folded, name.casefold()).ratio()
        if words and asked_words and diff <= 2 and len(set(words) & set(asked_words)) >= 1:
            scored.append((1, -ratio, name))
        elif ratio >= 0.6:
            scored.append((2, -ratio, name))
    scored.sort()
    return [name for _, _, name in scored[:n]]
