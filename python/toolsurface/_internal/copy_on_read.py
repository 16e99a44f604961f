"""A list whose first items are shared with other lists, copied for its reader item by item.

A render's unchanged part (the same definitions in every session's request) is made once
and shared; handing each request a deep copy of it cost more than the plan. A
:class:`CopyOnRead` list holds the shared items as they are and gives Python code a private
copy of each the first time it reads it (index, slice, iteration, ``pop``, pickling...),
kept in place of the shared one, so a host that edits its request never edits another's.
A reader that takes the items in C without iterating (``orjson``, ``==``, ``repr``) reads
them as they are and pays for no copy; ``json.dumps`` iterates, so it gets the copies.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any, SupportsIndex, overload

__all__ = ["CopyOnRead"]


class CopyOnRead(list[Any]):
    """A list of which the first ``shared`` items are copied (by ``copy``) on first read."""

    __slots__ = ("_copy", "_fresh")

    def __init__(self, items: Iterable[Any], shared: int, copy: Callable[[Any], Any]) -> None:
        super().__init__(items)
        self._copy = copy
        # One flag per shared item: 0 while it is the shared object, 1 once it is our copy.
        self._fresh = bytearray(min(shared, len(self)))

    def _own(self, i: int) -> Any:
        """Item ``i`` (0 <= i < len), made this list's own copy first if it is shared."""
        item = list.__getitem__(self, i)
        fresh = self._fresh
        if i < len(fresh) and not fresh[i]:
            item = self._copy(item)
            list.__setitem__(self, i, item)
            fresh[i] = 1
        return item

    def _own_all(self) -> None:
        """Copy every shared item still shared: from here on the list is a plain list."""
        for i in range(len(self._fresh)):
            self._own(i)
        self._fresh = bytearray()

    def _index(self, index: SupportsIndex) -> int:
        i = operator.index(index)
        return i + len(self) if i < 0 else i

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            for i in range(*index.indices(len(self))):
                self._own(i)
            return list.__getitem__(self, index)
        i = self._index(index)
        if 0 <= i < len(self):
            return self._own(i)
        return list.__getitem__(self, index)  # raises IndexError as a list does

    @overload
    def __setitem__(self, index: SupportsIndex, value: Any) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Any]) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any) -> None:
        if isinstance(index, slice):
            self._own_all()
        else:
            i = self._index(index)
            if 0 <= i < len(self._fresh):
                self._fresh[i] = 1  # replaced: the shared item is no longer here
        list.__setitem__(self, index, value)

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._own_all()
        list.__delitem__(self, index)

    def __iter__(self) -> Iterator[Any]:
        i = 0
        while i < len(self):
            yield self._own(i)
            i += 1

    def __reversed__(self) -> Iterator[Any]:
        self._own_all()
        return list.__reversed__(self)

    def __contains__(self, value: object) -> bool:
        self._own_all()
        return list.__contains__(self, value)

    def __add__(self, other: list[Any]) -> list[Any]:
        self._own_all()
        return list(list.__iter__(self)) + other

    def __radd__(self, other: list[Any]) -> list[Any]:
        self._own_all()
        return [*other, *list.__iter__(self)]

    def __mul__(self, n: SupportsIndex) -> list[Any]:
        self._own_all()
        return list(list.__iter__(self)) * n

    __rmul__ = __mul__

    def __imul__(self, n: SupportsIndex) -> CopyOnRead:
        self._own_all()
        return list.__imul__(self, n)

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        # Pickled, copied or deep-copied as the plain list of its items, each its own copy.
        self._own_all()
        return (list, (list(list.__iter__(self)),))

    def copy(self) -> list[Any]:
        """A plain list of the items, each its own copy."""
        self._own_all()
        return list.copy(self)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove and return an item (its own copy)."""
        self._own_all()
        return list.pop(self, index)

    def insert(self, index: SupportsIndex, value: Any) -> None:
        """Insert an item (the shared ones copied first)."""
        self._own_all()
        list.insert(self, index, value)

    def remove(self, value: Any) -> None:
        """Remove the first item equal to ``value``."""
        self._own_all()
        list.remove(self, value)

    def index(self, value: Any, *args: SupportsIndex) -> int:
        """The index of the first item equal to ``value``."""
        self._own_all()
        return list.index(self, value, *args)

    def count(self, value: Any) -> int:
        """How many items equal ``value``."""
        self._own_all()
        return list.count(self, value)

    def reverse(self) -> None:
        """Reverse in place."""
        self._own_all()
        list.reverse(self)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """Sort in place (the shared items copied first)."""
        self._own_all()
        list.sort(self, *args, **kwargs)

    def clear(self) -> None:
        """Remove every item."""
        self._fresh = bytearray()
        list.clear(self)
