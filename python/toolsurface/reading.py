"""Whether a tool only reads, from its name's verb (kept for import compatibility).

The module lives in :mod:`toolsurface.retrieval.analysis.reading`; this path re-exports its names.
"""

from toolsurface.retrieval.analysis.reading import READ_VERBS, WRITE_VERBS, name_verb, reads_only

__all__ = ["READ_VERBS", "WRITE_VERBS", "name_verb", "reads_only"]
