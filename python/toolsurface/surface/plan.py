"""The plan of one request: the tools in order with their sources, and the catalogue block."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from toolsurface.models import Tool, copy_data
from toolsurface.providers import render_tools

__all__ = ["RequestPlan", "Source"]

Source = Literal["base", "pinned", "loaded", "clip", "discovery"]


@dataclass(frozen=True)
class RequestPlan:
    """What to send: the tools in order with the source of each, and the catalogue block."""

    tools: tuple[Tool, ...]
    sources: tuple[Source, ...]
    catalogue: str
    held_back: tuple[str, ...]
    reasons: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The advertised tool names, in order."""
        return tuple(t.name for t in self.tools)

    def definitions(self) -> list[dict[str, Any]]:
        """Neutral definitions (name, description, input_schema): group data never leaves.

        The schemas are copies: a host may edit its request (strict mode, say) without
        changing the registered tool for every other session.
        """
        return [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": _copy_out(t.input_schema),
            }
            for t in self.tools
        ]

    def render(self, provider: str) -> Any:
        """The tools in a provider's request shape (copies); names it would refuse raise first."""
        return _copy_out(render_tools(self.tools, provider))

    def system_text(self, base: str = "") -> str:
        """``base`` system text with the catalogue block after it (unchanged if none)."""
        if not self.catalogue:
            return base
        return f"{base}\n\n{self.catalogue}" if base else self.catalogue


def _copy_out(value: Any) -> Any:
    """A copy of definitions for the host, so its edits never reach the registry.

    Past pickle's depth (the stack may be deeper than at registration) a JSON round trip
    reaches further.
    """
    try:
        return copy_data(value)
    except ValueError:
        return json.loads(json.dumps(value))
