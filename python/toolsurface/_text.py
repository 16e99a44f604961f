"""Text the library writes for the model: made safe, a tool in one line, near names.

ToolSearch's results, call admission's refusals, group rules and the CLI all write text a
model reads; they share these helpers, so none of them depends on another for them.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable

from toolsurface.models import Tool
from toolsurface.retrieval.fields import split_description

__all__ = ["LINE_MAX_CHARS", "nearest_names", "safe_text", "tool_line"]

#: A tool's line (name, parameters, first sentence) is cut to this many characters.
LINE_MAX_CHARS = 300
#: Control, format (zero-width, bidi), surrogate, private-use and line/paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")


def safe_text(text: str, limit: int = LINE_MAX_CHARS) -> str:
    """Text fit for the model: control, zero-width and bidi characters gone, length capped."""
    kept = []
    for ch in text:
        if ch in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(ch) not in _UNSAFE_CATEGORIES:
            kept.append(ch)
    cleaned = " ".join("".join(kept).split())
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def tool_line(tool: Tool) -> str:
    """``Name(param1*, param2) — first sentence``; ``*`` marks a required parameter."""
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    params = ", ".join(f"{p}*" if p in required else str(p) for p in props)
    summary = split_description(tool.description)[0]
    head = f"{tool.name}({params})"
    line = f"{head} — {summary}" if summary else head
    return safe_text(line)


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_SPLIT.split(name) if w]


def nearest_names(asked: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``asked``: a case change or one word away first."""
    asked_folded = asked.casefold()
    asked_words = _words(asked)
    scored: list[tuple[int, float, str]] = []
    for name in candidates:
        if name == asked:
            continue
        if name.casefold() == asked_folded:
            scored.append((0, 0.0, name))
            continue
        words = _words(name)
        diff = len(set(words) ^ set(asked_words))
        ratio = difflib.SequenceMatcher(None, asked_folded, name.casefold()).ratio()
        if words and asked_words and diff <= 2 and len(set(words) & set(asked_words)) >= 1:
            scored.append((1, -ratio, name))
        elif ratio >= 0.6:
            scored.append((2, -ratio, name))
    scored.sort()
    return [name for _, _, name in scored[:n]]
