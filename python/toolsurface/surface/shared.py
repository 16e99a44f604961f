"""What the surfaces of one registry share: artefacts made once per registry view and policy.

A registry view is one catalogue generation and groups version; every run over that view
with the same admitted tools (policy and allowlist) and the same settings makes the same
decision, base list, catalogue block and rendered prefix, so they are made once and kept
here, beside the view, for every surface that asks (a new run's first plan, a restored
one's, a plan after a call). The policy rule holds by the keys: each artefact is keyed by
the admitted set it was made for (:class:`Admitted`), directly or through its decision, so
a run never reads one made for a policy that admits a tool its own does not.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from toolsurface.registry.view import RegistryView
from toolsurface.surface.policy import Policy

__all__ = ["Admitted", "Ident", "SharedView", "shared_of"]

_T = TypeVar("_T")
#: Artefacts kept per view; past this many the oldest half goes (runs with many distinct
#: policies or settings over one view never grow it without bound).
MAX_ARTEFACTS = 512


class Ident(Generic[_T]):
    """A key part that is one object, by identity (a decision, an admitted set).

    It holds the object, so the identity cannot be reused while the key is kept.
    """

    __slots__ = ("obj",)

    def __init__(self, obj: _T) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ident) and other.obj is self.obj


class Admitted:
    """The tools a policy admits in one view, in name order: one object per distinct set."""

    __slots__ = ("__weakref__", "names")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names


class SharedView:
    """One view's shared artefacts: admitted sets by policy, and anything keyed by them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._admitted: dict[Hashable, Admitted] = {}
        self._by_names: dict[tuple[str, ...], Admitted] = {}
        self._memo: dict[Hashable, Any] = {}

    def admitted(
        self,
        policy: Policy,
        allowlist: frozenset[str] | None,
        compute: Callable[[], tuple[str, ...]],
    ) -> Admitted:
        """The admitted set for ``policy`` and ``allowlist``; ``compute`` makes its names.

        A policy of names (or none) gives the same set in every run, so it is looked up by
        the policy; a predicate may answer differently for each run (it may read the
        session's user), so it is asked again for every run and only the set it gives is
        shared, by its names.
        """
        key: Hashable | None = None if callable(policy) else (policy, allowlist)
        if key is not None:
            found = self._admitted.get(key)
            if found is not None:
                return found
        names = compute()
        with self._lock:
            made = self._by_names.setdefault(names, Admitted(names))
            if key is not None:
                self._admitted[key] = made
            self._trim(self._admitted)
            self._trim(self._by_names)
        return made

    def get(self, key: Hashable, make: Callable[[], _T]) -> _T:
        """The artefact under ``key`` (which names what it was made from), made once.

        Two runs may make it at once; both get an equal one, and one is kept.
        """
        found = self._memo.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        made = make()
        with self._lock:
            self._trim(self._memo)
            return self._memo.setdefault(key, made)  # type: ignore[no-any-return]

    @staticmethod
    def _trim(table: dict[Any, Any]) -> None:
        """Drop the older half of ``table`` once it is full (dicts keep insertion order)."""
        if len(table) >= MAX_ARTEFACTS:
            for old in list(table)[: len(table) // 2]:
                del table[old]


_MISSING = object()
_VIEWS: weakref.WeakKeyDictionary[RegistryView, SharedView] = weakref.WeakKeyDictionary()
_VIEWS_LOCK = threading.Lock()


def shared_of(view: RegistryView) -> SharedView:
    """The shared artefacts of ``view``, kept while the view lives (the registry keeps it)."""
    found = _VIEWS.get(view)
    if found is None:
        with _VIEWS_LOCK:
            found = _VIEWS.get(view)
            if found is None:
                found = _VIEWS[view] = SharedView()
    return found
