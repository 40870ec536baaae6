"""One sweep at a time per run folder: an exclusive lock on DIR/.lock (on an object
store, a lock object with a lease: ObjectLock below).

The lock is an `flock` on the file, so the kernel releases it when its holder dies
however it dies (kill -9 included) and a second sweep can never slip in between a
check and a write. The file also holds the holder's PID, host and start time: that
is what a refused sweep prints, and a file left non-empty by a holder that is gone
is reported as a stale lock being taken over.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path
from typing import Any

from sim.outputs.provenance import now

LOCK_NAME = ".lock"


class RunLocked(Exception):
    """Another live process holds the run folder's lock."""


def _describe(holder: dict[str, Any]) -> str:
    return (f"PID {holder.get('pid', '?')} on host {holder.get('host', '?')}, started "
            f"{holder.get('started', '?')}")


def _read(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 1 << 16).decode("utf-8", "replace")
    try:
        holder = json.loads(text) if text.strip() else {}
    except ValueError:
        holder = {"pid": "?", "host": "?", "started": "?", "garbled": text[:80]}
    return holder if isinstance(holder, dict) else {}


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, TypeError, ProcessLookupError):
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class RunLock:
    """`with RunLock(folder, command) as lock:` holds the folder for this process.

    Raises RunLocked (one line) when another process holds it; `lock.took_over` is
    the message about a stale lock it replaced, or None."""

    def __init__(self, folder: Path, command: str = ""):
        self.path = Path(folder) / LOCK_NAME
        self.command = command
        self.fd: int | None = None
        self.took_over: str | None = None

    def acquire(self) -> RunLock:
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(fd)
                os.close(fd)
                raise RunLocked(f"{self.path.parent}: another sweep is writing this folder "
                                f"({_describe(holder)}); wait for it to finish or stop it"
                                ) from None
            # the file may have been unlinked by its last holder between our open and
            # our flock: then we hold a lock on a file nobody else will open, so retry
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        old = _read(fd)
        if old:
            state = "no longer running" if old.get("host") != socket.gethostname() or \
                not _alive(old.get("pid")) else "holds no lock on it"
            self.took_over = (f"{self.path.parent}: taking over the stale lock of "
                              f"{_describe(old)} ({state})")
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": now(),
              "command": self.command}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(me).encode())
        os.fsync(fd)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        # emptied, not deleted: an empty file is "no holder", and deleting would race
        # with a process that opened it but has not locked it yet
        os.ftruncate(self.fd, 0)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


# how long an object-store lock holds without its holder renewing it (a third of it
# between renewals): a sweep killed with -9 blocks its folder this long at most.
# SIM_LOCK_LEASE_S changes it (the tests' killed sweeps use a short one)
LEASE_S = 60.0


def lease_s() -> float:
    try:
        return max(1.0, float(os.environ.get("SIM_LOCK_LEASE_S", LEASE_S)))
    except ValueError:
        return LEASE_S


class ObjectLock:
    """RunLock's interface for a run folder on an object store, which has no flock.

    The lock is the object DIR/.lock, created only if absent (a conditional put:
    S3's `If-None-Match: *`), so of two sweeps starting at once exactly one creates
    it. It holds the holder's PID, host, start and a lease (`expires`, epoch seconds)
    that a thread renews every LEASE_S / 3 with a put conditional on the object
    still being the one it wrote (`If-Match` its ETag). A sweep that finds the lock
    refuses while the lease runs; once it has run out (the holder died without
    releasing) it takes the lock over with a put conditional on that stale object's
    ETag, so of two sweeps taking over at once one wins. Release deletes the
    object."""

    def __init__(self, folder: Path, command: str = "", lease: float | None = None):
        self.path = folder / LOCK_NAME
        self.command = command
        self.lease_s = lease if lease is not None else lease_s()
        self.took_over: str | None = None
        self.lost: str | None = None   # set when a renewal found the lock taken
        self._etag: str | None = None
        self._stop = None
        self._thread = None

    def _body(self) -> bytes:
        import time

        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "started": self._started, "command": self.command,
                           "expires": time.time() + self.lease_s}).encode()

    def _put(self, **condition) -> str | None:
        """Put the lock object under `condition`; its new ETag, or None when the
        condition failed (another sweep's object is there)."""
        fs, key = self.path.fs, self.path.path  # type: ignore[attr-defined]
        try:
            out = fs.pipe_file(key, self._body(), **condition)
        except (FileExistsError, PermissionError, OSError) as exc:
            if isinstance(exc, FileExistsError) or "condition" in str(exc).lower():
                return None
            raise
        etag = (out or {}).get("ETag") if isinstance(out, dict) else None
        return etag or fs.info(key).get("ETag")

    def acquire(self) -> ObjectLock:
        import time

        self._started = now()
        fs, key = self.path.fs, self.path.path  # type: ignore[attr-defined]
        self._etag = self._put(mode="create")
        if self._etag is None:
            try:
                info = fs.info(key)
                holder = json.loads(fs.cat_file(key).decode("utf-8", "replace") or "{}")
            except (FileNotFoundError, ValueError):
                info, holder = {}, {}
            holder = holder if isinstance(holder, dict) else {}
            if float(holder.get("expires", 0) or 0) > time.time():
                raise RunLocked(f"{self.path.parent}: another sweep is writing this folder "
                                f"({_describe(holder)}); wait for it to finish or stop it")
            if info:
                self._etag = self._put(IfMatch=info["ETag"])
            else:  # released meanwhile
                self._etag = self._put(mode="create")
            if self._etag is None:
                raise RunLocked(f"{self.path.parent}: another sweep took this folder's lock "
                                "just now; wait for it to finish or stop it")
            self.took_over = (f"{self.path.parent}: taking over the stale lock of "
                              f"{_describe(holder)} (its lease ran out)")
        self._start_renewing()
        return self

    def _start_renewing(self) -> None:
        import threading

        self._stop = threading.Event()

        def renew() -> None:
            while not self._stop.wait(self.lease_s / 3):
                try:
                    etag = self._put(IfMatch=self._etag)
                except OSError:  # the store is unreachable for now: try again
                    continue
                if etag is None:
                    self.lost = f"{self.path.parent}: another sweep took over this lock"
                    return
                self._etag = etag

        self._thread = threading.Thread(target=renew, name="sim-lock-lease", daemon=True)
        self._thread.start()

    def release(self) -> None:
        if self._etag is None:
            return
        self._stop.set()
        self._thread.join()
        fs, key = self.path.fs, self.path.path  # type: ignore[attr-defined]
        try:
            if fs.info(key).get("ETag") == self._etag:  # still ours
                fs.rm_file(key)
        except FileNotFoundError:
            pass
        self._etag = None

    def __enter__(self) -> ObjectLock:
        return self.acquire()

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def run_lock(folder: Path, command: str = "") -> RunLock | ObjectLock:
    """The lock of a run folder: RunLock (flock) on a disk, ObjectLock on an object
    store (sim.outputs.storage)."""
    from sim.outputs.storage import is_remote

    return ObjectLock(folder, command) if is_remote(folder) else RunLock(folder, command)
