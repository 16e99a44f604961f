"""Characters a reader cannot see, removed from a tool's own text before it is kept.

A description reaches the model verbatim, so control characters, zero-width characters and
bidi overrides in it (a server's typo, or an attack that shows a human one text and the
model another) are removed where the tool is made, as the library already removes them from
the text it writes itself. Tabs and newlines are kept; line and paragraph separators become
newlines.
"""

from __future__ import annotations

import unicodedata

__all__ = ["INVISIBLE_CATEGORIES", "strip_invisible"]

#: Control, format (zero-width, bidi, soft hyphen) and surrogate characters.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_KEPT = "\t\n\r"
_NEWLINES = {"\u2028": "\n", "\u2029": "\n"}


def strip_invisible(text: str) -> str:
    r"""``text`` without invisible characters; printable text is returned as it is.

    The check for the common case (nothing to remove) runs in C: only text with a character
    that is not printable (a newline aside) is read character by character.

    >>> strip_invisible("Delete\u202e a file\u200b.\nReally.")
    'Delete a file.\nReally.'
    """
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text
    out = []
    for ch in text:
        if ch in _KEPT:
            out.append(ch)
        elif ch in _NEWLINES:
            out.append("\n")
        elif unicodedata.category(ch) not in INVISIBLE_CATEGORIES:
            out.append(ch)
    return "".join(out)
