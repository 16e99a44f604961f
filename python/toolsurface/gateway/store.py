"""Where the gateway keeps each session's snapshot: memory, a directory, or Redis.

A session's snapshot is written after every change, so a gateway restarted mid-session (or
another gateway process over the same store) resumes it with the same tool list. Every
store keys a session by the SHA-256 of its id, so an id never becomes a path or a key
verbatim. The store is the truth; what a process holds in memory is a cache of it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolsurface.errors import ToolsurfaceError

__all__ = [
    "DirectoryStore",
    "MemoryStore",
    "SessionStore",
    "StoreError",
    "digest_of",
    "open_store",
]


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


class MemoryStore:
    """Snapshots in this process only: sessions last as long as the process."""

    shared = False

    def __init__(self, ttl: float | None = None) -> None:
        self.ttl = ttl
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

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot."""
        with self._lock:
            self._rows[digest_of(session_id)] = (time.monotonic(), snapshot)

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        with self._lock:
            self._rows.pop(digest_of(session_id), None)


class DirectoryStore:
    """Snapshots in ``root`` (made if missing), one file a session, written atomically.

    Several processes on one machine may share the directory: a write is a temporary file
    renamed over the old one, so a reader sees the old snapshot or the new one, never half.
    With a ``ttl`` a snapshot not written for that many seconds is expired (and removed).
    """

    shared = True

    def __init__(self, root: str | Path, ttl: float | None = None) -> None:
        self.root = Path(root)
        self.ttl = ttl
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {self.root}: cannot make the directory ({exc})") from None

    def _path(self, session_id: str) -> Path:
        return self.root / f"session-{digest_of(session_id)[:32]}.json"

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``."""
        path = self._path(session_id)
        try:
            if self.ttl is not None and time.time() - path.stat().st_mtime > self.ttl:
                path.unlink(missing_ok=True)
                return None
            return path.read_text("utf-8")
        except FileNotFoundError:
            return None

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot, atomically."""
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(snapshot)
            os.replace(tmp, self._path(session_id))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        self._path(session_id).unlink(missing_ok=True)


def open_store(spec: str | None, *, ttl: float | None = None) -> SessionStore:
    """The store a ``--store`` spec names: ``redis://…`` or ``rediss://…``, else a directory.

    No spec is a :class:`MemoryStore`. ``ttl`` (seconds) expires a session not written for
    that long; it must be positive.
    """
    if ttl is not None and not ttl > 0:
        raise StoreError(f"store ttl: must be a positive number of seconds, got {ttl!r}")
    if spec is None:
        return MemoryStore(ttl)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from toolsurface.gateway.store_redis import RedisStore

        return RedisStore(spec, ttl=ttl)
    if "://" in spec:
        raise StoreError(
            f"store {spec.split('://', 1)[0]}://…: unknown scheme (redis:// or a path)"
        )
    return DirectoryStore(spec, ttl)
