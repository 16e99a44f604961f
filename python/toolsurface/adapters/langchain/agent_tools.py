"""The agent's own tools as a registry: what the one-line middleware builds on its first call.

``ToolSurfaceMiddleware()`` with no tool list reads the tools ``create_agent`` gave the model
request and makes of them an :class:`AgentTools`: a :class:`~toolsurface.ToolRegistry` with
groups and ``ToolSearch``, the map back to each LangChain tool, and the tools it could not
take (sent and run as they are). Its ``key`` is the identity of the tools, so a changed list
builds a new one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from langchain_core.tools import BaseTool

from toolsurface.adapters.langchain.convert import to_toolsurface
from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.errors import ToolDefinitionError
from toolsurface.models import Tool
from toolsurface.registry import ToolRegistry
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.tools.toolsearch import tool_search_tool

__all__ = [
    "DEFAULT_MAX_TOOLS",
    "DEFAULT_WINDOW_TOKENS",
    "AgentTools",
    "GroupRule",
    "default_limits",
    "prefix_group",
    "tools_key",
]

_log = logging.getLogger("toolsurface.adapters.langchain")

#: The window assumed for a model whose LangChain profile does not give ``max_input_tokens``.
DEFAULT_WINDOW_TOKENS = 128_000
#: The count limit of the strictest provider (OpenAI), for a model of unknown provider.
DEFAULT_MAX_TOOLS = 128

#: A tool's group: one name for all, a function of the LangChain tool, or ``None``
#: for the name-prefix rule (:func:`prefix_group`).
GroupRule: TypeAlias = "str | Callable[[BaseTool], str | None] | None"


def prefix_group(tool: BaseTool) -> str | None:
    """The group of a tool named ``server__tool``: ``server`` (MCP's prefix rule), else none.

    >>> from langchain_core.tools import StructuredTool
    >>> def tool(name: str) -> StructuredTool:
    ...     return StructuredTool.from_function(lambda: "", name=name, description="x")
    >>> prefix_group(tool("github__get_me")), prefix_group(tool("get_weather"))
    ('github', None)
    """
    head, sep, tail = tool.name.partition("__")
    return head if sep and head and tail else None


def tools_key(tools: Sequence[BaseTool]) -> tuple[int, ...]:
    """The identity of a tool list: the same objects in the same order give the same key.

    Identities are safe as a key while the :class:`AgentTools` built from the list holds the
    tools (an id is only reused after its object is freed).
    """
    return tuple(id(t) for t in tools)


def default_limits(model: Any) -> SurfaceLimits:
    """Limits for a model the host said nothing about: its window, OpenAI's count limit.

    The window is the LangChain model profile's ``max_input_tokens`` (what LangChain's own
    ``SummarizationMiddleware`` reads), else :data:`DEFAULT_WINDOW_TOKENS`.
    """
    try:
        profile = model.profile
    except Exception:  # a model without a profile (or one that fails to load it)
        profile = None
    window = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        window = DEFAULT_WINDOW_TOKENS
    return SurfaceLimits(window_tokens=window, max_advertised_tools=DEFAULT_MAX_TOOLS)


@dataclass(frozen=True)
class AgentTools:
    """A registry made of an agent's LangChain tools, and the way back to each tool."""

    key: tuple[int, ...]
    registry: ToolRegistry
    by_name: Mapping[str, BaseTool]
    #: Tools toolsurface cannot take (a name outside MCP's rule, a schema it cannot read):
    #: those the policy admits are sent on every request and run without admission, as
    #: without the middleware (``ToolSurfaceMiddleware._unmanaged``).
    passthrough: Mapping[str, BaseTool]
    #: Holds the listed tools alive, so that the identities in ``key`` stay theirs.
    tools: tuple[BaseTool, ...]

    @classmethod
    def build(
        cls, tools: Sequence[BaseTool], *, group: GroupRule = None, discovery_tool: str
    ) -> AgentTools:
        """Convert and register ``tools``; declare their groups; add the discovery tool.

        Two tools of one name are refused (the model calls tools by name); one tool that
        cannot be converted is logged and passed through, never failing the others.
        """
        by_name: dict[str, BaseTool] = {}
        passthrough: dict[str, BaseTool] = {}
        converted: list[Tool] = []
        groups: dict[str, str | None] = {}  # group -> the prefix it is declared by, if any
        for tool in tools:
            if tool.name == discovery_tool:
                raise LangChainAdapterError(
                    f"a tool given to create_agent is named {discovery_tool!r}: the middleware "
                    "provides that tool itself (it answers from the surface); leave it out"
                )
            if tool.name in by_name or tool.name in passthrough:
                raise LangChainAdapterError(
                    f"two tools given to create_agent are named {tool.name!r}: the model "
                    "calls tools by name, so one of them could never run"
                )
            chosen = group(tool) if callable(group) else group
            by_prefix = group is None
            if by_prefix:
                chosen = prefix_group(tool)
            try:
                definition = to_toolsurface(tool, group=None if by_prefix else chosen)
            except (ToolDefinitionError, LangChainAdapterError) as exc:
                _log.warning(
                    "toolsurface: %s; the tool is sent as it is, unmanaged, where the policy "
                    "admits it",
                    exc,
                )
                passthrough[tool.name] = tool
                continue
            converted.append(definition)
            by_name[tool.name] = tool
            if chosen is not None:
                groups.setdefault(chosen, f"{chosen}__" if by_prefix else None)
        registry = ToolRegistry()
        registry.register_many(converted, where="create_agent tools")
        for name, prefix in sorted(groups.items()):
            registry.declare_group(name, prefix=prefix)
        registry.register(tool_search_tool(discovery_tool))
        return cls(tools_key(tools), registry, by_name, passthrough, tuple(tools))
