"""``open_store``: the store a ``--store`` spec names (Redis, a directory, or memory)."""

from __future__ import annotations

from toolsurface.gateway.store.base import MAX_STORED, SessionStore, StoreError
from toolsurface.gateway.store.directory import DirectoryStore
from toolsurface.gateway.store.memory import MemoryStore
from toolsurface.gateway.store.redis import RedisStore

__all__ = ["open_store"]


def open_store(
    spec: str | None, *, ttl: float | None = None, max_sessions: int = MAX_STORED
) -> SessionStore:
    """The store a ``--store`` spec names: ``redis://…`` or ``rediss://…``, else a directory.

    No spec is a :class:`MemoryStore`. ``ttl`` (seconds) expires a session not written for
    that long; it must be positive.
    """
    if ttl is not None and not ttl > 0:
        raise StoreError(f"store ttl: must be a positive number of seconds, got {ttl!r}")
    if max_sessions < 1:
        raise StoreError(f"store max sessions: must be at least 1, got {max_sessions!r}")
    if spec is None:
        return MemoryStore(ttl, max_sessions=max_sessions)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec, ttl=ttl, max_sessions=max_sessions)
    if "://" in spec:
        raise StoreError(
            f"store {spec.split('://', 1)[0]}://…: unknown scheme (redis:// or a path)"
        )
    return DirectoryStore(spec, ttl, max_sessions=max_sessions)
