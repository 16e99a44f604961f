"""The registry: ``ToolRegistry`` and ``RegistryView``, its tools and groups at one generation.

The package re-exports :mod:`toolsurface.registry.registry`, the old ``registry`` module.
"""

import warnings
from typing import Any

from toolsurface.registry.registry import (
    DEFAULT_LEXICON,
    DEPRECATED_RETRIEVER,
    QUERY_MAX_CHARS,
    DocumentRanker,
    HostRanker,
    RankerFailure,
    ToolDocument,
    ToolRegistry,
    tool_fields,
)

__all__ = [
    "DEFAULT_LEXICON",
    "QUERY_MAX_CHARS",
    "DocumentRanker",
    "HostRanker",
    "RankerFailure",
    "ToolDocument",
    "ToolRegistry",
    "tool_fields",
]


def __getattr__(name: str) -> Any:
    """``IToolRetriever``, the old name of :class:`HostRanker`, with a ``DeprecationWarning``."""
    if name == "IToolRetriever":
        warnings.warn(DEPRECATED_RETRIEVER, DeprecationWarning, stacklevel=2)
        return HostRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
