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


#: The languages with bundled stopwords and lexicon entries of their own (docs/analysis.md
#: §4a); English and Russian are the index's and share ``lexicon.tsv``.
LANGUAGE_FILES = ("en", "ru", "de", "es", "fr", "uk", "zh")
_OWN_LEXICONS = ("de", "es", "fr", "uk", "zh")


@functools.cache
def stopwords() -> tuple[str, ...]:
    """Every language's stopwords and fillers, each tagged ``<xx> word``.

    English and Russian ones are stopwords of every text; the others only of a request in
    their language; all are the votes of language detection (docs/analysis.md §4a).
    """
    words: list[str] = []
    for lang in LANGUAGE_FILES:
        for line in read_data_text(f"stopwords_{lang}.txt").splitlines():
            word = line.strip()
            if word and not word.startswith("#"):
                words.append(f"<{lang}> {word}")
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
    """The bundled lexicon: ``data/lexicon.tsv``, then one ``data/lexicon_xx.tsv`` a language.

    Each language file's sources are tagged ``<xx>`` (docs/analysis.md §4a).
    """
    entries = parse_lexicon(read_data_text("lexicon.tsv"), "data/lexicon.tsv")
    for lang in _OWN_LEXICONS:
        name = f"lexicon_{lang}.tsv"
        for source, targets in parse_lexicon(read_data_text(name), f"data/{name}"):
            entries.append((f"<{lang}> {source}", targets))
    return tuple(entries)


def lexicon_from_file(path: str | Path) -> list[tuple[str, str]]:
    """Entries of a host's own lexicon file in the bundled file's format."""
    p = Path(path)
    return parse_lexicon(p.read_text(encoding="utf-8"), str(p))
