"""Snapshots in this process only: the gateway's store when no ``--store`` is given."""

from __future__ import annotations

import threading
import time

from toolsurface.gateway.store.base import MAX_STORED, digest_of

__all__ = ["MemoryStore"]


class MemoryStore:
    """Snapshots in this process only: sessions last as long as the process."""

    shared = False

    def __init__(self, ttl: float | None = None, *, max_sessions: int = MAX_STORED) -> None:
        self.ttl = ttl
        self.max_sessions = max_sessions
        self._rows: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``."""
        with self._lock:
            row = self._rows.get(digest_of(session_id))
            if row is None:
                return None
            if self.ttl is not None and time.monotonic() - row[0] > self.ttl:
                del self._rows[digest_of(session_id)]
                return None
            return row[1]

    def peek(self, session_id: str) -> tuple[bool, str | None]:
        """Always known: ``load`` is a dictionary lookup under a lock held for no I/O."""
        return True, self.load(session_id)

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot."""
        with self._lock:
            key = digest_of(session_id)
            self._rows.pop(key, None)  # re-inserted last: the dict is in order of writing
            self._rows[key] = (time.monotonic(), snapshot)
            while len(self._rows) > self.max_sessions:
                del self._rows[next(iter(self._rows))]

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        with self._lock:
            self._rows.pop(digest_of(session_id), None)
