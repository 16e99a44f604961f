"""Text the library writes for the model: made safe, a tool in one line, near names.

ToolSearch's results, call admission's refusals, group rules and the CLI all write text a
model reads; they share these helpers, so none of them depends on another for them.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence

from toolsurface.admission.near_names import NearNames
from toolsurface.models import Tool
from toolsurface.retrieval.fields import split_description

__all__ = [
    "LINE_MAX_CHARS",
    "near_index",
    "nearest_names",
    "quoted_name",
    "safe_text",
    "tool_line",
]

#: A tool's line (name, parameters, first sentence) is cut to this many characters.
LINE_MAX_CHARS = 300
#: Control, format (zero-width, bidi), surrogate, private-use and line/paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
# The near-name indexes of the last few admitted sets (a registry's runs share a few).
_NEAR_CACHE: list[tuple[tuple[str, ...], NearNames]] = []
_NEAR_CACHE_SIZE = 4
_NEAR_LOCK = threading.Lock()


def safe_text(text: str, limit: int = LINE_MAX_CHARS) -> str:
    """Text fit for the model: control, zero-width and bidi characters gone, length capped.

    Only the start is read: white space folds at most to half, so ``4 * limit`` characters
    give ``limit`` of output unless the rest is mostly dropped characters, and the cost stays
    bounded whatever a model wrote.
    """
    kept = []
    for ch in text[: 4 * limit + 4]:
        if ch in "\t\n\r":
            kept.append(" ")
        elif unicodedata.category(ch) not in _UNSAFE_CATEGORIES:
            kept.append(ch)
    cleaned = " ".join("".join(kept).split())
    if len(cleaned) > limit or len(text) > 4 * limit + 4:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def quoted_name(text: str, limit: int) -> str:
    r"""A name a model wrote, quoted for its refusal: unsafe characters shown, not dropped.

    ``safe_text`` would drop a NUL or a zero-width space, and "Unknown tool 'a__b'" beside
    "Closest: a__b" tells the model nothing; written ``\x00`` or ``\u200b``, what was wrong
    is on the page, and no control character reaches it. White space shows as itself when
    it is a plain space and escaped otherwise. Cut, with "…", at ``limit`` characters
    (an escape counts whole); only the first ``limit`` characters are read.

    >>> print(quoted_name("github__list_issues\u200b", 64), quoted_name("a b\tc\x00", 64))
    'github__list_issues\u200b' 'a b\x09c\x00'
    >>> print(quoted_name("x" * 100, 8))
    'xxxxxxxx…'
    """
    out: list[str] = []
    size = 0
    for ch in text[: limit + 1]:
        piece = ch
        if ch != " " and (ch.isspace() or unicodedata.category(ch) in _UNSAFE_CATEGORIES):
            code = ord(ch)
            piece = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
            if code > 0xFFFF:
                piece = f"\\U{code:08x}"
        if size + len(piece) > limit:
            out.append("…")
            break
        out.append(piece)
        size += len(piece)
    return "'" + "".join(out) + "'"


def tool_line(tool: Tool, name: str | None = None) -> str:
    """``Name(param1*, param2) — first sentence``; ``*`` marks a required parameter.

    ``name`` is the name the model calls the tool by, when it is not the tool's own (a
    provider-safe alias).
    """
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    params = ", ".join(f"{p}*" if p in required else str(p) for p in props)
    summary = split_description(tool.description)[0]
    head = f"{name or tool.name}({params})"
    line = f"{head} — {summary}" if summary else head
    return safe_text(line)


def near_index(names: Sequence[str]) -> NearNames:
    """The near-name index of ``names``, built once per distinct set and kept.

    Callers pass the run's admitted tuple, the same object while the decision holds, so the
    common case is one identity check; an equal sequence (a new list of the same names)
    costs a comparison, and only a new set of names builds an index.
    """
    with _NEAR_LOCK:
        for held, index in _NEAR_CACHE:
            if held is names:
                return index
    # Kept as a tuple: a caller's list may change after this call.
    frozen = names if isinstance(names, tuple) else tuple(names)
    with _NEAR_LOCK:
        for held, index in _NEAR_CACHE:
            if held == frozen:
                return index
    index = NearNames(frozen)
    with _NEAR_LOCK:
        _NEAR_CACHE.insert(0, (frozen, index))
        del _NEAR_CACHE[_NEAR_CACHE_SIZE:]
    return index


def nearest_names(asked: str, candidates: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``asked``: a case change or one word away first.

    Bounded whatever ``asked`` is (see :mod:`toolsurface.admission.near_names`).

    >>> nearest_names("github__list_isues", ("github__list_issues", "slack__post"))
    ['github__list_issues']
    """
    return near_index(candidates).nearest(asked, n)
