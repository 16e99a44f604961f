"""Whether a value can be sent as standard JSON (kept for import compatibility).

The module lives in :mod:`toolsurface._internal.json_check`; this path re-exports its names.
"""

from toolsurface._internal.json_check import (
    INT_MAX_BITS,
    MAX_DEPTH,
    JsonTextError,
    json_problem,
    json_type,
    loads,
    text_problem,
)

__all__ = [
    "INT_MAX_BITS",
    "MAX_DEPTH",
    "JsonTextError",
    "json_problem",
    "json_type",
    "loads",
    "text_problem",
]
