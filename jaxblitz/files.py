"""Writing files safely: every file jaxblitz writes goes through :func:`atomic_write`.

A temporary file in the same folder, flushed to disk, then renamed over the target:
a crash, a full disk or Ctrl-C never leaves a half-written file where a good one
was, and never leaves the temporary file behind. The result gets the permissions
any other tool would give it (0666 less the umask), not ``mkstemp``'s 0600.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = [
    "DirectoryInUseError",
    "DirectoryLock",
    "atomic_write",
    "umask",
    "write_json",
]


def umask() -> int:
    """The process's umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: the classic read-by-setting (not atomic)
    os.umask(mask)
    return mask


def atomic_write(
    path: str | os.PathLike, write: Callable[[IO], Any], *, text: bool = False
) -> Path:
    """Call ``write(f)`` on a temporary file beside ``path``, then rename it there.

    ``f`` is opened ``"w"`` with ``text`` else ``"wb"``. Any failure (a full disk
    included) removes the temporary file and re-raises; the old file stays.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w" if text else "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~umask())
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename in (None, tmp):
            e.filename = str(path)  # name the file the user knows, not the temp
        raise
    return path


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON, atomically."""
    return atomic_write(path, lambda f: json.dump(obj, f, indent=2), text=True)


class DirectoryInUseError(RuntimeError):
    """Another live process holds the lock on a directory."""


class DirectoryLock:
    """An exclusive lock on ``directory`` for one process (``.jaxblitz.lock``).

    ``fcntl.flock`` on a lock file holding the owner's pid, host and start time:
    the kernel drops the lock when its process dies, even by ``kill -9``, so a
    dead run's lock is taken over by the next one, while a second live run is
    refused with who holds it. Where ``fcntl`` is missing (Windows) it does
    nothing and says so in :attr:`supported`.
    """

    NAME = ".jaxblitz.lock"

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / self.NAME
        self.previous: dict | None = None  # what a dead holder left in the file
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            self.supported = False
            return
        self.supported = True
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise DirectoryInUseError(
                    f"{Path(directory)} is in use by another run ("
                    f"{_describe(holder)}). Wait for it to finish, or give this run "
                    "its own --out-dir."
                ) from None
            # The file may have been unlinked by a holder releasing it between our
            # open and our flock: then our lock guards nothing; take a fresh one.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.previous = _read_holder(fd) or None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_me()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)  # unlink first: see __init__
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _me() -> dict:
    import socket
    import time

    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _read_holder(fd: int) -> dict:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _describe(holder: dict) -> str:
    if not holder:
        return "its lock file is still being written"
    return (
        f"pid {holder.get('pid')} on host {holder.get('host')}, started "
        f"{holder.get('started')}"
    )
