"""Read tool catalogues in the formats hosts have: MCP, OpenAI, Anthropic, JSON Lines.

The format is detected from the data. A file that fits none gets a
:class:`~toolsurface.errors.CatalogueFormatError` saying what was expected and which item
or line broke it, so nothing is dropped in silence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from toolsurface.errors import CatalogueFormatError, ToolDefinitionError
from toolsurface.models import Tool, tool_from_mapping

__all__ = [
    "FORMATS",
    "demo_catalogue",
    "detect_format",
    "load_catalogue",
    "parse_catalogue",
    "tool_from_any",
]

#: The formats the reader knows, by the name it reports.
FORMATS = {
    "mcp": 'an MCP tools/list result: {"tools": [{"name", "description", "inputSchema"}]}',
    "openai-chat": 'an OpenAI Chat Completions tools array: [{"type": "function", '
    '"function": {"name", "description", "parameters"}}]',
    "openai-responses": 'an OpenAI Responses tools array: [{"type": "function", "name", '
    '"description", "parameters"}]',
    "anthropic": 'an Anthropic tools array: [{"name", "description", "input_schema"}]',
    "gemini": 'a Gemini tools object: {"functionDeclarations": [{"name", "description", '
    '"parameters"}]}',
    "server-records": 'records with a server: [{"server", "name", "description", '
    '"input_schema"}], named server__name',
    "jsonl": "JSON Lines, one tool a line in any of the shapes above",
}
_EXPECTED = "expected " + "; or ".join(FORMATS.values())


def _schema(value: Any) -> Any:
    """Normalise a parameters schema: BFCL's ``"type": "dict"`` reads as an object."""
    if isinstance(value, Mapping) and value.get("type") == "dict":
        value = {**value, "type": "object"}
    return value if value is not None else {"type": "object", "properties": {}}


def _item_shape(item: Mapping[str, Any]) -> str:
    if item.get("type") == "function" and isinstance(item.get("function"), Mapping):
        return "openai-chat"
    if item.get("type") == "function" and "name" in item:
        return "openai-responses"
    if "server" in item and "name" in item:
        return "server-records"
    if "inputSchema" in item:
        return "mcp"
    if "input_schema" in item:
        return "anthropic"
    if "parameters" in item:
        return "gemini"
    if "name" in item:
        return "anthropic"
    return ""


def tool_from_any(item: Any, *, where: str) -> Tool:
    """One tool from an item of any known shape; errors name the item and the field."""
    if not isinstance(item, Mapping):
        raise CatalogueFormatError(
            f"{where}: a tool must be a JSON object, got {type(item).__name__}"
        )
    shape = _item_shape(item)
    if shape == "openai-chat":
        fn = item["function"]
        data = {
            "name": fn.get("name"),
            "description": fn.get("description") or "",
            "input_schema": _schema(fn.get("parameters")),
        }
    elif shape == "openai-responses" or shape == "gemini":
        data = {
            "name": item.get("name"),
            "description": item.get("description") or "",
            "input_schema": _schema(item.get("parameters")),
        }
    elif shape == "server-records":
        data = {
            "name": f"{item['server']}__{item['name']}",
            "description": item.get("description") or "",
            "input_schema": _schema(item.get("input_schema", item.get("inputSchema"))),
        }
    elif shape in ("mcp", "anthropic"):
        data = {
            "name": item.get("name"),
            "description": item.get("description") or "",
            "input_schema": _schema(item.get("inputSchema", item.get("input_schema"))),
        }
    else:
        raise CatalogueFormatError(f"{where}: not a tool definition (no 'name'); {_EXPECTED}")
    for key in ("search_hint", "group", "always_load"):
        if key in item:
            data[key] = item[key]
    try:
        return tool_from_mapping(data, where=where)
    except ToolDefinitionError as exc:
        raise CatalogueFormatError(str(exc)) from None


def detect_format(data: Any) -> str:
    """The name of the format ``data`` (parsed JSON) is in; raises if it fits none."""
    if isinstance(data, Mapping):
        if isinstance(data.get("result"), Mapping) and "tools" in data["result"]:
            return "mcp"
        if isinstance(data.get("tools"), list):
            return "mcp"
        if isinstance(data.get("functionDeclarations"), list):
            return "gemini"
        raise CatalogueFormatError(f"a JSON object without a 'tools' list; {_EXPECTED}")
    if isinstance(data, list):
        if not data:
            return "anthropic"
        first = data[0]
        shape = _item_shape(first) if isinstance(first, Mapping) else ""
        if not shape:
            raise CatalogueFormatError(f"item 0 is not a tool definition; {_EXPECTED}")
        return shape
    raise CatalogueFormatError(f"a JSON {type(data).__name__}; {_EXPECTED}")


def parse_catalogue(text: str, *, source: str = "catalogue") -> tuple[str, list[Tool]]:
    """Parse a catalogue's text: its format's name and its tools, in file order."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        raise CatalogueFormatError(f"{source} is empty; {_EXPECTED}")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as whole_error:
        lines = stripped.splitlines()
        if len(lines) < 2:
            raise CatalogueFormatError(
                f"{source}: not JSON ({whole_error.msg} at line {whole_error.lineno}); {_EXPECTED}"
            ) from None
        tools: list[Tool] = []
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogueFormatError(
                    f"{source} line {lineno}: not JSON ({exc.msg}); {_EXPECTED}"
                ) from None
            tools.append(tool_from_any(item, where=f"{source} line {lineno}"))
        return "jsonl", tools
    fmt = detect_format(data)
    if isinstance(data, Mapping):
        items = data.get("functionDeclarations")
        if items is None:
            items = data["result"]["tools"] if "result" in data else data["tools"]
    else:
        items = data
    if not isinstance(items, list):
        raise CatalogueFormatError(f"{source}: the tools must be a list; {_EXPECTED}")
    return fmt, [tool_from_any(item, where=f"{source} item {i}") for i, item in enumerate(items)]


def load_catalogue(path: str | Path) -> tuple[str, list[Tool]]:
    """Read a catalogue file: its format's name and its tools."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogueFormatError(
            f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_catalogue(text, source=str(p))


def demo_catalogue() -> list[Tool]:
    """The bundled demo catalogue: tools in the style of a dozen MCP servers."""
    text = (
        resources.files("toolsurface")
        .joinpath("data")
        .joinpath("demo_catalogue.json")
        .read_text(encoding="utf-8")
    )
    return parse_catalogue(text, source="demo_catalogue.json")[1]
