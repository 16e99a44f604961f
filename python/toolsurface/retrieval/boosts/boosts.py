"""A registry's boost rules: what the engine needs to find and apply a search's boosts.

Two rules make boosts: a service mention (``mentions.py``, ``docs/analysis.md`` §8) and a
question (``questions.py``, §10). A hit's score is its BM25F score times the factor of
every boost whose set holds it. Both are worked out inside the engine, in the same call as
the search (``search/rules.rs`` natively, ``retrieval/engine/pure_rules.py`` in the pure
engine): this module only compiles the registry's groups, their members and the read-only
tools into the engine's ``BoostRules``, once per index, groups version and weights.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, Protocol

from toolsurface.models import RetrievalSettings
from toolsurface.retrieval.analysis.questions import question_words
from toolsurface.retrieval.boosts.mentions import AliasTable
from toolsurface.retrieval.engine.backend import Backend
from toolsurface.retrieval.engine.built import BuiltIndex as _Built
from toolsurface.retrieval.engine.built import RuleInputs
from toolsurface.retrieval.membership import Membership

__all__ = ["Boosts"]


class _Aliases(Protocol):
    """The groups' compiled names and aliases (``mentions.MentionBoost``)."""

    def alias_table(self) -> AliasTable: ...


class _Members(Protocol):
    """Which tool is in which group (``membership.GroupMembership``)."""

    def membership(self) -> Membership: ...


class Boosts:
    """A registry's boost rules for the engine, made per (index, groups version, weights).

    ``aliases`` gives the alias table (numbering the groups), ``groups`` the membership,
    ``backend`` is the registry's engine. Rules are kept on the index they were made for,
    so a new catalogue generation or learned version starts with none.
    """

    def __init__(self, aliases: _Aliases, groups: _Members, backend: Backend) -> None:
        self._aliases = aliases
        self._groups = groups
        self._backend = backend

    def rules(self, built: _Built, chosen: RetrievalSettings) -> tuple[int, Any]:
        """The groups version read and the engine's rules over ``built`` for ``chosen``.

        ``None`` for the rules when both weights are 0 (every rule off). The version is the
        alias table's, read before the members: rules are never kept under a newer version
        than their members'.
        """
        table = self._aliases.alias_table()
        mention = 1.0 + chosen.mention_weight
        question = 1.0 + chosen.question_weight
        if mention == 1.0 and question == 1.0:
            return table.version, None
        key = (table.version, mention, question)
        with built.lock:
            found = built.rules.get(key)
        if found is not None:
            return table.version, found
        with built.lock:
            inputs = built.rule_inputs.get(table.version)
        if inputs is None:
            inputs = self._inputs(built, table.names)
            with built.lock:
                built.rule_inputs.clear()  # one groups version at a time, as the rules
                built.rule_inputs[table.version] = inputs
        member_ids, member_ends, read_only = inputs
        made = self._backend.rules(
            built.index,
            table.compiled,
            member_ids,
            member_ends,
            read_only,
            sorted(question_words()),
            mention,
            question,
        )
        with built.lock:
            built.rules.clear()  # a registry uses one version's rules at a time
            built.rules[key] = made
        return table.version, made

    def _inputs(self, built: _Built, groups: Sequence[str]) -> RuleInputs:
        """``groups``' member ids in ``built`` back to back, their ends, and the read-only ids.

        Each group's ids are ascending and end at its entry of the second array. Flat, not a
        list per group: a registry with a group per server at 100,000 tools made 98,399
        lists here, 10 MB kept with the index, and a second in the making. One pass over the
        names in id order puts each id in its group's list, so the ids come out ascending
        with no sort and no name -> id map.
        """
        names = built.names
        if not groups and not built.read_only:  # no pass at all (a plain search)
            return array("q"), array("q"), []
        slot = {g: i for i, g in enumerate(groups)}
        of = self._groups.membership().of
        per: list[list[int]] = [[] for _ in groups]
        for i, group in enumerate(map(of.get, names)):
            if group is not None:
                at = slot.get(group)
                if at is not None:
                    per[at].append(i)
        member_ids, member_ends = array("q"), array("q")
        for ids in per:
            member_ids.extend(ids)
            member_ends.append(len(member_ids))
        read_only = built.read_only
        return member_ids, member_ends, [i for i, n in enumerate(names) if n in read_only]
