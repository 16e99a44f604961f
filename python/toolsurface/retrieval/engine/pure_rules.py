"""A registry's boost rules for one index, the pure engine's (``search/rules.rs`` natively).

The rules are docs/analysis.md §8 and §10: a request that mentions a group raises the
group's documents by the mention factor, and one that asks raises the documents that only
read by the question factor. :class:`PureBoostRules` holds what they need and finds a
query's boosts, which ``PureIndex.search_boosted`` applies; the search layer of the registry
never works them out itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolsurface.retrieval.analysis.questions import asks, fold_question_words
from toolsurface.retrieval.engine.alias_match import PureAliases
from toolsurface.retrieval.engine.pure import PureFilter, PureIndex, PureLexicon
from toolsurface.retrieval.engine.ranking import check_factor

__all__ = ["PureBoostRules"]


class PureBoostRules:
    """What a search's boosts are made of, for one index; checked once, never changed.

    ``aliases`` numbers the groups as ``members`` (each group's document ids) does;
    ``read_only`` are the documents that only read; a factor of 1 turns its rule off.
    """

    def __init__(
        self,
        index: PureIndex,
        aliases: PureAliases | None,
        members: Sequence[Sequence[int]],
        read_only: Sequence[int],
        question_words: Sequence[str],
        mention_factor: float,
        question_factor: float,
    ) -> None:
        self.docs = len(index)
        self.aliases = aliases if aliases is not None else PureAliases([])
        self.members = [index.make_filter(list(ids)).ids for ids in members]
        self.read_only = index.make_filter(list(read_only)).ids
        self.words = fold_question_words(question_words)
        self.mention_factor = check_factor(mention_factor)
        self.question_factor = check_factor(question_factor)

    def check(self, index: PureIndex) -> None:
        """Refuse an index other than the one the rules were made for (its size differs)."""
        if len(index) != self.docs:
            raise ValueError(
                f"boost rules made for an index of {self.docs} documents "
                f"used with one of {len(index)}"
            )

    def found(
        self,
        index: PureIndex,
        query: str,
        lexicon: PureLexicon | None,
        expansion_weight: float,
        allowed: PureFilter | None,
    ) -> list[tuple[PureFilter, float]]:
        """The boosts of ``query`` among the ``allowed`` documents, the mention's first."""

        def reaches(ids: frozenset[int]) -> bool:
            return bool(ids) and (allowed is None or not ids.isdisjoint(allowed.ids))

        out: list[tuple[PureFilter, float]] = []
        if self.mention_factor > 1.0 and self.aliases:
            groups = index.mentions(query, lexicon, expansion_weight, self.aliases)
            lists = [self.members[g] for g in groups if g < len(self.members)]
            members = frozenset().union(*lists)
            if reaches(members):
                out.append((PureFilter(members), self.mention_factor))
        if self.question_factor > 1.0 and reaches(self.read_only) and asks(query, self.words):
            out.append((PureFilter(self.read_only), self.question_factor))
        return out
