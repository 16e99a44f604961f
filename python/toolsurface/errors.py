"""Exceptions of toolsurface: each names the tool, field, line or setting at fault."""

from __future__ import annotations

__all__ = [
    "CatalogueFormatError",
    "DuplicateToolError",
    "EngineUnavailableError",
    "ToolDefinitionError",
    "ToolsurfaceError",
    "UnknownGroupError",
    "UnknownToolError",
]


class ToolsurfaceError(Exception):
    """Base class of the library's own errors."""


class EngineUnavailableError(ToolsurfaceError, ImportError):
    """The engine forced by ``TOOLSURFACE_ENGINE`` cannot be loaded."""


class ToolDefinitionError(ToolsurfaceError, ValueError):
    """A tool definition is malformed; ``tool`` and ``field`` name the culprit.

    ``field`` is the first bad field; ``problems`` holds every bad field with what is wrong
    with it, as ``(field, reason)`` pairs (empty when the fault is not a field's).
    """

    def __init__(
        self,
        message: str,
        *,
        tool: str | None = None,
        field: str | None = None,
        problems: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.tool = tool
        self.field = field
        self.problems = problems


class DuplicateToolError(ToolsurfaceError, ValueError):
    """A tool is registered under a name that is already taken."""

    def __init__(self, name: str, existing: str, new: str) -> None:
        super().__init__(
            f"tool {name!r} is already registered ({existing}); the new definition "
            f"({new}) was not registered: pass replace=True to replace it"
        )
        self.name = name


class UnknownToolError(ToolsurfaceError, KeyError):
    """A name that no registered tool has."""

    def __str__(self) -> str:
        """Show the message rather than KeyError's quoted repr."""
        return str(self.args[0]) if self.args else ""


class CatalogueFormatError(ToolsurfaceError, ValueError):
    """A catalogue file is not in any format the readers know; says what was expected."""


class UnknownGroupError(ToolsurfaceError, KeyError):
    """A group name that is neither declared nor named by any tool."""

    def __str__(self) -> str:
        """Show the message rather than KeyError's quoted repr."""
        return str(self.args[0]) if self.args else ""
