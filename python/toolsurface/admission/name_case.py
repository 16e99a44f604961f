"""Names in any case: a model's ``mcp_github_create_issue`` for ``Mcp_Github_create_issue``.

Models rewrite the case of names they saw once (a capital dropped, a server's prefix
lowered). A :class:`CaseIndex` answers, for a name that is not an exact match, the names it
matches when case is ignored: one match is that name; two or more (names that differ only
by case) stay ambiguous and are answered with all of them, never guessed between.

It is built over what the run admits only, so a case match can never reveal a blocked name.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CaseIndex", "ambiguous_text"]


class CaseIndex:
    """Names by their case-folded form, each list in the order the names were given.

    >>> index = CaseIndex(["Mcp_Github_create_issue", "fs__read", "FS__read"])
    >>> index.match("mcp_github_create_issue")
    ('Mcp_Github_create_issue',)
    >>> index.match("Fs__Read")
    ('fs__read', 'FS__read')
    >>> index.match("nothing")
    ()
    """

    __slots__ = ("_by_fold",)

    def __init__(self, names: Iterable[str]) -> None:
        by_fold: dict[str, list[str]] = {}
        for name in names:
            by_fold.setdefault(name.casefold(), []).append(name)
        self._by_fold = {k: tuple(v) for k, v in by_fold.items()}

    def match(self, name: str) -> tuple[str, ...]:
        """The names equal to ``name`` when case is ignored (empty when there is none)."""
        return self._by_fold.get(name.casefold(), ())

    def unique(self, name: str) -> str | None:
        """The one name ``name`` matches ignoring case, or ``None`` (no match, or several)."""
        found = self.match(name)
        return found[0] if len(found) == 1 else None


def ambiguous_text(kind: str, asked: str, names: Iterable[str]) -> str:
    """The answer to a name matching several ``kind`` names by case: all of them, exactly."""
    return f"Ambiguous {kind} name {asked!r}: it matches {', '.join(names)}; use the exact name."
