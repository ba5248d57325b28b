"""Writing files safely: every file jaxblitz writes goes through :func:`atomic_write`.

A temporary file in the same folder, flushed to disk, then renamed over the target:
a crash, a full disk or Ctrl-C never leaves a half-written file where a good one
was, and never leaves the temporary file behind. A new file gets the permissions
any other tool would give it (0666 less the umask), not ``mkstemp``'s 0600.

Links are handled one of two ways, chosen with ``atomic_write(..., links=...)``:

- ``links="refuse"`` (the default) is for the files jaxblitz writes into folders of
  its own: a run's ``--out-dir`` (its lock, metrics, pictures, weights) and the
  data cache. A symbolic link (dangling too), a hard-linked file or a special file
  (a device, a FIFO) at the path was not made by jaxblitz, so it is refused with a
  :class:`LinkRefusedError` naming the path, and nothing is written through it:
  no file outside the folder is ever changed. :func:`refuse_links` is the same
  check on its own, for looking at every output before a run starts.
- ``links="follow"`` is for a path a user named to an API that mirrors one which
  opens that path, such as ``compat.save`` (torch: ``torch.save(obj, PATH)``): the
  bytes go where ``open(path, "wb")`` would put them, as torch's do: through a
  symbolic link into its target (the link stays), into the one file that all of a
  hard link's names share, into a device such as ``/dev/null``, and into a
  writable file in a folder that is not writable. Where it can (a new file, or a
  regular file with one name, in a writable folder; for a symbolic link, its
  target), it still writes a temporary file and renames it, keeping the file's
  permissions and owner; elsewhere it writes in place, as torch does, after the
  whole content is ready in memory. Errors name the path the user gave.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

__all__ = [
    "DirectoryInUseError",
    "DirectoryLock",
    "LinkRefusedError",
    "atomic_write",
    "refuse_links",
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


class LinkRefusedError(OSError):
    """A path jaxblitz would write in a folder of its own is a link it did not make
    (symbolic or hard) or a special file; nothing was written through it."""

    def __str__(self) -> str:
        return (
            f"{self.filename}: {self.strerror}. Nothing was written to it: remove "
            "it or move it away, or use another folder."
        )


def refuse_links(path: str | os.PathLike) -> Path:
    """Raise :class:`LinkRefusedError` if ``path`` is a link or a special file.

    A symbolic link (dangling or not), a regular file with more than one hard link,
    a device, FIFO or socket are refused; nothing there, a regular file with one
    name and a real folder pass. Only ``path`` itself is looked at, not the
    folders above it. Returns ``path`` as a ``Path``.
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return path
    if stat.S_ISLNK(st.st_mode):
        try:
            to = f" (to {os.readlink(path)})"
        except OSError:
            to = ""
        raise LinkRefusedError(
            errno.ELOOP,
            f"a symbolic link{to} is in the place of a file jaxblitz writes, and "
            "jaxblitz never writes through a link it did not make",
            str(path),
        )
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise LinkRefusedError(
            errno.EMLINK,
            f"a file with {st.st_nlink} hard links is in the place of a file "
            "jaxblitz writes, and jaxblitz never writes a file that other names share",
            str(path),
        )
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise LinkRefusedError(
            errno.EEXIST,
            f"a {kind_of(st.st_mode)} is in the place of a file jaxblitz writes, and "
            "jaxblitz writes only regular files of its own there",
            str(path),
        )
    return path


def kind_of(mode: int) -> str:
    """What a file that is not regular is, by its ``st_mode``: "character device"."""
    for test, name in [
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
    ]:
        if test(mode):
            return name
    return "special file"


def atomic_write(
    path: str | os.PathLike,
    write: Callable[[IO], Any],
    *,
    text: bool = False,
    links: Literal["refuse", "follow"] = "refuse",
) -> Path:
    """Call ``write(f)`` on a temporary file beside ``path``, then rename it there.

    ``f`` is opened ``"w"`` with ``text`` else ``"wb"``. Any failure (a full disk
    included) removes the temporary file and re-raises; the old file stays.
    ``links`` says what a link at ``path`` gets (see the module docstring):
    ``"refuse"`` for jaxblitz's own files, ``"follow"`` for a path a user named to
    a torch-style API; there ``f`` may be an in-memory buffer that is then
    written in place.
    """
    path = Path(path)
    if links == "refuse":
        refuse_links(path)
        return _replace(path, path, write, text, follow=False, old=None)
    if links != "follow":
        raise ValueError(f"links must be 'refuse' or 'follow', got {links!r}")
    target, st = path, _lstat(path)
    if st is not None and stat.S_ISLNK(st.st_mode):  # torch writes the target
        target = Path(os.path.realpath(path))
        st = _lstat(target)
    try:
        if st is None or (stat.S_ISREG(st.st_mode) and st.st_nlink == 1):
            try:
                return _replace(path, target, write, text, follow=True, old=st)
            except _InPlace:
                pass
        _write_in_place(target, write, text)
    except OSError as e:
        if e.filename in (None, str(target)):
            e.filename = str(path)  # the path the user named
        raise
    return path


class _InPlace(Exception):
    """``links="follow"``: the temporary file cannot be made, cannot be given the
    old file's owner, or cannot be renamed there; torch's way is left."""


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _replace(
    path: Path,
    target: Path,
    write: Callable[[IO], Any],
    text: bool,
    *,
    follow: bool,
    old: os.stat_result | None,
) -> Path:
    """Temp file + fsync + rename onto ``target``; ``old`` (the file there, followed
    links only) keeps its permissions and owner."""
    mode = stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~umask()
    try:
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as e:
        if follow and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise _InPlace from e  # a folder not writable: torch writes the file
        e.filename = str(path)
        raise
    try:
        with os.fdopen(fd, "w" if text else "wb") as f:
            if old is not None and (old.st_uid, old.st_gid) != _owner(fd):
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except PermissionError:
                    raise _InPlace from None  # another's file: torch keeps its owner
            os.fchmod(fd, mode)
            write(f)
            f.flush()
            os.fsync(fd)
        try:
            os.replace(tmp, target)
        except OSError as e:  # a file bind-mounted on its own: torch writes into it
            if not (follow and e.errno in (errno.EBUSY, errno.EXDEV)):
                raise
            shutil.copyfile(tmp, target)
        Path(tmp).unlink(missing_ok=True)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename in (None, tmp, str(target)):
            e.filename = str(path)  # name the file the user knows, not the temp
        raise
    return path


def _owner(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_uid, st.st_gid


def _write_in_place(target: Path, write: Callable[[IO], Any], text: bool) -> None:
    """``open(target, "wb")`` and write, as torch.save does; the content is made in
    memory first, so that a failing ``write`` leaves the file as it was."""
    buffer = io.StringIO() if text else io.BytesIO()
    write(buffer)
    with open(target, "w" if text else "wb") as f:
        f.write(buffer.getvalue())
        f.flush()
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # not a device or FIFO
            os.fsync(f.fileno())


def os_error_text(e: OSError) -> str:
    """An OSError as one phrase: its reason and the path it names, if any."""
    where = f" ({e.filename})" if getattr(e, "filename", None) else ""
    return f"{e.strerror or e}{where}"


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON, atomically (a link there is refused)."""
    return atomic_write(path, lambda f: json.dump(obj, f, indent=2), text=True)


class DirectoryInUseError(RuntimeError):
    """Another live process holds the lock on a directory."""


class DirectoryLock:
    """An exclusive lock on ``directory`` for one process (``.jaxblitz.lock``).

    ``fcntl.flock`` on a lock file holding the owner's pid, host and start time:
    the kernel drops the lock when its process dies, even by ``kill -9``, so a
    dead run's lock is taken over by the next one, while a second live run is
    refused with who holds it. A link or special file in the lock file's place is
    a :class:`LinkRefusedError`, never written through. Where ``fcntl`` is missing
    (Windows) it does nothing and says so in :attr:`supported`.
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
            fd = self._open()
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
                same = os.path.samestat(os.fstat(fd), os.lstat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.previous = _read_holder(fd) or None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_me()).encode(), 0)
        self._fd = fd

    def _open(self) -> int:
        """The lock file, opened without following a link; a file that is not
        regular, or has another name too, is closed again and refused."""
        while True:
            refuse_links(self.path)  # the clear error; O_NOFOLLOW and fstat enforce
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
            try:
                fd = os.open(self.path, flags | os.O_CLOEXEC, 0o666 & ~umask())
            except OSError as e:
                if e.errno == errno.ELOOP:  # a link planted since the check
                    refuse_links(self.path)
                raise
            st = os.fstat(fd)
            if st.st_nlink == 0 and stat.S_ISREG(st.st_mode):  # a holder released it
                os.close(fd)
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                os.close(fd)
                refuse_links(self.path)
                raise LinkRefusedError(  # replaced again since: refuse all the same
                    errno.EEXIST,
                    "the lock file changed while it was opened",
                    str(self.path),
                )
            return fd

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
