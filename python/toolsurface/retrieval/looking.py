"""A request's verbs of looking, and the request without them.

"Find the best ramen in Tokyo" over an MCP host's tools: a file tool whose description says
"find" is the only lexical match, and that match says nothing of what is asked (ramen,
Tokyo). With the semantic extra, the registry asks whether the request's words match
anything once these verbs are blanked (:func:`without_looking`); when they do not, the
lexical rankings are left out of the fusion and the encoders decide, as for a request that
matches nothing (docs/analysis.md §6). Without the extra nothing changes: there is no other
ranking to defer to.

The words are the imperatives of looking that ``data/question_words.txt`` lists for English
and Russian, and their counterparts in German, Spanish, French and Ukrainian, but not the
verbs of searching ("search", "look up", "поищи", "busca"): those name what a search tool
does, so a request's match of them is a match of its content.
"""

from __future__ import annotations

import re

__all__ = ["LOOKING_WORDS", "without_looking"]

#: The verbs of looking, as a request writes them (matched whole, in any case).
LOOKING_WORDS: tuple[str, ...] = (
    # English
    "show",
    "list",
    "find",
    "display",
    "view",
    # Russian
    "покажи",
    "покажите",
    "найди",
    "найдите",
    "глянь",
    "гляньте",
    "посмотри",
    "посмотрите",
    "выведи",
    "выведите",
    "перечисли",
    "перечислите",
    # German
    "zeig",
    "zeige",
    "zeigen",
    "finde",
    "finden",
    "liste",
    # Spanish
    "muestra",
    "muéstrame",
    "muestrame",
    "encuentra",
    "encuéntrame",
    "encuentrame",
    "lista",
    # French
    "montre",
    "montrez",
    "affiche",
    "affichez",
    "trouve",
    "trouvez",
    "liste",
    # Ukrainian
    "покажіть",
    "знайди",
    "знайдіть",
    "виведи",
    "виведіть",
    "переглянь",
)

_LOOKING = re.compile(
    r"(?<!\w)(?:" + "|".join(map(re.escape, dict.fromkeys(LOOKING_WORDS))) + r")(?!\w)",
    re.IGNORECASE,
)


def without_looking(query: str) -> str | None:
    """``query`` with its verbs of looking blanked, or ``None`` when it has none.

    >>> from toolsurface.retrieval.looking import without_looking
    >>> without_looking("Find the best ramen in Tokyo")
    '  the best ramen in Tokyo'
    >>> without_looking("what is on call?") is None
    True
    """
    blanked, found = _LOOKING.subn(" ", query)
    return blanked if found else None
