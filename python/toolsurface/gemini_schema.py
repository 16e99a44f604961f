"""Gemini's parameters for a tool's JSON Schema (kept for import compatibility).

The module lives in :mod:`toolsurface.providers.gemini`; this path re-exports its names.
"""

from toolsurface.providers.gemini import REFUSED_KEYWORDS, gemini_parameters

__all__ = ["REFUSED_KEYWORDS", "gemini_parameters"]
