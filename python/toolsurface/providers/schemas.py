"""The doctor's schema check: what each provider is sent in place of a tool's own schema.

A tool's JSON Schema goes to Anthropic, OpenAI and Gemini as it is (Gemini's
``parametersJsonSchema``), but for a root ``$schema``, which the Gemini API refuses:
``toolsurface.providers.gemini`` leaves it out and notes it. A name a
provider refuses is sent as its alias (``toolsurface.providers.names``). The doctor lists
both, per provider, so a host sees before sending what each provider gets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolsurface.models import Tool
from toolsurface.providers.formats import PROVIDERS
from toolsurface.providers.gemini import gemini_parameters
from toolsurface.providers.names import alias_for

__all__ = ["SchemaIssue", "schema_issues"]


@dataclass(frozen=True)
class SchemaIssue:
    """What one provider is sent differently for one tool: its schema's changes, an alias."""

    name: str
    provider: str
    changes: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return {"name": self.name, "provider": self.provider, "changes": list(self.changes)}


def schema_issues(tools: Iterable[Tool]) -> list[SchemaIssue]:
    """Per tool and provider, each change made to send it (none: it goes as it is)."""
    out: list[SchemaIssue] = []
    for tool in tools:
        for provider in PROVIDERS:
            changes: list[str] = []
            alias = alias_for(tool.name, provider)
            if alias != tool.name:
                changes.append(f"name sent as {alias!r}")
            if provider == "gemini":
                changes.extend(gemini_parameters(tool.input_schema)[1])
            if changes:
                out.append(SchemaIssue(tool.name, provider, tuple(changes)))
    return out
