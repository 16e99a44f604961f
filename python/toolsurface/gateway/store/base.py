"""Where the gateway keeps each session's snapshot: memory, a directory, or Redis.

A session's snapshot is written after every change, so a gateway restarted mid-session (or
another gateway process over the same store) resumes it with the same tool list. Every
store keys a session by the SHA-256 of its id, so an id never becomes a path or a key
verbatim. The store is the truth; what a process holds in memory is a cache of it.

A store that can tell without blocking whether a snapshot is the one it last handed out
also has ``peek`` (:class:`Peekable`): the gateway reads every session before each request,
and ``peek`` spares that read a trip to a worker thread when nothing changed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolsurface.errors import ToolsurfaceError

__all__ = [
    "DirectoryStore",
    "MemoryStore",
    "Peekable",
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


@runtime_checkable
class Peekable(Protocol):
    """A store that can often answer ``load`` at once, without I/O that may block."""

    def peek(self, session_id: str) -> tuple[bool, str | None]:
        """What ``load`` would return now, if known without blocking.

        ``(True, text or None)`` when known; ``(False, None)`` when only ``load``, in a
        worker thread, can say.
        """
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

    def peek(self, session_id: str) -> tuple[bool, str | None]:
        """Always known: ``load`` is a dictionary lookup under a lock held for no I/O."""
        return True, self.load(session_id)

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

    ``peek`` answers from the text this store last read or wrote when the file's identity
    (device, inode, size, modification time) is still what it was then: one ``os.stat``, no
    read. A stamp of a file read is kept only if it was last modified more than ``SETTLED``
    seconds before, so that any later write, by any process, gives the file a later
    modification time (timestamps are coarse; a write within the same tick could keep the
    time) or a new inode (every write is a new file renamed into place). A stamp of a file
    this store wrote is kept at once: another process's write renames in a file made while
    this one still held its inode, so a different inode; the stamp could come back only if
    that inode were freed by one more write and reused by another, both in the same
    timestamp tick and with the same size.
    """

    shared = True
    #: How long after its last write a file's stamp is trusted (above any filesystem's
    #: timestamp granularity, two seconds on FAT).
    SETTLED = 3.0
    #: At most this many sessions' stamps and texts are kept for ``peek``.
    PEEKED = 4096

    def __init__(self, root: str | Path, ttl: float | None = None) -> None:
        self.root = Path(root)
        self.ttl = ttl
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {self.root}: cannot make the directory ({exc})") from None
        # The settled stamp of each session file last read, and the text read with it.
        self._seen: OrderedDict[Path, tuple[tuple[int, int, int, int], str]] = OrderedDict()
        self._seen_lock = threading.Lock()

    def _path(self, session_id: str) -> Path:
        return self.root / f"session-{digest_of(session_id)[:32]}.json"

    def _expired(self, mtime: float) -> bool:
        return self.ttl is not None and time.time() - mtime > self.ttl

    def _forget(self, path: Path) -> None:
        with self._seen_lock:
            self._seen.pop(path, None)

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``."""
        path = self._path(session_id)
        try:
            # The stamp comes from the open file itself, so it is the stamp of the text read.
            with path.open("rb") as file:
                st = os.fstat(file.fileno())
                if self._expired(st.st_mtime):
                    self._forget(path)
                    path.unlink(missing_ok=True)
                    return None
                text = file.read().decode("utf-8")
        except FileNotFoundError:
            self._forget(path)
            return None
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with self._seen_lock:
            seen = self._seen.get(path)
            if time.time_ns() - st.st_mtime_ns > self.SETTLED * 1e9:
                self._seen[path] = (stamp, text)
                self._seen.move_to_end(path)
                while len(self._seen) > self.PEEKED:
                    self._seen.popitem(last=False)
            elif seen is None or seen != (stamp, text):  # not the file this store wrote
                self._seen.pop(path, None)
        return text

    def peek(self, session_id: str) -> tuple[bool, str | None]:
        """The text last read, if the file is still the one it was read from (see above)."""
        path = self._path(session_id)
        with self._seen_lock:
            seen = self._seen.get(path)
        if seen is None:
            return False, None
        try:
            st = os.stat(path)
        except OSError:
            return False, None
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != seen[0] or self._expired(
            st.st_mtime
        ):
            return False, None
        return True, seen[1]

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot, atomically."""
        path = self._path(session_id)
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(snapshot.encode("utf-8"))
                out.flush()
                # The stamp the file keeps once renamed (a rename moves no mtime or inode).
                st = os.fstat(out.fileno())
            self._forget(path)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        with self._seen_lock:
            self._seen[path] = ((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), snapshot)
            self._seen.move_to_end(path)
            while len(self._seen) > self.PEEKED:
                self._seen.popitem(last=False)

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        self._forget(self._path(session_id))
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
        from toolsurface.gateway.store.redis import RedisStore

        return RedisStore(spec, ttl=ttl)
    if "://" in spec:
        raise StoreError(
            f"store {spec.split('://', 1)[0]}://…: unknown scheme (redis:// or a path)"
        )
    return DirectoryStore(spec, ttl)
