"""Group rules and the run's mark (kept for import compatibility).

The module lives in :mod:`toolsurface.admission.rules`; this path re-exports its names.
"""

from toolsurface.admission.rules import (
    MARK_CHARS,
    RULES_MAX_CHARS,
    MarkScope,
    RulesLedger,
    RunMark,
    catalogue_mark,
    check_mark_settings,
    mark_for,
    mark_notice,
    render_rules,
    run_mark,
)

__all__ = [
    "MARK_CHARS",
    "RULES_MAX_CHARS",
    "MarkScope",
    "RulesLedger",
    "RunMark",
    "catalogue_mark",
    "check_mark_settings",
    "mark_for",
    "mark_notice",
    "render_rules",
    "run_mark",
]
