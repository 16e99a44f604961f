"""Read tool catalogues in the formats hosts have: MCP, OpenAI, Anthropic, JSON Lines.

The format is detected from the data. A file that fits none gets a
:class:`~toolsurface.errors.CatalogueFormatError` saying what was expected and which item
or line broke it, so nothing is dropped in silence.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from toolsurface._internal.gcpause import gc_paused
from toolsurface._internal.json_check import JsonTextError, json_lines, json_type, loads
from toolsurface.errors import CatalogueFormatError, ToolDefinitionError
from toolsurface.models import Tool, tool_from_mapping

__all__ = [
    "FORMATS",
    "demo_catalogue",
    "detect_format",
    "load_catalogue",
    "parse_catalogue",
    "record_shape",
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
    '"parametersJsonSchema" or "parameters"}]}',
    "server-records": 'records with a server: [{"server", "name", "description", '
    '"input_schema"}], named server__name',
    "jsonl": "JSON Lines, one tool a line in any of the shapes above",
}
_EXPECTED = "expected " + "; or ".join(FORMATS.values())


#: Gemini's ``Type`` names, which its own API writes in capitals.
_GEMINI_TYPES = frozenset({"OBJECT", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "NULL"})
#: How deep the Gemini type walk goes; registration refuses deeper schemas anyway.
_SCHEMA_WALK_DEPTH = 256


def _schema(value: Any) -> Any:
    """Normalise a parameters schema: BFCL's ``"type": "dict"`` reads as an object."""
    if isinstance(value, Mapping) and value.get("type") == "dict":
        value = {**value, "type": "object"}
    return value if value is not None else {"type": "object", "properties": {}}


def _gemini_schema(value: Any) -> Any:
    """A Gemini schema with its capitalised type names (``"OBJECT"``) in JSON Schema's case.

    A copy, walked without recursion so that a hostile depth cannot exhaust the stack; the
    walk stops at ``_SCHEMA_WALK_DEPTH`` levels, where registration refuses the schema.
    """

    def fix(node: Any) -> Any:
        if isinstance(node, Mapping):
            out = dict(node)
            kind = out.get("type")
            if isinstance(kind, str) and kind in _GEMINI_TYPES:
                out["type"] = kind.lower()
            return out
        if isinstance(node, list):
            return list(node)
        return node

    root = fix(_schema(value))
    if not isinstance(root, dict):
        return root  # not a schema: registration refuses it, naming the field
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth >= _SCHEMA_WALK_DEPTH:
            continue
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for key in keys:
            child = node[key]
            if isinstance(child, (Mapping, list)):
                node[key] = fix(child)
                stack.append((node[key], depth + 1))
    return root


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
    if "parameters" in item or "parametersJsonSchema" in item:
        return "gemini"
    if "name" in item:
        return "anthropic"
    return ""


def read_only_hint(annotations: Any, *, where: str) -> bool | None:
    """MCP's ``annotations.readOnlyHint`` of a tool item: a bool, or None when not given.

    Anything else is refused, naming the item and the field, so a misspelt catalogue does
    not quietly lose what its servers said.
    """
    if annotations is None:
        return None
    if not isinstance(annotations, Mapping):
        raise CatalogueFormatError(
            f"{where}: field 'annotations' must be an object, got {json_type(annotations)}"
        )
    hint = annotations.get("readOnlyHint")
    if hint is None or isinstance(hint, bool):
        return hint
    raise CatalogueFormatError(
        f"{where}: field 'annotations.readOnlyHint' must be true or false, got {json_type(hint)}"
    )


def _text(item: Mapping[str, Any], key: str, *, where: str, field: str = "") -> str:
    """``item[key]`` as text: a string as it is, absent or null as "", anything else refused.

    A number or an object is refused rather than turned into text: ``str(123)`` would make a
    tool of a name or description the file never had.
    """
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CatalogueFormatError(
            f"{where}: field {field or key!r} must be a string, got {json_type(value)}"
        )
    return value


#: A tool's flags: only JSON ``true`` and ``false`` are read (``read_only`` may be null, for
#: unsaid). The tool model alone would take ``"yes"``, ``"off"`` or ``0.0`` as a bool.
_FLAGS = ("always_load", "read_only")


def _is_flag(key: str, value: Any) -> bool:
    return isinstance(value, bool) or (key == "read_only" and value is None)


def tool_from_any(item: Any, *, where: str) -> Tool:
    """One tool from an item of any known shape; errors name the item and the field."""
    if not isinstance(item, Mapping):
        raise CatalogueFormatError(f"{where}: a tool must be a JSON object, got {json_type(item)}")
    shape = _item_shape(item)
    if shape == "openai-chat":
        fn = item["function"]
        data = {
            "name": fn.get("name"),
            "description": _text(fn, "description", where=where, field="function.description"),
            "input_schema": _schema(fn.get("parameters")),
        }
    elif shape == "openai-responses" or shape == "gemini":
        # Gemini's JSON Schema field (what render("gemini") sends) or its OpenAPI-style one.
        params = item.get("parametersJsonSchema", item.get("parameters"))
        data = {
            "name": item.get("name"),
            "description": _text(item, "description", where=where),
            "input_schema": _gemini_schema(params) if shape == "gemini" else _schema(params),
        }
    elif shape == "server-records":
        server, name = (_text(item, key, where=where) for key in ("server", "name"))
        if not server or not name:
            empty = "server" if not server else "name"
            raise CatalogueFormatError(f"{where}: field {empty!r} must be a non-empty string")
        data = {
            "name": f"{server}__{name}",
            "description": _text(item, "description", where=where),
            "input_schema": _schema(item.get("input_schema", item.get("inputSchema"))),
        }
    elif shape in ("mcp", "anthropic"):
        data = {
            "name": item.get("name"),
            "description": _text(item, "description", where=where),
            "input_schema": _schema(item.get("inputSchema", item.get("input_schema"))),
        }
    else:
        raise CatalogueFormatError(f"{where}: not a tool definition (no 'name'); {_EXPECTED}")
    if shape in ("server-records", "mcp", "anthropic"):
        hint = read_only_hint(item.get("annotations"), where=where)
        if hint is not None:
            data["read_only"] = hint
    for key in ("search_hint", "group", "always_load", "read_only"):
        if key in item:
            data[key] = item[key]
    for key in _FLAGS:
        if key in data and not _is_flag(key, data[key]):
            raise CatalogueFormatError(
                f"{where}: field {key!r} must be true or false, got {json_type(data[key])}"
            )
    try:
        return tool_from_mapping(data, where=where)
    except ToolDefinitionError as exc:
        raise CatalogueFormatError(str(exc)) from None


def _is_gemini_wrapper(item: Any) -> bool:
    """Whether ``item`` is a Gemini tool: ``{"functionDeclarations": [...]}``, no name."""
    return (
        isinstance(item, Mapping)
        and isinstance(item.get("functionDeclarations"), list)
        and "name" not in item
    )


def _is_gemini_builtin(item: Any) -> bool:
    """Whether ``item`` is one of Gemini's built-in tools (``{"googleSearch": {}}``, say).

    It has no function to index; a Gemini tools array lists such entries beside its
    ``functionDeclarations``, and the reader passes over them.
    """
    return (
        isinstance(item, Mapping)
        and len(item) == 1
        and "name" not in item
        and "functionDeclarations" not in item
        and isinstance(next(iter(item.values())), Mapping)
    )


def _is_gemini_list(items: list[Any]) -> bool:
    """A Gemini tools array: wrappers of function declarations, maybe beside built-ins.

    An entry that is neither (a misspelt key, say) does not make the array another format's
    unless it looks like a tool of one: the reader then names that entry, not entry 0.
    """
    return any(map(_is_gemini_wrapper, items)) and all(
        _is_gemini_wrapper(t)
        or _is_gemini_builtin(t)
        or not (isinstance(t, Mapping) and _item_shape(t))
        for t in items
    )


#: What an entry of a Gemini tools array must be.
_GEMINI_ENTRY = (
    'expected a Gemini tool: {"functionDeclarations": [...]} or one built-in tool such as '
    '{"googleSearch": {}}'
)
#: An entry's keys named in an error: at most this many, each cut to this many characters.
_KEYS_SHOWN, _KEY_CHARS = 5, 40


def _gemini_entry_problem(item: Any) -> str:
    """What is wrong with an entry of a Gemini tools array that is no Gemini tool."""
    if not isinstance(item, Mapping):
        return f"a Gemini tool must be a JSON object, got {json_type(item)}"
    if "functionDeclarations" in item:
        decls = item["functionDeclarations"]
        return f"field 'functionDeclarations' must be a list, got {json_type(decls)}"
    keys = [str(k) for k in item]
    if not keys:
        return "an empty object"
    if len(keys) == 1:
        close = difflib.get_close_matches(keys[0], ["functionDeclarations"], n=1, cutoff=0.8)
        if close:
            return f"unknown key {_cut(keys[0])!r} (did you mean 'functionDeclarations'?)"
        value = item[keys[0]]
        return f"built-in tool {_cut(keys[0])!r} must be an object, got {json_type(value)}"
    shown = ", ".join(repr(_cut(k)) for k in keys[:_KEYS_SHOWN])
    more = ", ..." if len(keys) > _KEYS_SHOWN else ""
    return (
        f"no 'functionDeclarations' list, and a built-in tool has one key, not {len(keys)} "
        f"({shown}{more})"
    )


def _cut(key: str) -> str:
    return key if len(key) <= _KEY_CHARS else key[:_KEY_CHARS] + "..."


def detect_format(data: Any) -> str:
    """The name of the format ``data`` (parsed JSON) is in; raises if it fits none."""
    if isinstance(data, Mapping):
        if isinstance(data.get("result"), Mapping) and "tools" in data["result"]:
            return "mcp"
        if isinstance(data.get("tools"), list):
            return "gemini" if _is_gemini_list(data["tools"]) else "mcp"
        if isinstance(data.get("functionDeclarations"), list):
            return "gemini"
        if _item_shape(data):
            return "jsonl"
        raise CatalogueFormatError(f"a JSON object without a 'tools' list; {_EXPECTED}")
    if isinstance(data, list):
        if not data:
            return "anthropic"
        if _is_gemini_list(data):
            return "gemini"
        first = data[0]
        shape = _item_shape(first) if isinstance(first, Mapping) else ""
        if not shape:
            raise CatalogueFormatError(f"item 0 is not a tool definition; {_EXPECTED}")
        return shape
    raise CatalogueFormatError(f"a JSON {json_type(data)}; {_EXPECTED}")


def _loads(text: str, where: str) -> Any:
    """Standard JSON (``json_check.loads``): what it cannot read is the file's fault, named.

    Nesting too deep for the parser, an integer past Python's digit limit, ``NaN`` or an
    infinity (which Python's json accepts, and nothing else does) are a
    :class:`CatalogueFormatError` naming ``where``; a syntax error stays a
    ``json.JSONDecodeError`` for the caller to place.
    """
    try:
        return loads(text)
    except JsonTextError as exc:
        raise CatalogueFormatError(f"{where}: {exc}") from None


def _items(data: Any, fmt: str, source: str) -> list[tuple[str, Any]]:
    """The tool items of parsed JSON in format ``fmt``, each with where it is.

    The list is found as :func:`detect_format` found the format; in a Gemini list the
    wrappers are unpacked and the built-in tools (``{"googleSearch": {}}``) passed over.
    """
    if isinstance(data, Mapping):
        result = data.get("result")
        if isinstance(result, Mapping) and "tools" in result:
            raw, label = result["tools"], "result.tools"
        elif isinstance(data.get("tools"), list):
            raw, label = data["tools"], "tools"
        else:
            raw, label = data.get("functionDeclarations"), "functionDeclarations"
    else:
        raw, label = data, ""
    if not isinstance(raw, list):
        raise CatalogueFormatError(f"{source}: the tools must be a list; {_EXPECTED}")
    # A Gemini tools array (not a list of bare function declarations): each entry a tool.
    gemini_array = fmt == "gemini" and _is_gemini_list(raw)
    out: list[tuple[str, Any]] = []
    for i, item in enumerate(raw):
        at = f"{source} {label}[{i}]" if label else f"{source} item {i}"
        if not gemini_array:
            out.append((at, item))
        elif _is_gemini_wrapper(item):
            decls = item["functionDeclarations"]
            out.extend((f"{at}.functionDeclarations[{j}]", d) for j, d in enumerate(decls))
        elif not _is_gemini_builtin(item):
            raise CatalogueFormatError(f"{at}: {_gemini_entry_problem(item)}; {_GEMINI_ENTRY}")
    return out


def _unique(tools: list[Tool], wheres: list[str]) -> list[Tool]:
    """``tools`` if their names are unique; else an error naming both places of a repeat."""
    first: dict[str, int] = {}
    for i, tool in enumerate(tools):
        j = first.setdefault(tool.name, i)
        if j != i:
            raise CatalogueFormatError(
                f"{wheres[i]}: tool {tool.name!r} is defined twice, first at {wheres[j]}; "
                "tool names must be unique"
            )
    return tools


def parse_catalogue(text: str, *, source: str = "catalogue") -> tuple[str, list[Tool]]:
    """Parse a catalogue's text: its format's name and its tools, in file order.

    A JSON document is read whole; text that is not one document but whose first line is
    JSON on its own is read as JSON Lines. Errors name the line (and column) or the item.
    The cyclic garbage collector is paused meanwhile (``_internal/gcpause.py``).
    """
    with gc_paused():
        return _parse_catalogue(text, source)


def _json_text(text: str) -> str:
    r"""``text`` for the JSON parser, any whitespace at its ends let through, not only JSON's.

    Each character stays at its place, so that an error's line and column are the file's:
    leading whitespace is turned into spaces, its ``"\n"`` kept; trailing whitespace is cut.
    """
    body = text.rstrip()
    lead = len(body) - len(body.lstrip())
    if not body[:lead].strip(" \t\r\n"):  # none, or JSON's own: the parser skips it
        return body
    return "".join(c if c == "\n" else " " for c in body[:lead]) + body[lead:]


def _parse_catalogue(text: str, source: str) -> tuple[str, list[Tool]]:
    body = text.lstrip("\ufeff")
    if not body.strip():
        raise CatalogueFormatError(f"{source} is empty; {_EXPECTED}")
    try:
        data = _loads(_json_text(body), source)
    except json.JSONDecodeError as whole_error:
        lines = json_lines(body)
        try:
            loads(_json_text(next(line for line in lines if line.strip())))
        except JsonTextError:
            pass  # a JSON line that is not standard JSON: the line's own read names it
        except json.JSONDecodeError:
            # Not JSON Lines either: the document's own error says where it broke.
            raise CatalogueFormatError(
                f"{source}: not JSON ({whole_error.msg} at line {whole_error.lineno} "
                f"column {whole_error.colno}); {_EXPECTED}"
            ) from None
        tools: list[Tool] = []
        wheres: list[str] = []
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{source} line {lineno}"
            try:
                item = _loads(_json_text(line), where)
            except json.JSONDecodeError as exc:
                raise CatalogueFormatError(
                    f"{where}: not JSON ({exc.msg} at column {exc.colno}); {_EXPECTED}"
                ) from None
            tools.append(tool_from_any(item, where=where))
            wheres.append(where)
        return "jsonl", _unique(tools, wheres)
    try:
        fmt = detect_format(data)
    except CatalogueFormatError as exc:
        raise CatalogueFormatError(f"{source}: {exc}") from None
    if fmt == "jsonl":  # one line of JSON Lines: a single tool, on the file's first line
        lead = len(body) - len(body.lstrip())
        where = f"{source} line {body.count(chr(10), 0, lead) + 1}"
        return fmt, [tool_from_any(data, where=where)]
    located = _items(data, fmt, source)
    tools = [tool_from_any(item, where=where) for where, item in located]
    return fmt, _unique(tools, [where for where, _ in located])


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


def record_shape(path: str | Path) -> str:
    """The shape of a catalogue file's tool records: its format's, or its lines' if alike.

    For JSON Lines, the shape all its lines share (``"jsonl"`` when they differ): so JSON
    Lines of server records (``{"server", "name", ...}`` a line) are server records,
    as the same records in one JSON array are. For a file :func:`load_catalogue` reads
    (its records are not made into tools again); another may raise.
    """
    body = Path(path).read_text(encoding="utf-8").lstrip("\ufeff")
    try:  # one JSON document: a format's list or object, or one tool over one or more lines
        items = [_loads(_json_text(body), str(path))]
    except json.JSONDecodeError:
        items = [_loads(_json_text(line), str(path)) for line in json_lines(body) if line.strip()]
    else:
        fmt = detect_format(items[0])
        if fmt != "jsonl":
            return fmt
    shapes = {_item_shape(item) if isinstance(item, Mapping) else "" for item in items}
    return shapes.pop() if len(shapes) == 1 and "" not in shapes else "jsonl"


def demo_catalogue() -> list[Tool]:
    """The bundled demo catalogue: tools in the style of a dozen MCP servers."""
    text = (
        resources.files("toolsurface")
        .joinpath("data")
        .joinpath("demo_catalogue.json")
        .read_text(encoding="utf-8")
    )
    return parse_catalogue(text, source="demo_catalogue.json")[1]
