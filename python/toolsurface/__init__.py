"""toolsurface: find, hold back and load tools on a large LLM tool surface.

Search is BM25F over five fields of each tool and a sixth of what the host's usage taught
it, in English and Russian, in a native (Rust) engine with a pure-Python twin that gives the
same results.
"""

import warnings
from typing import Any

from toolsurface._engine import engine
from toolsurface._version import __version__
from toolsurface.admission.admit import ToolCall, Verdict
from toolsurface.errors import (
    CatalogueFormatError,
    DuplicateToolError,
    EngineUnavailableError,
    ToolDefinitionError,
    ToolsurfaceError,
    UnknownToolError,
)
from toolsurface.models import FieldValues, RetrievalSettings, SearchHit, TermContribution, Tool
from toolsurface.registry import (
    DEFAULT_LEXICON,
    QUERY_MAX_CHARS,
    DocumentRanker,
    HostRanker,
    RankerFailure,
    ToolDocument,
    ToolRegistry,
)
from toolsurface.registry.registry import DEPRECATED_RETRIEVER
from toolsurface.retrieval.fusion import FusionSettings
from toolsurface.retrieval.hints.learned import LearnedFormatError, LearnedHints, LearnedRequest
from toolsurface.surface import (
    Event,
    RequestPlan,
    SurfaceLimits,
    ToolGroup,
    ToolSearchResult,
    ToolSurface,
)
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, tool_line, tool_search_tool

__all__ = [
    "DEFAULT_LEXICON",
    "QUERY_MAX_CHARS",
    "TOOL_SEARCH_NAME",
    "CatalogueFormatError",
    "DocumentRanker",
    "DuplicateToolError",
    "EngineUnavailableError",
    "Event",
    "FieldValues",
    "FusionSettings",
    "HostRanker",
    "LearnedFormatError",
    "LearnedHints",
    "LearnedRequest",
    "RankerFailure",
    "RequestPlan",
    "RetrievalSettings",
    "SearchHit",
    "SurfaceLimits",
    "TermContribution",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolDocument",
    "ToolGroup",
    "ToolRegistry",
    "ToolSearchResult",
    "ToolSurface",
    "ToolsurfaceError",
    "UnknownToolError",
    "Verdict",
    "__version__",
    "engine",
    "tool_line",
    "tool_search_tool",
]


def __getattr__(name: str) -> Any:
    """``IToolRetriever``, the old name of :class:`HostRanker`, with a ``DeprecationWarning``."""
    if name == "IToolRetriever":
        warnings.warn(DEPRECATED_RETRIEVER, DeprecationWarning, stacklevel=2)
        return HostRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
