"""Snapshots in a directory, one file a session, written atomically; shared on one machine."""

from __future__ import annotations

import logging
import os
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from toolsurface._internal.durable import sync_directory
from toolsurface.gateway.store.base import MAX_SNAPSHOT_BYTES, MAX_STORED, StoreError, digest_of

__all__ = ["DirectoryStore"]

_log = logging.getLogger("toolsurface.gateway")


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
    #: A temporary file older than this many seconds is a leftover of a write that never
    #: finished (a crash); younger ones may be another process's write under way.
    LEFTOVER_AGE = 60.0

    def __init__(
        self, root: str | Path, ttl: float | None = None, *, max_sessions: int = MAX_STORED
    ) -> None:
        self.root = Path(root)
        self.ttl = ttl
        self.max_sessions = max_sessions
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {self.root}: cannot make the directory ({exc})") from None
        self._clean_leftovers()
        # The settled stamp of each session file last read, and the text read with it.
        self._seen: OrderedDict[Path, tuple[tuple[int, int, int, int], str]] = OrderedDict()
        self._seen_lock = threading.Lock()
        # The last modification time this store gave a file (``_next_stamp``).
        self._last_stamp = 0
        self._stamp_lock = threading.Lock()

    def _clean_leftovers(self) -> None:
        """Remove the temporary files of writes that never finished, with a log line."""
        removed = 0
        cutoff = time.time() - self.LEFTOVER_AGE
        for path in self.root.glob("*.tmp"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:
                continue  # gone already, or not ours to remove
        if removed:
            _log.info(
                "toolsurface gateway: store %s: removed %d leftover temporary file(s)",
                self.root,
                removed,
            )

    def _evict(self, keep: Path) -> None:
        """Past ``max_sessions`` files, remove the least recently written (never ``keep``)."""
        files: list[tuple[int, Path]] = []
        for path in self.root.glob("session-*.json"):
            try:
                files.append((path.stat().st_mtime_ns, path))
            except OSError:
                continue
        excess = len(files) - self.max_sessions
        if excess <= 0:
            return
        files.sort()
        for _, path in [f for f in files if f[1] != keep][:excess]:
            self._forget(path)
            path.unlink(missing_ok=True)
        _log.info(
            "toolsurface gateway: store %s: over %d sessions, dropped the %d least recently "
            "written",
            self.root,
            self.max_sessions,
            excess,
        )

    def _next_stamp(self) -> int:
        """A modification time for the next file written: now, but after every earlier one.

        Eviction drops the least recently written first, by modification time; a
        filesystem's clock may give two writes in a row the same tick (a session's
        snapshot and its client's binding, written one after the other), whose order
        would then be the file names'. Each write of this store is later than the last.
        """
        with self._stamp_lock:
            self._last_stamp = max(time.time_ns(), self._last_stamp + 1)
            return self._last_stamp

    def _path(self, session_id: str) -> Path:
        return self.root / f"session-{digest_of(session_id)[:32]}.json"

    def _expired(self, mtime: float) -> bool:
        return self.ttl is not None and time.time() - mtime > self.ttl

    def _forget(self, path: Path) -> None:
        with self._seen_lock:
            self._seen.pop(path, None)

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``.

        Only a regular file of at most ``MAX_SNAPSHOT_BYTES`` is read: a symbolic link (to
        ``/dev/zero``, say), a FIFO, a directory or a file past the bound in a session's
        place was not written by this store, and is a :class:`StoreError` naming it.
        """
        path = self._path(session_id)
        # No link followed, no wait on a FIFO: the file is checked before a byte is read.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            self._forget(path)
            return None
        except OSError as exc:  # a link (ELOOP), or what cannot be opened for reading
            raise StoreError(
                f"session file {path.name} in {self.root}: cannot be read as a file this "
                f"store wrote ({exc.strerror})"
            ) from None
        # The stamp comes from the open file itself, so it is the stamp of the text read.
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a directory opens too, and cannot be read
            os.close(fd)
            raise StoreError(f"session file {path.name} in {self.root}: not a regular file")
        with os.fdopen(fd, "rb") as file:
            if st.st_size > MAX_SNAPSHOT_BYTES:
                raise StoreError(
                    f"session file {path.name} in {self.root}: {st.st_size:,} bytes, past "
                    f"the {MAX_SNAPSHOT_BYTES:,} a snapshot may have"
                )
            if self._expired(st.st_mtime):
                self._forget(path)
                path.unlink(missing_ok=True)
                return None
            # Bytes that are not UTF-8 read as U+FFFD: a broken snapshot the gateway
            # refuses (and starts the session fresh), never an error of the request.
            data = file.read(MAX_SNAPSHOT_BYTES + 1)
            if len(data) > MAX_SNAPSHOT_BYTES:  # grown since fstat
                raise StoreError(
                    f"session file {path.name} in {self.root}: past the "
                    f"{MAX_SNAPSHOT_BYTES:,} bytes a snapshot may have"
                )
            text = data.decode("utf-8", errors="replace")
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
        """Replace the session's snapshot, atomically and durably.

        A temporary file in the same directory is written, flushed and fsynced, renamed
        over the old one, and the directory fsynced: after a crash the session is the old
        snapshot or the new one, and a leftover temporary file is removed at the next start.
        """
        path = self._path(session_id)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix="session-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(snapshot.encode("utf-8"))
                out.flush()
                stamp = self._next_stamp()
                if os.utime in os.supports_fd:
                    os.utime(out.fileno(), ns=(stamp, stamp))
                else:  # pragma: no cover - Windows
                    os.utime(tmp, ns=(stamp, stamp))
                os.fsync(out.fileno())
                # The stamp the file keeps once renamed (a rename moves no mtime or inode).
                st = os.fstat(out.fileno())
            self._forget(path)
            new = not path.exists()
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        sync_directory(self.root)
        if new:
            self._evict(keep=path)
        with self._seen_lock:
            self._seen[path] = ((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), snapshot)
            self._seen.move_to_end(path)
            while len(self._seen) > self.PEEKED:
                self._seen.popitem(last=False)

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        self._forget(self._path(session_id))
        self._path(session_id).unlink(missing_ok=True)
