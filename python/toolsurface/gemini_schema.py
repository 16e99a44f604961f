"""A JSON Schema rewritten to the subset Gemini takes (kept for import compatibility).

The module lives in :mod:`toolsurface.providers.gemini`; this path re-exports its names.
"""

from toolsurface.providers.gemini import MAX_DEPTH, gemini_parameters

__all__ = ["MAX_DEPTH", "gemini_parameters"]
