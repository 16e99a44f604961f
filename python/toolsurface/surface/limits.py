"""The limits a request must respect, and the default estimate of a definition's tokens."""

from __future__ import annotations

import functools
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsurface.models import Tool
from toolsurface.providers.token_counters import definition_json

__all__ = ["DeferralMode", "SurfaceLimits", "estimate_text_tokens", "estimate_tokens"]

DeferralMode = Literal["auto", "off"]


def estimate_tokens(tool: Tool) -> int:
    """Default estimate of a definition's tokens: its compact JSON's UTF-8 bytes over 4.

    Four bytes a token is the usual rule of thumb for English JSON; Cyrillic text costs two
    bytes a letter, so it counts double, as tokenisers roughly do. No tokeniser and no
    network: a host with its model's tokeniser passes ``estimator=`` (the counters of
    ``toolsurface.providers.token_counters`` measure the same JSON).
    """
    return estimate_text_tokens(definition_json(tool))


def estimate_text_tokens(text: str) -> int:
    """The same estimate for plain text the library writes (a group's rules section)."""
    return max(1, math.ceil(len(text.encode("utf-8", "replace")) / 4))


class SurfaceLimits(BaseModel):
    """The limits a request must respect, and the caps on what the run loads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    window_tokens: int | None = Field(default=None, gt=0, description="The model's window.")
    tool_definitions_ratio: float = Field(default=0.25, gt=0.0, le=1.0)
    max_advertised_tools: int | None = Field(default=None, gt=0, description="Provider limit.")
    max_loaded_entries: int = Field(default=64, ge=1, description="Loaded tools or groups.")
    load_reserve: int = Field(default=8, ge=0, description="Slots kept free for loads.")
    search_results: int = Field(default=8, ge=1, le=50)
    search_loads: int = Field(default=3, ge=0, le=20)
    retrieval_top_k: int = Field(default=0, ge=0, description="Per-message clip; 0 is off.")
    max_tool_calls_per_turn: int = Field(default=64, ge=0, description="Per message; 0: none.")

    @property
    def token_budget(self) -> float:
        """Tokens the tool definitions may take (infinite without a window)."""
        if self.window_tokens is None:
            return math.inf
        return self.window_tokens * self.tool_definitions_ratio


@functools.lru_cache(maxsize=64)
def with_tool_cap(limits: SurfaceLimits, cap: int | None) -> SurfaceLimits:
    """``limits`` with a provider's tool ``cap`` when the host set no cap of its own.

    One object per pair: a stateless host makes a surface for each request, and the copy
    is made once, not each time.
    """
    if cap is None or limits.max_advertised_tools is not None:
        return limits
    return limits.model_copy(update={"max_advertised_tools": cap})
