"""The native module's constants against the pure engine's: both engines count the same.

The core's constants (field count and names, the settings cache, the fallback's limits,
the payload weight, the token rules) have Python twins in the pure engine. These tests pin
each native one to its twin, type and value, on whichever engine is live: the native
module imports either way, so the pin holds for both runs of the suite.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import native_available
from toolsurface.retrieval import fields
from toolsurface.retrieval.analysis import analyzer as analysis
from toolsurface.retrieval.analysis import reading
from toolsurface.retrieval.engine import alias_match, pure

if not native_available():
    pytest.skip(
        "the native core is not built: no native constants to compare", allow_module_level=True
    )

from toolsurface import _native

#: Each native constant and the pure engine's value it must equal.
PINNED: dict[str, Any] = {
    "N_FIELDS": pure.N_FIELDS,
    "FIELD_NAMES": fields.FIELD_NAMES,
    "SETTINGS_CACHE": pure.SETTINGS_CACHE,
    "FUZZY_MIN_CHARS": pure.FUZZY_MIN_CHARS,
    "FUZZY_MIN_SIMILARITY": pure.FUZZY_MIN_SIMILARITY,
    "FUZZY_PER_TOKEN": pure.FUZZY_PER_TOKEN,
    "ALIASES_PRUNED_UP_TO": alias_match.ALIASES_PRUNED_UP_TO,
    "PAYLOAD_WEIGHT": pure.PAYLOAD_WEIGHT,
    "MIN_TOKEN_CHARS": analysis.MIN_TOKEN_CHARS,
    "CONNECTORS": analysis.CONNECTORS,
    "FILE_EXTENSIONS": analysis.FILE_EXTENSIONS,
    "ER_ROOTS": analysis.ER_ROOTS,
    "ASK_MARKERS": analysis.ASK_MARKERS,
    "SUBJECT_MARKERS": analysis.SUBJECT_MARKERS,
    "FUNCTION_WORDS": analysis.FUNCTION_WORDS,
    "READ_VERBS": reading.READ_VERBS,
    "WRITE_VERBS": reading.WRITE_VERBS,
}


@pytest.mark.parametrize(("name", "expected"), PINNED.items(), ids=list(PINNED))
def test_native_constant_equals_the_pure_engines(name: str, expected: Any) -> None:
    value = getattr(_native, name)
    if isinstance(expected, frozenset):  # the verb lists: a tuple there, without repeats
        assert len(set(value)) == len(value)
        value = frozenset(value)
    assert type(value) is type(expected)
    assert value == expected


def test_every_native_constant_is_pinned() -> None:
    exported = {name for name in dir(_native) if name.isupper()}
    assert exported == set(PINNED)


def test_field_names_count_the_fields() -> None:
    assert len(_native.FIELD_NAMES) == _native.N_FIELDS
