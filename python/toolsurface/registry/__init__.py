"""The registry: ``ToolRegistry`` and ``RegistryView``, its tools and groups at one generation.

The package re-exports :mod:`toolsurface.registry.registry`, the old ``registry`` module.
"""

from toolsurface.registry.registry import (
    DEFAULT_LEXICON,
    QUERY_MAX_CHARS,
    IToolRetriever,
    ToolRegistry,
    tool_fields,
)

__all__ = ["DEFAULT_LEXICON", "QUERY_MAX_CHARS", "IToolRetriever", "ToolRegistry", "tool_fields"]
