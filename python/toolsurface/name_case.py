"""A name in another case matched to the one admitted name (kept for import compatibility).

The module lives in :mod:`toolsurface.admission.name_case`; this path re-exports its names.
"""

from toolsurface.admission.name_case import CaseIndex, ambiguous_text

__all__ = ["CaseIndex", "ambiguous_text"]
