"""Lexicon keys: what a word is matched by in a lexicon (docs/analysis.md §4).

Snowball conflates derivations as well as inflections (``activate``, ``activities`` and
``actively`` all stem to ``activ``), so an entry keyed by the stem fired on words of other
meaning. A word's key is its stem told apart from the other words that stem alike: an
entry fires on its own words' inflections only. The native twin is ``analysis/lexkey.rs``.
"""

from __future__ import annotations

import re

__all__ = ["KEY_SEPARATOR", "english_base", "lexicon_key"]

#: Separates a stem from what tells its words apart; no token holds it (a separator).
KEY_SEPARATOR = ":"
_ENGLISH = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")
_RUSSIAN = re.compile(r"[а-я]+")
_RUSSIAN_DERIVATIONS = ("ост", "ейш")


def _strip_ending(word: str) -> str | None:
    """``word`` less its inflectional ending, if it has one (see ``english_base``)."""
    n = len(word)
    if n > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("ch", "sh", "ss", "x", "z")):
        return word[:-2]
    if n > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if n > 5 and word.endswith("ing"):
        return word[:-3]
    if n > 4 and word.endswith("ed"):
        # Its ``d`` only: the ``e`` goes with a final ``e`` (``agreed`` as ``agree``).
        return word[:-1]
    return None


def english_base(word: str) -> str:
    """The inflectional base of an English token: inflections of a word share it.

    Its ending goes, and under a final ``s`` a second one, each the first of: ``ies``,
    ``ied`` (read as ``y``) past four letters; ``es`` after ``ch``, ``sh``, ``ss``, ``x``
    or ``z``; ``s`` past two letters,
    not after ``s``, ``u`` or ``i``; ``ing`` past five letters; the ``d`` of ``ed`` past
    four. Then a final ``e`` goes (past two letters), then one letter of a final doubled
    letter (past two): ``activate``, ``activated``, ``activating`` give ``activat``;
    ``activities`` gives ``activity``.
    """
    base = word
    shorter = _strip_ending(base)
    if shorter is not None:
        # A second ending only under a plural's or third person's ``s``: ``speeds`` as
        # ``speed``, but ``browsing`` as ``browse`` and no further.
        plural = base.endswith("s")
        base = shorter
        if plural:
            base = _strip_ending(base) or base
    if len(base) > 2 and base.endswith("e"):
        base = base[:-1]
    if len(base) > 2 and base[-1] == base[-2]:
        base = base[:-1]
    return base


def lexicon_key(word: str, stem: str) -> str:
    """The lexicon key of a folded ``word`` that passed the filters, ``stem`` its stem.

    ``stem:base`` for an English token; for a Russian one, ``stem:ост`` or ``stem:ейш`` when
    the word goes on past its stem with that derivational suffix (``активность`` apart from
    ``активный``), else the stem; any other token's stem.
    """
    if _ENGLISH.fullmatch(word):
        return f"{stem}{KEY_SEPARATOR}{english_base(word)}"
    if _RUSSIAN.fullmatch(word):
        rest = word[len(stem) :] if word.startswith(stem) else ""
        for suffix in _RUSSIAN_DERIVATIONS:
            if rest.startswith(suffix):
                return f"{stem}{KEY_SEPARATOR}{suffix}"
    return stem
