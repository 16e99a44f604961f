"""Provider-safe aliases of tool names a provider refuses (kept for import compatibility).

The module lives in :mod:`toolsurface.providers.names`; this path re-exports its names.
"""

from toolsurface.providers.names import DIGEST_CHARS, alias_for, alias_map

__all__ = ["DIGEST_CHARS", "alias_for", "alias_map"]
