"""The admitted names nearest to a name a model invented, in about the time of a search.

A model that misremembers a tool name gets the closest real names back, so its next call
can be right. The answer must cost little whatever the model sends: a message can carry a
thousand invented names, each thousands of characters long, against a hundred thousand
tools. So the candidates come from an index, never from comparing the name with every
admitted one:

1. the names equal to it but for case (tier 0);
2. the names that share a word with it (words split at ``_ - .``, white space and camel
   case), or a word one letter wrong, missing or extra (a one-deletion index of the word
   vocabulary), or two words run together ("listtopics"), those sharing the most words
   first;
3. among those candidates, a name one or two words away (tier 1), else one whose whole-name
   similarity (rapidfuzz's normalised Indel ratio, difflib's ratio without its heuristics)
   is at least ``MIN_RATIO`` (tier 2), best first, ties by name. When no word matched at all
   ("githubcreateissue"), a catalogue of up to ``WHOLE_SCAN_MAX`` names is compared whole,
   in one rapidfuzz call.

Bounds, whatever the input: a name is considered on its first ``MAX_ASKED_CHARS``
characters and first ``MAX_WORDS`` words; at most ``POSTINGS_BUDGET`` postings are read,
rarest words first, and at most ``MAX_CANDIDATES`` names scored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from rapidfuzz import fuzz, process

__all__ = [
    "MAX_ASKED_CHARS",
    "MAX_CANDIDATES",
    "MAX_WORDS",
    "MEMO_SIZE",
    "MIN_RATIO",
    "POSTINGS_BUDGET",
    "TYPO_MAX_CHARS",
    "TYPO_MIN_CHARS",
    "WHOLE_SCAN_MAX",
    "NearNames",
    "nearest_names",
]

#: Longer than any valid tool name (128): what lies past it cannot make a name nearer.
MAX_ASKED_CHARS = 256
MAX_WORDS = 16
#: Postings read for one asked name, rarest words first.
POSTINGS_BUDGET = 1024
#: Names scored for one asked name: those sharing the most words with it.
MAX_CANDIDATES = 64
#: The whole-name similarity (0 to 1) a name needs when it shares too few words.
MIN_RATIO = 0.6
#: Words this long (in characters) are matched with one letter wrong, missing or extra.
TYPO_MIN_CHARS = 4
TYPO_MAX_CHARS = 32
#: Up to this many names, a name no word of which matched is compared with every name.
WHOLE_SCAN_MAX = 4096
#: Answers remembered per index (cleared whole when full).
MEMO_SIZE = 4096

_WORD_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])")


def words(name: str) -> list[str]:
    """A name's words, lower-cased: ``Mcp_Github_listIssues`` -> mcp, github, list, issues."""
    return [w.lower() for w in _WORD_SPLIT.split(name) if w]


class NearNames:
    """An index over a fixed set of names, answering ``nearest`` in bounded time.

    Build one per set of admitted names and keep it while that set holds; it is read-only
    once built, so threads may share it.

    >>> near = NearNames(["github__list_issues", "github__create_issue", "slack__post"])
    >>> near.nearest("github__list_isues")
    ['github__list_issues', 'github__create_issue']
    >>> near.nearest("GITHUB__LIST_ISSUES", n=1)
    ['github__list_issues']
    >>> near.nearest("x" * 100_000)
    []
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(sorted(set(names)))
        self._casefolded = [name.casefold() for name in self.names]
        self._same_case: dict[str, list[int]] = {}
        self._words: list[frozenset[str]] = []
        postings: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            self._same_case.setdefault(self._casefolded[i], []).append(i)
            ws = frozenset(words(name))
            self._words.append(ws)
            for w in ws:
                postings.setdefault(w, []).append(i)
        self._postings = postings
        # One-deletion variants of every word (SymSpell at distance one): a word with one
        # letter wrong, missing or extra meets its vocabulary word through one of them.
        deletions: dict[str, list[str]] = {}
        for w in postings:
            # Words with digits (ids, versions) are matched exactly: a "typo" there is
            # another thing, and they would make up most of a large vocabulary.
            if TYPO_MIN_CHARS <= len(w) <= TYPO_MAX_CHARS and w.isalpha():
                for variant in _deletions(w):
                    deletions.setdefault(variant, []).append(w)
        self._deletions = deletions
        # Answers by (asked, n): a model repeats an invented name, sometimes a thousand times.
        self._memo: dict[tuple[str, int], tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self.names)

    def nearest(self, asked: str, n: int = 3) -> list[str]:
        """Up to ``n`` names close to ``asked``, nearest first; never ``asked`` itself."""
        if n <= 0 or not self.names:
            return []
        asked = asked[:MAX_ASKED_CHARS]
        folded = asked.casefold()
        same_case = [
            self.names[i] for i in self._same_case.get(folded, ()) if self.names[i] != asked
        ]
        if len(same_case) >= n:
            return same_case[:n]
        key = (asked, n)
        known = self._memo.get(key)
        if known is not None:
            return list(known)
        found = (same_case + self._by_words(asked, folded, n))[:n]
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = tuple(found)
        return found

    def _by_words(self, asked: str, folded: str, n: int) -> list[str]:
        """Tiers 1 and 2 over the candidates the words give (or every name, when few)."""
        asked_words = frozenset(words(asked)[:MAX_WORDS])
        candidates = [i for i in self._candidates(asked_words) if self._casefolded[i] != folded]
        if not candidates and len(self.names) <= WHOLE_SCAN_MAX:
            candidates = [i for i in range(len(self.names)) if self._casefolded[i] != folded]
        texts = [self._casefolded[i] for i in candidates]
        scored: list[tuple[int, float, str]] = []
        for _, score, at in process.extract(folded, texts, scorer=fuzz.ratio, limit=None):
            i = candidates[at]
            theirs = self._words[i]
            ratio = score / 100.0
            if theirs & asked_words and len(theirs ^ asked_words) <= 2:
                scored.append((1, -ratio, self.names[i]))
            elif ratio >= MIN_RATIO:
                scored.append((2, -ratio, self.names[i]))
        scored.sort()
        return [name for _, _, name in scored[:n]]

    def _word_matches(self, word: str) -> list[str]:
        """Vocabulary words equal to ``word`` or one letter away from it."""
        found = [word] if word in self._postings else []
        if TYPO_MIN_CHARS <= len(word) <= TYPO_MAX_CHARS + 1:
            found += self._deletions.get(word, ())  # one letter missing from ``word``
            for variant in _deletions(word):
                if variant in self._postings:  # one letter too many in ``word``
                    found.append(variant)
                found += self._deletions.get(variant, ())  # one letter wrong
        if not found:
            found = self._halves(word)
        return list(dict.fromkeys(found))

    def _halves(self, word: str) -> list[str]:
        """Two vocabulary words run together, or joined by a wrong letter ("listqtopics")."""
        found: list[str] = []
        for at in range(2, min(len(word), TYPO_MAX_CHARS) - 1):
            for rest in (word[at:], word[at + 1 :]):
                if word[:at] in self._postings and rest in self._postings:
                    found += (word[:at], rest)
        return found

    def _candidates(self, asked_words: frozenset[str]) -> list[int]:
        """The names sharing the most (near-)words with the asked ones, within the budget.

        Words are read rarest first; a common word ("get", "list") is read only while the
        budget of postings lasts, so one asked name costs at most ``POSTINGS_BUDGET`` steps.
        """
        matched = {m for w in asked_words for m in self._word_matches(w)}
        shared: Counter[int] = Counter()
        budget = POSTINGS_BUDGET
        for word in sorted(matched, key=lambda m: (len(self._postings[m]), m)):
            postings = self._postings[word][:budget]
            shared.update(postings)
            budget -= len(postings)
            if budget <= 0:
                break
        # Most shared words first; ties keep the first reached (rarest word, then name order).
        return [i for i, _ in shared.most_common(MAX_CANDIDATES)]


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def nearest_names(asked: str, candidates: Sequence[str] | Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` close to ``asked`` (one-off; keep a ``NearNames`` to reuse)."""
    return NearNames(candidates).nearest(asked, n)
