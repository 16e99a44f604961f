"""LangChain tools <-> toolsurface tools: conversion both ways, and registration.

:func:`to_toolsurface` / :func:`convert_tools` turn LangChain tools (``BaseTool``,
``StructuredTool``, ``@tool`` functions, plain callables) into toolsurface
:class:`~toolsurface.Tool` definitions, keeping the map back to the LangChain tool;
:func:`from_toolsurface` goes the other way (a catalogue entry as a ``StructuredTool``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as as_langchain_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.errors import ToolDefinitionError
from toolsurface.models import Tool
from toolsurface.registry import ToolRegistry

__all__ = [
    "ConvertedTools",
    "LangChainToolLike",
    "as_base_tool",
    "convert_tools",
    "from_toolsurface",
    "register_langchain_tools",
    "to_toolsurface",
]

#: What the converter takes: a LangChain tool, or a function ``@tool`` would take.
LangChainToolLike: TypeAlias = "BaseTool | Callable[..., Any]"
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def as_base_tool(tool: LangChainToolLike, *, where: str = "") -> BaseTool:
    """``tool`` as a LangChain ``BaseTool``: returned as is, or a callable wrapped by ``@tool``.

    A callable needs a docstring (LangChain's rule for a description); anything else is a
    ``TypeError`` naming what was given and where.
    """
    if isinstance(tool, BaseTool):
        return tool
    at = f" ({where})" if where else ""
    if not callable(tool):
        raise TypeError(f"expected a LangChain tool or a function{at}, got {type(tool).__name__}")
    label = getattr(tool, "__name__", type(tool).__name__)
    try:
        wrapped = as_langchain_tool(tool)
    except ValueError as exc:  # LangChain refuses a function without a docstring
        raise LangChainAdapterError(f"function {label!r}{at}: {exc}") from exc
    if not isinstance(wrapped, BaseTool):  # pragma: no cover - @tool on a callable is a tool
        raise TypeError(f"@tool did not make a tool of {label!r}{at}")
    return wrapped


def _parameters(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of the arguments the model sends: what LangChain binds to a model.

    ``convert_to_openai_tool`` reads ``tool_call_schema``, which leaves out injected
    arguments (``InjectedToolCallId``, ``ToolRuntime``, state and store): the model never
    sends those, so they must not be indexed or advertised.
    """
    try:
        function = convert_to_openai_tool(tool)["function"]
    except Exception as exc:  # LangChain raises several types for schemas it cannot read
        raise LangChainAdapterError(
            f"LangChain tool {tool.name!r}: its argument schema cannot be read as JSON "
            f"Schema ({type(exc).__name__}: {exc})"
        ) from exc
    parameters = function.get("parameters")
    return dict(parameters) if isinstance(parameters, Mapping) else dict(_EMPTY_SCHEMA)


def to_toolsurface(
    tool: LangChainToolLike, *, group: str | None = None, search_hint: str = ""
) -> Tool:
    """A toolsurface :class:`~toolsurface.Tool` for a LangChain tool: name, description, schema.

    The schema is the one the model is sent (injected arguments left out). A name outside
    MCP's rule (1 to 128 of letters, digits, ``_``, ``-``, ``.``), or any other field
    toolsurface refuses, raises :class:`~toolsurface.ToolDefinitionError` naming the tool.

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str, days: int = 1) -> str:
    ...     '''Get the weather forecast for a city.'''
    ...     return "sunny"
    >>> converted = to_toolsurface(get_weather, group="weather")
    >>> converted.name, converted.group, converted.input_schema["required"]
    ('get_weather', 'weather', ['city'])
    >>> sorted(converted.input_schema["properties"])
    ['city', 'days']
    """
    base = as_base_tool(tool)
    name = base.name
    description = base.description if isinstance(base.description, str) else ""
    try:
        return Tool(
            name=name,
            description=description,
            input_schema=_parameters(base),
            group=group,
            search_hint=search_hint,
        )
    except ToolDefinitionError as exc:
        said = "; ".join(f"{field or 'tool'}: {reason}" for field, reason in exc.problems)
        raise ToolDefinitionError(
            f"LangChain tool {name!r}: {said or exc}",
            tool=name,
            field=exc.field,
            problems=exc.problems,
        ) from None


@dataclass(frozen=True)
class ConvertedTools:
    """LangChain tools converted for toolsurface, and the map back to each LangChain tool."""

    tools: tuple[Tool, ...]
    by_name: Mapping[str, BaseTool]

    def __getitem__(self, name: str) -> BaseTool:
        """The LangChain tool behind a toolsurface name; an unknown name raises ``KeyError``."""
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"no LangChain tool named {name!r} was converted") from None

    def __len__(self) -> int:
        """How many tools were converted."""
        return len(self.tools)


def convert_tools(
    tools: Iterable[LangChainToolLike],
    *,
    group: str | Callable[[BaseTool], str | None] | None = None,
) -> ConvertedTools:
    """Convert many LangChain tools; ``group`` is one group for all, or a function of the tool.

    Two tools of one name are refused (``LangChainAdapterError`` naming both items): the
    model calls tools by name, so one of them could never run.

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def read_file(path: str) -> str:
    ...     '''Read a text file of the workspace.'''
    ...     return ""
    >>> converted = convert_tools([read_file], group="files")
    >>> converted["read_file"] is read_file, converted.tools[0].group
    (True, 'files')
    """
    out: list[Tool] = []
    by_name: dict[str, BaseTool] = {}
    place: dict[str, int] = {}
    for i, item in enumerate(tools):
        base = as_base_tool(item, where=f"item {i}")
        if base.name in place:
            raise LangChainAdapterError(
                f"two LangChain tools are named {base.name!r} (items {place[base.name]} and "
                f"{i}): the model calls tools by name, so one of them could never run"
            )
        chosen = group(base) if callable(group) else group
        out.append(to_toolsurface(base, group=chosen))
        by_name[base.name] = base
        place[base.name] = i
    return ConvertedTools(tuple(out), by_name)


def register_langchain_tools(
    registry: ToolRegistry,
    tools: Iterable[LangChainToolLike],
    *,
    group: str | Callable[[BaseTool], str | None] | None = None,
    replace: bool = False,
) -> ConvertedTools:
    """Convert LangChain tools and register them in ``registry`` (all or none, as a batch)."""
    converted = convert_tools(tools, group=group)
    registry.register_many(converted.tools, replace=replace, where="LangChain tools")
    return converted


def from_toolsurface(
    tool: Tool,
    func: Callable[..., Any] | None = None,
    *,
    coroutine: Callable[..., Awaitable[Any]] | None = None,
) -> StructuredTool:
    """A LangChain ``StructuredTool`` with a toolsurface tool's name, description and schema.

    For a host whose tools come from a catalogue (an MCP ``tools/list``, a saved file): the
    JSON Schema is bound to the model as it is, and ``func`` (or ``coroutine``) receives the
    model's arguments as keyword arguments.

    >>> from toolsurface import Tool
    >>> t = Tool(name="ping", description="Ping a host.", input_schema={
    ...     "type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]})
    >>> ping = from_toolsurface(t, lambda host: f"{host} is up")
    >>> ping.invoke({"host": "db1"})
    'db1 is up'
    """
    if func is None and coroutine is None:
        raise TypeError(f"from_toolsurface({tool.name!r}): give func, coroutine or both")
    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.input_schema,  # a JSON Schema dict: LangChain sends it as is
        func=func,
        coroutine=coroutine,
    )
