"""The five indexed fields of a tool, shared by both engines: one cut, one parameter walk.

The first sentence of a description is its ``summary``; the rest is its ``body``. The cut
skips abbreviations and full stops inside brackets so that "Move an issue to a new status
(e.g. Done)." stays whole. The rules are normative in docs/analysis.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from toolsurface.models import FIELD_NAMES

__all__ = [
    "ABBREVIATIONS",
    "FIELD_MAX_CHARS",
    "FIELD_NAMES",
    "SOFT_ABBREVIATIONS",
    "SURROGATE",
    "clean_text",
    "params_text",
    "schema_texts",
    "split_description",
]

#: A field's text is cut to this many characters before analysis (hostile or huge input).
FIELD_MAX_CHARS = 32_768

#: Words whose full stop never ends a sentence (compared lower-cased, dots inside kept).
ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "eg",
        "ie",
        "vs",
        "cf",
        "approx",
        "incl",
        "esp",
        "fig",
        "vol",
        "mr",
        "mrs",
        "ms",
        "dr",
        "jr",
        "sr",
        "inc",
        "ltd",
        "corp",
        "т.е",
        "т.к",
        "т.н",
        "напр",
        "др",
        "см",
        "ср",
        "стр",
        "тыс",
        "млн",
        "млрд",
        "проф",
    ]
)
#: Abbreviations that end a sentence only when an upper-case letter starts the next one.
SOFT_ABBREVIATIONS = frozenset(["etc", "т.д", "т.п", "и.т.д"])

#: A lone surrogate: not valid Unicode text, so neither engine can take it as it is.
SURROGATE = re.compile("[\ud800-\udfff]")
_OPENERS = "([{"
_CLOSERS = ")]}"
_BLOCK_STARTS = "-*•#>|`"
_MARKS = re.compile(r"[()\[\]{}\n.!?]")


def clean_text(text: str) -> str:
    """Replace lone surrogates (not valid Unicode text) with U+FFFD, as both engines need."""
    if text.isascii():
        return text
    return SURROGATE.sub("\ufffd", text)


def _word_before(text: str, end: int) -> str:
    """The run of letters and dots ending just before index ``end``, lower-cased."""
    start = end
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    return text[start:end].lower()


def _next_non_space(text: str, pos: int) -> str:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return text[pos] if pos < len(text) else ""


def _line_break_ends(text: str, pos: int, line_start: int) -> bool:
    """Whether the line break at ``pos`` ends the first sentence (see module docs)."""
    if not text[line_start:pos].strip():
        return False
    nxt = pos + 1
    line_end = text.find("\n", nxt)
    next_line = text[nxt:] if line_end < 0 else text[nxt:line_end]
    if not next_line.strip():
        return True
    first = next_line.lstrip()[0]
    return first.isupper() or first.isdigit() or first in _BLOCK_STARTS


def split_description(description: str) -> tuple[str, str]:
    """Cut a description into its first sentence and the rest, both stripped."""
    text = description.strip()
    depth = 0
    line_start = 0
    last_closer = -2  # worked out when first needed: most descriptions never need it
    # Only these characters can change the state: visit them, not every character.
    for m in _MARKS.finditer(text):
        i, ch = m.start(), m.group()
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif ch == "\n":
            if _line_break_ends(text, i, line_start):
                return _joined(text[:i]), text[i + 1 :].strip()
            line_start = i + 1
        elif ch in ".!?":
            if i + 1 < len(text) and not text[i + 1].isspace():
                continue
            if depth > 0:
                if last_closer == -2:
                    last_closer = max(text.rfind(")"), text.rfind("]"), text.rfind("}"))
                if last_closer > i:
                    continue
            if ch == ".":
                word = _word_before(text, i)
                if word in ABBREVIATIONS:
                    continue
                if word in SOFT_ABBREVIATIONS and not _next_non_space(text, i + 1).isupper():
                    continue
            return _joined(text[: i + 1]), text[i + 1 :].strip()
    return _joined(text), ""


def _joined(summary: str) -> str:
    """Collapse the line breaks of a wrapped first sentence into single spaces."""
    if "\n" not in summary:
        return summary.strip()
    return " ".join(line.strip() for line in summary.split("\n") if line.strip())


def _is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    """A mapping; plain dicts (nearly every schema) match before the slower ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


#: Where a local ``$ref`` may point: ``#/$defs/<name>`` or ``#/definitions/<name>``.
_DEF_TABLES = ("$defs", "definitions")
#: Keys whose list members are alternative (or joint) schemas of the same value.
_VARIANTS = ("anyOf", "oneOf", "allOf")


class _Walk:
    """One schema walk: its root (where ``$ref`` resolves), what it has read, its output.

    A definition is followed the first time a ``$ref`` within the depth limit meets it and
    never again, and no schema object is walked twice (``nodes``, by identity: a host may
    build a schema whose parts are shared), so the walk's work is bounded by the schema's
    size whatever its shape: cycles end, and a definition many parameters share is indexed
    once (docs/analysis.md §1).
    """

    __slots__ = ("enums", "nodes", "out", "root", "seen")

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.seen: set[str] = set()
        self.nodes: set[int] = set()
        self.out: list[str] = []
        self.enums: list[str] = []

    def target(self, ref: object) -> Mapping[str, Any] | None:
        """The local definition ``ref`` names, the first time it is met; else ``None``."""
        if type(ref) is not str or ref in self.seen:
            return None
        for table_key in _DEF_TABLES:
            prefix = f"#/{table_key}/"
            if ref.startswith(prefix):
                table = self.root.get(table_key)
                found = table.get(ref[len(prefix) :]) if _is_map(table) else None
                if found is not None and _is_map(found):
                    self.seen.add(ref)
                    return found
                return None
        return None

    def add_enum(self, node: Mapping[str, Any]) -> None:
        """Keep a node's non-empty string ``enum`` values (for the body, in order)."""
        values = node.get("enum")
        if type(values) is list:
            self.enums.extend(v for v in values if type(v) is str and v)


def _links(node: Mapping[str, Any]) -> bool:
    """Whether a parameter's schema has more to walk: nested, linked or alternative parts."""
    return (
        "properties" in node
        or "items" in node
        or "$ref" in node
        or "anyOf" in node
        or "oneOf" in node
        or "allOf" in node
    )


def _walk_schema(schema: Mapping[str, Any], depth: int, walk: _Walk) -> None:
    """Walk one schema node: its properties, its ``items``, its ``$ref`` and its variants."""
    if depth > 8 or id(schema) in walk.nodes:
        return
    walk.nodes.add(id(schema))
    props = schema.get("properties")
    if _is_map(props):
        append = walk.out.append
        for name, prop in props.items():
            append(name if type(name) is str else str(name))
            # Inline `_is_map`: this loop runs for every parameter of every tool.
            if type(prop) is dict or isinstance(prop, Mapping):
                desc = prop.get("description")
                if isinstance(desc, str) and desc:
                    append(desc)
                walk.add_enum(prop)
                if _links(prop):
                    _walk_schema(prop, depth + 1, walk)
    items = schema.get("items")
    if items is not None and _is_map(items):
        walk.add_enum(items)
        _walk_schema(items, depth + 1, walk)
    if depth < 8 and "$ref" in schema:  # a definition too deep to walk is not used up
        found = walk.target(schema["$ref"])
        if found is not None:
            walk.add_enum(found)  # an Enum class's values live in its definition
            _walk_schema(found, depth + 1, walk)
    for key in _VARIANTS:
        members = schema.get(key)
        if type(members) is list:
            for member in members:
                if _is_map(member):
                    walk.add_enum(member)
                    _walk_schema(member, depth + 1, walk)


def params_text(input_schema: Mapping[str, Any]) -> str:
    """Parameter names and descriptions, nested and referred-to ones too, one a line."""
    return schema_texts(input_schema)[0]


def schema_texts(input_schema: Mapping[str, Any]) -> tuple[str, str]:
    """``(params_text, enum_text)`` of a schema in one walk.

    The enum values (``"Comedy"``, ``"Family Counselor"``) are what a request names when it
    picks among fixed choices; they are indexed with the body, not the parameters (see
    docs/analysis.md and docs/quality.md for why).
    """
    walk = _Walk(input_schema)
    _walk_schema(input_schema, 0, walk)
    return "\n".join(walk.out), "\n".join(walk.enums)
