"""The Snowball stemmer's version range: every release inside it stems as the native engine.

The pure engine stems with the ``snowballstemmer`` package, the native one with
``rust-stemmers`` (Snowball 2 algorithms); the engines must give the same tokens. Every
release from 2.0 to 2.2 gives the same stems over the project's vocabularies (the demo,
the real catalogues and queries, the lexicon: 18,352 words); Snowball 3 changed the English
algorithm (24 of those words differ, Russian none), so pyproject.toml takes ``>=2,<3``.
"""

from __future__ import annotations

import sys
from importlib import metadata
from typing import Any

from packaging.requirements import Requirement

from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 runner
    import tomli as tomllib

#: English words whose stems Snowball 3 changed (found by stemming the vocabularies above
#: with 2.2.0 and 3.1.1): stems that differ between the engines when 3.x is installed.
SNOWBALL_3_CHANGED = (
    "added adding emergency evening internal internally international interval intervals "
    "lateral laterally organic organization organizations organize organized organizer "
    "organizers paste psychologist universal universally university"
).split()


def _declared() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    (stemmer,) = [r for r in found if r.name == "snowballstemmer"]
    return stemmer


def test_the_installed_stemmer_is_in_the_declared_range() -> None:
    declared = _declared()
    assert not any(s.operator == "==" for s in declared.specifier), declared  # a range
    installed = metadata.version("snowballstemmer")
    assert declared.specifier.contains(installed), (installed, str(declared))
    assert not declared.specifier.contains("3.0.0")  # Snowball 3 departs from rust-stemmers


def test_the_words_snowball_3_changed_stem_alike_on_both_engines(
    both_backends: tuple[Any, Any],
) -> None:
    pure, native = both_backends
    installed = metadata.version("snowballstemmer")
    for word in SNOWBALL_3_CHANGED:
        assert pure.tokens(word) == native.tokens(word), (
            f"{word!r}: snowballstemmer {installed} stems it otherwise than the native engine"
        )
