"""Group rules and the run's mark: moved to :mod:`toolsurface.admission.rules`, re-exported here.

Call admission (``toolsurface.admission.admit``) needs the rules too and imports nothing of the
surface, so the module lives beside it at the package's top.
"""

from toolsurface.admission.rules import (
    MARK_CHARS,
    RULES_MAX_CHARS,
    RulesLedger,
    mark_for,
    mark_notice,
    render_rules,
)

__all__ = [
    "MARK_CHARS",
    "RULES_MAX_CHARS",
    "RulesLedger",
    "mark_for",
    "mark_notice",
    "render_rules",
]
