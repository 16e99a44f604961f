"""The bundled data files, read once: character table, stopwords and lexicon.

Both engines are built from what these functions return, so the data has one source.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

__all__ = [
    "char_table_text",
    "default_lexicon_entries",
    "parse_lexicon",
    "read_data_text",
    "stopwords",
]


def read_data_text(name: str) -> str:
    """Text of a file in the package's ``data`` folder."""
    return (
        resources.files("toolsurface").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    )


@functools.cache
def char_table_text() -> str:
    """The shared character table (see scripts/gen_chartable.py)."""
    return read_data_text("chars.tsv")


@functools.cache
def stopwords() -> tuple[str, ...]:
    """English and Russian stopwords and fillers, comments and blanks dropped."""
    words: list[str] = []
    for name in ("stopwords_en.txt", "stopwords_ru.txt"):
        for line in read_data_text(name).splitlines():
            word = line.strip()
            if word and not word.startswith("#"):
                words.append(word)
    return tuple(dict.fromkeys(words))


def parse_lexicon(text: str, source: str = "lexicon") -> list[tuple[str, str]]:
    """Parse ``source<TAB>targets`` lines; a malformed line raises ``ValueError`` naming it."""
    entries: list[tuple[str, str]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise ValueError(f"{source} line {lineno}: expected 'source<TAB>targets', got {line!r}")
        entries.append((parts[0].strip(), parts[1].strip()))
    return entries


@functools.cache
def default_lexicon_entries() -> tuple[tuple[str, str], ...]:
    """The bundled lexicon (``data/lexicon.tsv``)."""
    return tuple(parse_lexicon(read_data_text("lexicon.tsv"), "data/lexicon.tsv"))


def lexicon_from_file(path: str | Path) -> list[tuple[str, str]]:
    """Entries of a host's own lexicon file in the bundled file's format."""
    p = Path(path)
    return parse_lexicon(p.read_text(encoding="utf-8"), str(p))
