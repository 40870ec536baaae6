"""One sweep at a time per run folder: an exclusive lock on DIR/.lock.

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
