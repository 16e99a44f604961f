"""A tool's JSON Schema in the shape Gemini's ``FunctionDeclaration.parameters`` accepts.

Gemini takes an OpenAPI-style subset (its ``Schema``): upper-case type names, ``anyOf`` but
no ``oneOf`` or ``allOf``, no ``$ref``, ``$defs`` or ``$schema``, one type per schema, and
string-only enums. MCP servers send full JSON Schema (pydantic models with ``$defs``,
nullable unions as ``["string", "null"]``), and the SDK refuses or crashes on those. This
module rewrites a schema into that subset while keeping what the model needs:

- local references (``#/$defs/X``, ``#/definitions/X``, ``#``) are inlined; a reference back
  into a schema being inlined (a recursive type) is cut to an object carrying its
  description;
- ``oneOf`` becomes ``anyOf``; ``allOf`` is merged into one schema; a ``null`` member of a
  union or a type list becomes ``nullable``; ``const`` becomes a one-value enum;
- an enum of non-strings is dropped and its values are written into the description;
- every other keyword Gemini does not take is dropped.

Each change is reported as a note naming the path inside the schema, so ``toolsurface
doctor`` and tests can say what a Gemini request loses. The conversion is deterministic: the
same schema always gives the same bytes, which keeps the rendered request cache-stable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "gemini_parameters"]

#: Schemas nested deeper than this (after inlining references) are cut to their description.
MAX_DEPTH = 32

_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
# The formats Gemini documents per type; any other is dropped.
_FORMATS = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}
_NUMBERS = frozenset({"minimum", "maximum"})
_COUNTS = frozenset(
    {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
)
_PLAIN = frozenset({"description", "title", "pattern", "default", "example", "nullable"})
# Handled by the walk itself, never copied as they are.
_STRUCTURE = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "enum",
        "const",
        "format",
        "$ref",
        "$defs",
        "definitions",
    }
)
_ENUM_NOTE_MAX = 20


def gemini_parameters(schema: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """Gemini's ``parameters`` for a tool's input schema, and a note per change made.

    ``None`` means the function takes no parameters (Gemini wants ``parameters`` left out
    rather than an object without properties).

    >>> params, notes = gemini_parameters({
    ...     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ...     "type": "object",
    ...     "properties": {"city": {"type": ["string", "null"], "description": "City."}},
    ...     "required": ["city"],
    ... })
    >>> params
    {'type': 'OBJECT', 'properties': {'city': {'type': 'STRING', 'nullable': True, \
'description': 'City.'}}, 'required': ['city']}
    >>> notes
    ['$.city: type list ["string", "null"] sent as one nullable type', '$: dropped $schema']
    """
    walk = _Walk(schema)
    out = walk.node(schema, "$", 0)
    for key in ("$defs", "definitions"):
        if key in schema:
            walk.notes.append(f"$: {key} dropped (what the references name is inlined)")
    if out.get("type") not in (None, "OBJECT") or not out.get("properties"):
        if out.get("type") not in (None, "OBJECT"):
            walk.notes.append(f"$: a {out['type']} at the top is not a parameter object")
        return None, walk.notes
    out["type"] = "OBJECT"
    return out, walk.notes


class _Walk:
    """One schema's conversion: its definitions, the references being inlined, the notes."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, Any] = {}
        for key in ("definitions", "$defs"):
            found = root.get(key)
            if isinstance(found, Mapping):
                self.defs.update({f"#/{key}/{name}": s for name, s in found.items()})
        self.inlining: list[str] = []
        self.notes: list[str] = []

    def node(self, schema: Any, path: str, depth: int) -> dict[str, Any]:
        """The converted form of one schema (a mapping; anything else is dropped)."""
        if isinstance(schema, bool):
            # ``true`` accepts anything, which a schema without keywords says too.
            return {}
        if not isinstance(schema, Mapping):
            self.notes.append(f"{path}: not a schema ({type(schema).__name__}), dropped")
            return {}
        if depth > MAX_DEPTH:
            self.notes.append(f"{path}: nested deeper than {MAX_DEPTH}, cut")
            return _described({}, schema)
        ref = schema.get("$ref")
        if ref is not None:
            return self.reference(schema, ref, path, depth)
        if isinstance(schema.get("allOf"), list):
            schema = self.merge_all_of(schema, path)
        return self.plain(schema, path, depth)

    def reference(
        self, schema: Mapping[str, Any], ref: Any, path: str, depth: int
    ) -> dict[str, Any]:
        """A ``$ref`` inlined, its siblings (a description, say) taking precedence."""
        target = self.root if ref == "#" else self.defs.get(ref) if isinstance(ref, str) else None
        if not isinstance(target, Mapping):
            self.notes.append(f"{path}: reference {_short(ref)} not found, dropped")
            return _described({"type": "OBJECT"}, schema)
        if ref in self.inlining:
            self.notes.append(f"{path}: recursive reference {_short(ref)} cut")
            return _described({"type": "OBJECT"}, schema, target)
        self.notes.append(f"{path}: reference {_short(ref)} inlined")
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        merged = {**{k: v for k, v in target.items() if k not in ("$defs", "definitions")}}
        merged.update(siblings)
        self.inlining.append(ref)
        try:
            return self.node(merged, path, depth + 1)
        finally:
            self.inlining.pop()

    def merge_all_of(self, schema: Mapping[str, Any], path: str) -> dict[str, Any]:
        """``allOf`` folded into its schema: properties and required joined, first key wins."""
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        properties: dict[str, Any] = dict(merged.get("properties") or {})
        required: list[str] = list(merged.get("required") or [])
        for i, part in enumerate(schema["allOf"]):
            part = self.resolved(part)
            if not isinstance(part, Mapping):
                self.notes.append(f"{path}.allOf[{i}]: not a schema, dropped")
                continue
            properties.update(part.get("properties") or {})
            required += [r for r in part.get("required") or [] if r not in required]
            for key, value in part.items():
                if key not in ("properties", "required"):
                    merged.setdefault(key, value)
        if properties:
            merged["properties"] = properties
        if required:
            merged["required"] = required
        self.notes.append(f"{path}: allOf merged into one schema")
        return merged

    def resolved(self, schema: Any) -> Any:
        """``schema`` itself, or what its local ``$ref`` names (for merging ``allOf``)."""
        if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            target = self.root if schema["$ref"] == "#" else self.defs.get(schema["$ref"])
            if isinstance(target, Mapping) and schema["$ref"] not in self.inlining:
                return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def plain(self, schema: Mapping[str, Any], path: str, depth: int) -> dict[str, Any]:
        """A schema without ``$ref`` or ``allOf``, converted keyword by keyword."""
        out: dict[str, Any] = {}
        nullable = self.types(schema, path, out)
        if self.union(schema, path, depth, out):
            nullable = True
        if nullable:
            out["nullable"] = True
        self.choices(schema, path, out)
        if isinstance(schema.get("properties"), Mapping):
            out["properties"] = {
                str(name): self.node(sub, f"{path}.{name}", depth + 1)
                for name, sub in schema["properties"].items()
            }
            out.setdefault("type", "OBJECT")
        required = schema.get("required")
        if isinstance(required, list) and "properties" in out:
            kept = [r for r in required if isinstance(r, str) and r in out["properties"]]
            if kept:
                out["required"] = kept
        self.items(schema, path, depth, out)
        self.scalars(schema, path, out)
        return out

    def types(self, schema: Mapping[str, Any], path: str, out: dict[str, Any]) -> bool:
        """Set ``out``'s one type; a list of types becomes ``anyOf``; whether ``null`` was one."""
        declared = schema.get("type")
        if declared is None:
            return False
        names = declared if isinstance(declared, list) else [declared]
        mapped = [_TYPES.get(n.lower()) if isinstance(n, str) else None for n in names]
        if None in mapped:
            self.notes.append(f"{path}: unknown type {_short(declared)} dropped")
            mapped = [m for m in mapped if m is not None]
        nullable = "NULL" in mapped and len(mapped) > 1
        kinds = list(dict.fromkeys(m for m in mapped if m != "NULL" or len(mapped) == 1))
        if len(kinds) == 1:
            out["type"] = kinds[0]
            if isinstance(declared, list):
                self.notes.append(f"{path}: type list {_short(declared)} sent as one nullable type")
        elif kinds:
            self.notes.append(f"{path}: type list {_short(declared)} sent as anyOf")
            out["anyOf"] = [{"type": k} for k in kinds]
        return nullable

    def union(self, schema: Mapping[str, Any], path: str, depth: int, out: dict[str, Any]) -> bool:
        """``anyOf``/``oneOf`` as ``anyOf``, one member inlined; whether a member was ``null``."""
        nullable = False
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if not isinstance(members, list):
                continue
            if key == "oneOf":
                self.notes.append(f"{path}: oneOf sent as anyOf")
            kept: list[dict[str, Any]] = []
            for i, member in enumerate(members):
                converted = self.node(member, f"{path}.{key}[{i}]", depth + 1)
                if converted.get("type") == "NULL" and len(converted) == 1:
                    nullable = True
                elif converted not in kept:
                    kept.append(converted)
            if len(kept) == 1 and "type" not in out:
                for k, v in kept[0].items():
                    out.setdefault(k, v)
            elif kept:
                out["anyOf"] = out.get("anyOf", []) + kept
        return nullable

    def choices(self, schema: Mapping[str, Any], path: str, out: dict[str, Any]) -> None:
        """``enum`` (strings only) and ``const`` (as a one-value enum)."""
        values: Any = schema.get("enum")
        if "const" in schema:
            values = [schema["const"]]
            self.notes.append(f"{path}: const sent as a one-value enum")
        if not isinstance(values, list):
            return
        if values and all(isinstance(v, str) for v in values):
            out["enum"] = list(values)
            out.setdefault("type", "STRING")
            return
        shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:_ENUM_NOTE_MAX])
        more = ", ..." if len(values) > _ENUM_NOTE_MAX else ""
        described = str(schema.get("description") or "").rstrip()
        lead = f"{described} " if described else ""
        out["description"] = f"{lead}(one of: {shown}{more})"
        self.notes.append(f"{path}: enum of non-strings written into the description")

    def items(self, schema: Mapping[str, Any], path: str, depth: int, out: dict[str, Any]) -> None:
        """``items``: one schema; a tuple form keeps its first member."""
        items = schema.get("items")
        if isinstance(items, list):
            self.notes.append(f"{path}: tuple items sent as the first item's schema")
            items = items[0] if items else None
        if isinstance(items, (Mapping, bool)):
            out["items"] = self.node(items, f"{path}[]", depth + 1)
            out.setdefault("type", "ARRAY")

    def scalars(self, schema: Mapping[str, Any], path: str, out: dict[str, Any]) -> None:
        """Plain keywords Gemini takes; every other one dropped with a note."""
        for key, value in schema.items():
            if key in _STRUCTURE or key in out:
                continue
            if _takes(key, value):
                out[key] = value
            else:
                self.notes.append(f"{path}: dropped {key}")
        fmt = schema.get("format")
        if fmt is not None and "format" not in out:
            if isinstance(fmt, str) and fmt in _FORMATS.get(out.get("type", ""), ()):
                out["format"] = fmt
            else:
                self.notes.append(f"{path}: format {_short(fmt)} dropped")


def _takes(key: str, value: Any) -> bool:
    """Whether Gemini takes ``key`` as it is, with a value of the JSON type it expects."""
    if key in _NUMBERS:
        return _is_number(value)
    if key in _COUNTS:
        return isinstance(value, int) and not isinstance(value, bool)
    if key == "nullable":
        return isinstance(value, bool)
    if key in ("description", "title", "pattern"):
        return isinstance(value, str)
    return key in _PLAIN


def _described(out: dict[str, Any], *sources: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` with the first description found in ``sources``."""
    for source in sources:
        text = source.get("description")
        if isinstance(text, str) and text:
            out["description"] = text
            break
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
