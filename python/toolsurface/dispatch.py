"""Call admission (kept for import compatibility).

The module lives in :mod:`toolsurface.admission.admit`; this path re-exports its names.
"""

from toolsurface.admission.admit import (
    ARGUMENT_ERRORS,
    NEAR_NAMES_PER_MESSAGE,
    Admission,
    Admitted,
    Effect,
    Emit,
    GiveRules,
    LoadGroup,
    LoadTool,
    NoteUse,
    ToolCall,
    Verdict,
    admit,
    admit_calls,
    failure_text,
)

__all__ = [
    "ARGUMENT_ERRORS",
    "NEAR_NAMES_PER_MESSAGE",
    "Admission",
    "Admitted",
    "Effect",
    "Emit",
    "GiveRules",
    "LoadGroup",
    "LoadTool",
    "NoteUse",
    "ToolCall",
    "Verdict",
    "admit",
    "admit_calls",
    "failure_text",
]
