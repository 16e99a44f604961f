"""Group names and aliases as analysed terms, and which a query mentions: the pure engine's.

The rule is docs/analysis.md §8: a group is mentioned when every term of one of its names
or aliases is among the query's terms (its own tokens and the lexicon's expansions, any
weight, in or out of the vocabulary). Groups come back in the order the query's terms first
reach one of their aliases, never a set's order. The native twin is ``aliases.rs``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["PureAliases"]


class PureAliases:
    """``(group number, terms)`` per name or alias; empty ones and repeats left out.

    ``first`` maps an alias's first term to its (group, set of terms) entries: a query is
    checked only against the aliases its terms can begin. A repeat (same group, first term
    and set of terms) is found by a hash of all three, never by a scan of the aliases that
    share its first term, so building is linear however many share a word.
    """

    __slots__ = ("first",)

    def __init__(self, entries: Sequence[tuple[int, Sequence[str]]]) -> None:
        first: dict[str, list[tuple[int, frozenset[str]]]] = {}
        seen: set[tuple[str, int, frozenset[str]]] = set()
        for group, terms in entries:
            if terms:
                entry = (int(group), frozenset(terms))
                key = (terms[0], *entry)
                if key not in seen:
                    seen.add(key)
                    first.setdefault(terms[0], []).append(entry)
        self.first = first

    def __len__(self) -> int:
        """The number of aliases (repeats left out)."""
        return sum(len(bucket) for bucket in self.first.values())

    def __bool__(self) -> bool:
        return bool(self.first)

    def match(self, terms: Sequence[str]) -> list[int]:
        """The groups a query of these terms (in its order) mentions, first mentioned first."""
        found: list[int] = []
        first = self.first
        present: frozenset[str] | None = None
        for term in terms:
            for group, needed in first.get(term, ()):
                if group in found:
                    continue
                if present is None:
                    present = frozenset(terms)
                if needed.issubset(present):
                    found.append(group)
        return found
