"""How an upstream's prompts and resources are named through the gateway, and named back.

A prompt is named as a tool is: ``{upstream}__{prompt}``, made MCP-safe the same way
(:func:`~toolsurface.adapters.mcp.mcp_tool_name`: odd characters to ``_``, an altered name
ending with its name's hash), so one upstream's prompts never meet another's.

A resource URI, or a resource template, is prefixed with its upstream's name and a ``+``:
``memo://insights`` of upstream ``sqlite`` is ``sqlite+memo://insights`` through the
gateway, and template ``file:///{path}`` is ``sqlite+file:///{path}``, so a client expands
it as listed and reads the result unchanged. The prefix is reversible without any state
(an upstream name has no ``+``; the first ``+`` ends it, whatever the URI holds), which
lets a read, a completion or a subscription reach its upstream from any gateway process,
whether or not that process served the listing.
"""

from __future__ import annotations

from toolsurface.adapters.mcp import mcp_tool_name

__all__ = ["SEPARATOR", "URI_SEPARATOR", "prompt_name", "split_prompt", "split_uri", "uri_of"]

#: Between an upstream's name and a prompt's (or a tool's) own name.
SEPARATOR = "__"
#: Between an upstream's name and one of its resource URIs or templates.
URI_SEPARATOR = "+"


def prompt_name(upstream: str, name: str) -> str:
    """The gateway's name of upstream ``upstream``'s prompt ``name``."""
    return mcp_tool_name(f"{upstream}{SEPARATOR}", name)


def split_prompt(name: str) -> tuple[str, str] | None:
    """The upstream a gateway prompt name claims, and the rest; None without a separator."""
    upstream, sep, rest = name.partition(SEPARATOR)
    return (upstream, rest) if sep and upstream and rest else None


def uri_of(upstream: str, uri: str) -> str:
    """The gateway's URI (or URI template) of upstream ``upstream``'s ``uri``."""
    return f"{upstream}{URI_SEPARATOR}{uri}"


def split_uri(uri: str) -> tuple[str, str] | None:
    """The upstream a gateway URI names and the upstream's own URI; None if it names none."""
    upstream, sep, rest = uri.partition(URI_SEPARATOR)
    return (upstream, rest) if sep and upstream and rest else None
