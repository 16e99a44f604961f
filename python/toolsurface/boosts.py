"""The boosts of a search (kept for import compatibility).

The module lives in :mod:`toolsurface.retrieval.boosts.boosts`; this path re-exports its names.
"""

from toolsurface.retrieval.boosts.boosts import Boosts

__all__ = ["Boosts"]
