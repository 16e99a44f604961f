"""Group names and aliases as analysed terms, and which a query mentions: the pure engine's.

The rule is docs/analysis.md §8: a group is mentioned when every term of one of its names
or aliases is among the query's terms (its own tokens and the lexicon's expansions, any
weight, in or out of the vocabulary). Groups come back in the order the query's terms first
reach one of their aliases, never a set's order. The native twin is ``aliases.rs``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = ["ALIASES_PRUNED_UP_TO", "PureAliases"]

#: Aliases of one group under one first term that are compared with each other for those
#: that can decide no mention: a declared group has at most 17 names. Past it only repeats
#: are left out, so that building stays linear (the native ``ALIASES_PRUNED_UP_TO``).
ALIASES_PRUNED_UP_TO = 32


class PureAliases:
    """``(group number, terms)`` per name or alias; those that can decide no mention left out.

    Left out: an empty one, a repeat, and one holding another of its group's under the same
    first term. ``first`` maps an alias's first term to its (group, set of terms) entries:
    a query is checked only against the aliases its terms can begin. An alias is compared only with
    its own group's under the same first term (found by a hash of both), never with every
    alias that shares its first term, so building is linear however many share a word.
    """

    __slots__ = ("first",)

    def __init__(self, entries: Sequence[tuple[int, Sequence[str]]]) -> None:
        # An alias holding every term of another of its group's with the same first term
        # (of two with the same terms, the later) can never decide a mention: whenever it is
        # complete the other is too, found at the same query term. It is left out, as the
        # native table leaves it out (``query/aliases.rs``, ``deciding``).
        made = [(int(group), terms[0], frozenset(terms)) for group, terms in entries if terms]
        keep = [True] * len(made)
        sizes = Counter((head, group) for group, head, _ in made)
        by_key: dict[tuple[str, int], list[int]] = {}
        seen: set[tuple[str, int, frozenset[str]]] = set()
        for i, (group, head, terms) in enumerate(made):
            if sizes[head, group] > ALIASES_PRUNED_UP_TO:
                # Past a declared group's names: repeats alone, so building stays linear.
                keep[i] = (head, group, terms) not in seen
                seen.add((head, group, terms))
                continue
            kept = by_key.setdefault((head, group), [])
            if any(made[j][2] <= terms for j in kept):
                keep[i] = False
                continue
            for j in kept:
                if terms < made[j][2]:
                    keep[j] = False
            kept[:] = [j for j in kept if keep[j]]
            kept.append(i)
        first: dict[str, list[tuple[int, frozenset[str]]]] = {}
        for (group, head, terms), kept_it in zip(made, keep, strict=True):
            if kept_it:
                first.setdefault(head, []).append((group, terms))
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
