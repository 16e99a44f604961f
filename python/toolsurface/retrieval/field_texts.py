"""A tool's five field texts, the reference both engines are held to.

The native core's ``tool_fields_packed`` makes the same texts in one Rust pass (packed, as
``packed_fields`` says) or declines; what it declines, and the whole pure engine, comes
here (tests/retrieval/test_fields_native.py holds the two equal).
"""

from __future__ import annotations

import logging

from toolsurface.models import Tool
from toolsurface.retrieval.fields import (
    FIELD_MAX_CHARS,
    FIELD_NAMES,
    clean_text,
    schema_texts,
    split_description,
)

__all__ = ["FieldTexts", "IndexTexts", "tool_fields"]

_log = logging.getLogger("toolsurface")

FieldTexts = tuple[str, str, str, str, str]
#: One indexed document: a tool's five texts, or those and its learned text (the sixth).
IndexTexts = tuple[str, ...]


def tool_fields(tool: Tool, reported: dict[str, Tool] | None = None) -> FieldTexts:
    """The five indexed field texts of a tool, each capped at ``FIELD_MAX_CHARS``.

    A cut is logged as a warning; with ``reported`` (the tools already logged, by name,
    which a registry keeps), only when this tool is not the one kept, which it then is.
    """
    summary, body = split_description(tool.description)
    params, enums = schema_texts(tool.input_schema)
    if enums:  # the parameters' enum values are searched with the body (docs/analysis.md)
        body = f"{body}\n{enums}" if body else enums
    name, hint = tool.name, tool.search_hint
    texts: FieldTexts = (
        clean_text(name),
        clean_text(hint),
        clean_text(summary),
        clean_text(body),
        clean_text(params),
    )
    if max(map(len, texts)) > FIELD_MAX_CHARS:
        if reported is None or reported.get(tool.name) is not tool:
            cut = [f for f, t in zip(FIELD_NAMES, texts) if len(t) > FIELD_MAX_CHARS]
            _log.warning(
                "toolsurface: tool %r: field(s) %s over %d characters; indexed on their start",
                tool.name,
                ", ".join(cut),
                FIELD_MAX_CHARS,
            )
            if reported is not None:
                reported[tool.name] = tool
        m = FIELD_MAX_CHARS
        texts = (texts[0][:m], texts[1][:m], texts[2][:m], texts[3][:m], texts[4][:m])
    return texts
