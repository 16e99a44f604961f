"""What the English encoder reads of a request not read as English: the request, glossed.

The English encoder (``retrieval/minilm.py``) reads English only. A request in another
language still leads to English words: the lexicons give its words English expansions (the
terms the lexical search looks for besides the request's own). The request followed by
those words is a text the English encoder can place; a request the lexicons add no English
word to is left to the multilingual encoder. On the project's two multilingual request
sets this lifted recall@3 of the six other languages (docs/quality.md, "The English
encoder reads a gloss").

The encoder reads a text's first 128 tokens (``minilm.MAX_TOKENS``; 256 when this was
measured): a request in another script of about 220 characters or more leaves no room for
the words after it. Putting them first, or cutting
the request to 200 characters, cost a request of several steps its hit (the request's own
Latin-script words, names and addresses, count more there), so the request comes whole.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

__all__ = ["english_gloss", "english_reading"]


def english_gloss(query: str, terms: Iterable[str], own: Collection[str]) -> str | None:
    """``query`` followed by the English words of ``terms`` not among ``own``; or None.

    ``terms`` are the query's search terms, its own then the lexicon's expansions, and
    ``own`` its own alone (``Index.query_terms`` with and without the lexicon). A word is
    an expansion in ASCII, taken once, in their order. None when there is none: the
    English encoder would read the request alone, in a language it does not know.

    >>> english_gloss("заархивируй тикет", ["архив", "тикет", "archiv", "issu"], {"архив", "тикет"})
    'заархивируй тикет archiv issu'
    >>> english_gloss("покажи whatsapp", ["показ", "whatsapp", "show", "app"], {"whatsapp"})
    'покажи whatsapp show app'
    >>> english_gloss("팀에 메시지 보내줘", [], ()) is None
    True
    """
    added = [t for t in dict.fromkeys(terms) if t.isascii() and t not in own]
    return f"{query} {' '.join(added)}" if added else None


def english_reading(
    query: str, language: str, terms: Iterable[str], own: Collection[str]
) -> str | None:
    """What the English encoder reads of ``query``, read in ``language``; None for nothing.

    An English request as it is; another its gloss (:func:`english_gloss`); without one, a
    ``latin`` request whose own terms are all ASCII as it is too: its function words tied
    English with another language ("open a pull request": ``a`` is Spanish), and it is
    most likely English.

    >>> english_reading("open a pull request", "latin", ["open", "pull", "request"],
    ...     {"open", "pull", "request"})
    'open a pull request'
    >>> english_reading("리스본 날씨", "latin", ["리스본", "날씨"], {"리스본", "날씨"}) is None
    True
    """
    if language == "en":
        return query
    terms = list(terms)
    gloss = english_gloss(query, terms, own)
    if gloss is None and language == "latin" and own and all(t.isascii() for t in own):
        return query
    return gloss
