"""Field texts packed as the native registry keeps them: the format, and the index reading it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import native_available
from toolsurface.retrieval.field_texts import FieldTexts
from toolsurface.retrieval.packed_fields import pack_fields, unpack_fields

# Texts as ``tool_fields`` leaves them: any characters but lone surrogates.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@given(st.tuples(TEXT, TEXT, TEXT, TEXT))
def test_unpacking_gives_back_what_was_packed(texts: tuple[str, str, str, str]) -> None:
    fields: FieldTexts = ("some_tool", *texts)
    packed = pack_fields(fields)
    assert isinstance(packed, bytes)
    assert unpack_fields("some_tool", packed) == fields
    # The five strings are kept as they are.
    assert unpack_fields("some_tool", fields) is fields


def test_the_layout_is_lengths_then_utf8() -> None:
    packed = pack_fields(("t", "", "Привет.", "body", "p"))
    assert packed == bytes([0, 0, 0, 0, 13, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0]) + (
        "Привет.bodyp".encode()
    )


needs_native = pytest.mark.skipif(not native_available(), reason="the native core is not built")

DOCS: list[FieldTexts] = [
    ("fs__read_file", "", "Read a file.", "Returns the text of a file.", "path\nthe path"),
    ("fs__write_file", "save", "Write a file.", "Überschreibt die Datei.", "path\ncontent"),
    ("gh__list_issues", "", "Список задач.", "", "repo\nstate"),
]


@needs_native
def test_an_index_of_packed_texts_is_the_index_of_the_strings() -> None:
    from toolsurface.retrieval.engine.backend import backend

    native = backend("native")
    names = [d[0] for d in DOCS]
    plain = native.index(names, DOCS)
    packed = native.index(names, [pack_fields(d) for d in DOCS])
    assert packed.digest() == plain.digest()  # type: ignore[attr-defined]
    # With learned texts: a pair after packed texts, a sixth string after five.
    learned = ["open my file", "", "show the tasks"]
    six = [(*d, t) for d, t in zip(DOCS, learned)]
    pairs = [(pack_fields(d), t) for d, t in zip(DOCS, learned)]
    assert native.index(names, pairs).digest() == native.index(names, six).digest()  # type: ignore[attr-defined]
    assert native.index(names, pairs).digest() != plain.digest()  # type: ignore[attr-defined]


@needs_native
def test_malformed_packed_texts_and_other_forms_are_refused_by_document() -> None:
    from toolsurface.retrieval.engine.backend import backend

    native = backend("native")
    names = [d[0] for d in DOCS]
    good = [pack_fields(d) for d in DOCS]
    short = good[1][:-1]  # the lengths say one byte more than follows
    with pytest.raises(ValueError, match=r'fields\[1\].*"fs__write_file".*malformed'):
        native.index(names, [good[0], short, good[2]])
    not_utf8 = bytes(12) + bytes([1, 0, 0, 0, 0xFF])
    with pytest.raises(ValueError, match=r'fields\[2\].*"gh__list_issues"'):
        native.index(names, [good[0], good[1], not_utf8])
    with pytest.raises(TypeError, match=r"fields\[0\].*int"):
        native.index(names, [7, good[1], good[2]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"fields\[1\].*learned text of type int"):
        native.index(names, [good[0], (good[1], 3), good[2]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"fields\[2\].*tuple of 3 items"):
        native.index(names, [good[0], good[1], ("a", "b", "c")])
    with pytest.raises(TypeError, match=r"fields\[1\].*pair whose first item is of type bytearray"):
        native.index(names, [good[0], (bytearray(good[1]), "x"), good[2]])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="3 names but 2 field tuples"):
        native.index(names, good[:2])
