"""The order of an index's documents: by name, as ``sorted`` orders names, on both engines.

An index's ids are its documents' positions in name order, and ties between equal scores go
to the smaller id, so the order decides rankings. The native registry sorts the names in
Rust (``_native.sort_by_name``); these tests hold that sort to Python's on random names
chosen to share long prefixes, to differ past the first 16 bytes, and to be prefixes of each
other, and check the registry's index and its name -> id map agree with it.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_available
from toolsurface.models import Tool
from toolsurface.registry import ToolRegistry
from toolsurface.retrieval.engine.backend import backend

needs_native = pytest.mark.skipif(not native_available(), reason="the native core is not built")

# Few letters and long shared heads, so that names often tie on their first 16 bytes.
name_text = st.one_of(
    st.text(alphabet="ab_\x00é\u044f\U0001f600", max_size=24),
    st.sampled_from(["", "github__list_pull", "github__list_pull_requests"]).flatmap(
        lambda head: st.text(alphabet="ab_", max_size=4).map(lambda tail: head + tail)
    ),
)


@needs_native
@settings(max_examples=400, deadline=None)
@given(names=st.lists(name_text, max_size=40))
def test_native_sort_orders_as_sorted_and_keeps_ties_in_order(names: list[str]) -> None:
    from toolsurface import _native

    values = [object() for _ in names]
    done = _native.sort_by_name(list(names), values)
    assert done is not None
    got_names, got_values = done
    # Python's stable sort of (name, position) pairs: equal names keep their order.
    order = sorted(range(len(names)), key=names.__getitem__)
    assert got_names == [names[i] for i in order]
    assert all(a is values[i] for a, i in zip(got_values, order, strict=True))


HEAD16 = "abcdefghijklmnop"  # names that tie on their first 16 bytes, then differ


@needs_native
def test_native_sort_past_a_tied_16_byte_head() -> None:
    from toolsurface import _native

    names = [
        HEAD16 + "\x00",
        HEAD16,
        HEAD16 + "\u00e9",
        HEAD16 + "a",
        HEAD16 + "\x00a",
        HEAD16[:-1],
        HEAD16 + "\U0001f600",
        HEAD16 + "\x7f",
        HEAD16[:-1] + "\x00",
        HEAD16 + "a",
    ]
    for seed in range(20):
        shuffled = names[:]
        random.Random(seed).shuffle(shuffled)
        done = _native.sort_by_name(shuffled, list(range(len(shuffled))))
        assert done is not None
        assert done[0] == sorted(shuffled)


@needs_native
@pytest.mark.parametrize(
    "odd",
    [7, None, b"bytes", "lone \ud800 surrogate", type("Name", (str,), {})("subclass")],
    ids=["int", "None", "bytes", "surrogate", "str subclass"],
)
def test_native_sort_declines_what_python_must_order(odd: object) -> None:
    from toolsurface import _native

    names = ["b", odd, "a"]
    assert _native.sort_by_name(names, [1, 2, 3]) is None  # type: ignore[arg-type]
    assert names == ["b", odd, "a"]  # the caller's list is untouched


@needs_native
def test_native_sort_refuses_lists_of_different_lengths() -> None:
    from toolsurface import _native

    with pytest.raises(ValueError, match="2 names but 1 values"):
        _native.sort_by_name(["a", "b"], [1])


@pytest.mark.parametrize("engine", ["native", "pure"])
def test_backend_orders_by_name_with_or_without_the_native_sort(engine: str) -> None:
    if engine == "native" and not native_available():
        pytest.skip("the native core is not built")
    be = backend(engine)
    # On the native engine the sort is Rust's: a module without it would pass unchecked.
    assert (getattr(be, "name_sort", None) is not None) == (engine == "native")
    rng = random.Random(5)
    names = [f"srv{rng.randrange(50)}__tool_{i}" for i in range(300)]
    rng.shuffle(names)
    fields = [(n, "", "", "", "") for n in names]
    expected = sorted(names)
    variants = [be, dataclasses.replace(be, name_sort=None)] if engine == "native" else [be]
    for each in variants:
        got_names, got_fields = each.by_name(list(names), list(fields))
        assert got_names == expected
        assert [f[0] for f in got_fields] == expected


def test_registry_index_ids_follow_name_order_whatever_the_registration_order(
    engine_name: str,
) -> None:
    names = [f"t{i:03d}_{'z' * (i % 3)}" for i in range(60)]
    random.Random(9).shuffle(names)
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many(Tool(name=n, description="same words for all") for n in names)
    reg.unregister(names[0])
    built = reg._current()
    assert built.names == sorted(names[1:])
    assert built.ids == {n: i for i, n in enumerate(sorted(names[1:]))}
    # Equal scores are ranked by name: the id order.
    hits = reg.search("same words", k=5)
    assert [h.name for h in hits] == sorted(names[1:])[:5]
    assert [h.name for h in reg.search("same words", k=5, admitted=names[1:4])] == sorted(
        names[1:4]
    )


def test_the_name_to_id_map_is_made_only_when_a_search_needs_it(engine_name: str) -> None:
    reg = ToolRegistry(engine=engine_name)  # type: ignore[arg-type]
    reg.register_many(Tool(name=f"tool_{i}", description="send a message") for i in range(5))
    reg.search("send a message")
    built = reg._current()
    assert "ids" not in vars(built)  # a plain search: no map
    hits = reg.search("send a message", admitted=["tool_3", "tool_1"])
    assert [h.name for h in hits] == ["tool_1", "tool_3"]
    assert built.ids == {f"tool_{i}": i for i in range(5)}
