"""toolsurface: find, hold back and load tools on a large LLM tool surface.

Search is BM25F over five fields of each tool and a sixth of what the host's usage taught
it, in English and Russian, in a native (Rust) engine with a pure-Python twin that gives the
same results.
"""

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
from toolsurface.registry import DEFAULT_LEXICON, QUERY_MAX_CHARS, IToolRetriever, ToolRegistry
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
    "DuplicateToolError",
    "EngineUnavailableError",
    "Event",
    "FieldValues",
    "FusionSettings",
    "IToolRetriever",
    "LearnedFormatError",
    "LearnedHints",
    "LearnedRequest",
    "RequestPlan",
    "RetrievalSettings",
    "SearchHit",
    "SurfaceLimits",
    "TermContribution",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
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
