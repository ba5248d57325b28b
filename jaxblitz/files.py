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

__all__ = ["atomic_write", "umask", "write_json"]


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
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` as indented JSON, atomically."""
    return atomic_write(path, lambda f: json.dump(obj, f, indent=2), text=True)
