"""Where the gateway keeps each session's snapshot: memory, a directory, or Redis.

A session's snapshot is written after every change, so a gateway restarted mid-session (or
another gateway process over the same store) resumes it with the same tool list. Every
store keys a session by the SHA-256 of its id, so an id never becomes a path or a key
verbatim. The store is the truth; what a process holds in memory is a cache of it.

A store that can tell without blocking whether a snapshot is the one it last handed out
also has ``peek`` (:class:`Peekable`): the gateway reads every session before each request,
and ``peek`` spares that read a trip to a worker thread when nothing changed.

``base`` holds the protocol and the error, ``memory``, ``directory`` and ``redis`` the
stores, ``factory`` ``open_store``; the package re-exports the names the old
``gateway/store.py`` module had.
"""

from toolsurface.gateway.store.base import (
    MAX_SNAPSHOT_BYTES,
    Peekable,
    SessionStore,
    StoreError,
    digest_of,
)
from toolsurface.gateway.store.directory import DirectoryStore
from toolsurface.gateway.store.factory import open_store
from toolsurface.gateway.store.memory import MemoryStore

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "DirectoryStore",
    "MemoryStore",
    "Peekable",
    "SessionStore",
    "StoreError",
    "digest_of",
    "open_store",
]
