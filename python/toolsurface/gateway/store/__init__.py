"""The gateway's session stores: the protocol, memory, a directory, Redis, and `open_store`."""

from toolsurface.gateway.store.base import (
    DirectoryStore,
    MemoryStore,
    Peekable,
    SessionStore,
    StoreError,
    digest_of,
    open_store,
)

__all__ = [
    "DirectoryStore",
    "MemoryStore",
    "Peekable",
    "SessionStore",
    "StoreError",
    "digest_of",
    "open_store",
]
