"""Groups, load modes, the deferral decision, the catalogue block, discovery and eviction."""

from toolsurface.groups import LoadMode, ToolGroup
from toolsurface.surface.surface import (
    DeferralMode,
    Event,
    LoadedEntry,
    RequestPlan,
    SurfaceLimits,
    ToolSearchResult,
    ToolSurface,
    estimate_tokens,
)

__all__ = [
    "DeferralMode",
    "Event",
    "LoadMode",
    "LoadedEntry",
    "RequestPlan",
    "SurfaceLimits",
    "ToolGroup",
    "ToolSearchResult",
    "ToolSurface",
    "estimate_tokens",
]
