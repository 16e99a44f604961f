"""What a session store is: the protocol, the error and the digest that names a session.

Every store keys a session by the SHA-256 of its id (``digest_of``), so an id never becomes
a path or a key verbatim.

A store that can tell without blocking whether a snapshot is the one it last handed out
also has ``peek`` (:class:`Peekable`): the gateway reads every session before each request,
and ``peek`` spares that read a trip to a worker thread when nothing changed.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

from toolsurface.errors import ToolsurfaceError

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MAX_STORED",
    "Peekable",
    "SessionStore",
    "StoreError",
    "digest_of",
]

#: How many sessions a store keeps by default; past it the least recently written goes.
MAX_STORED = 10_000
#: The most bytes a stored snapshot may have to be read: far past a session's (a snapshot of
#: the most rows a snapshot may list, ``surface.snapshot.MAX_ROWS``, is about 10 MB), and
#: a bound on what a file put in a session's place costs the gateway to parse.
MAX_SNAPSHOT_BYTES = 16 << 20


class StoreError(ToolsurfaceError, ValueError):
    """A store spec the gateway cannot use, or a store that cannot be reached."""


def digest_of(session_id: str) -> str:
    """The hex SHA-256 of a session id: how every store names the session."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


@runtime_checkable
class SessionStore(Protocol):
    """Snapshots by session id; shared by every process that should share sessions."""

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None`` (never stored, deleted or expired)."""
        ...

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot (and restart its time to live)."""
        ...

    def delete(self, session_id: str) -> None:
        """Forget the session (the client ended it)."""
        ...

    @property
    def shared(self) -> bool:
        """Whether other processes may read this store (then snapshots must be sealed)."""
        ...


@runtime_checkable
class Peekable(Protocol):
    """A store that can often answer ``load`` at once, without I/O that may block."""

    def peek(self, session_id: str) -> tuple[bool, str | None]:
        """What ``load`` would return now, if known without blocking.

        ``(True, text or None)`` when known; ``(False, None)`` when only ``load``, in a
        worker thread, can say.
        """
        ...
