"""Blitz 4, "Save/load the model": files that cannot run code or lie about numbers.

safetensors (a JSON header, then raw arrays) never executes anything on load,
unlike ``torch.save``'s pickles, but it records no checksum; these helpers add a
SHA-256 of the names, dtypes, shapes and bytes to the header's metadata and check it
on load. Used by :mod:`jaxblitz.checkpoints` (exported weights) and
``jaxblitz.compat.save``/``load``. A PyTorch pickle handed to a loader is refused
with how to convert it.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import json
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load as _st_load
from safetensors.numpy import save

from jaxblitz.files import atomic_write, kind_of

CHECKSUM_KEY = "jaxblitz.sha256"  # in safetensors metadata and checkpoint metadata


class CorruptFileError(ValueError):
    """A file this library wrote (or reads) is truncated, altered or not its format."""


def read_whole(path: str | os.PathLike) -> bytes:
    """All of the regular file at ``path``; a device or a pipe is refused unread.

    Such a file may never end (``/dev/zero``), so reading it whole would fill the
    memory; a FIFO is opened without waiting for a writer (torch.load's open
    would wait). A folder raises ``IsADirectoryError``, as ``open`` does.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode  # the file opened, whatever a link pointed at
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        raise CorruptFileError(
            f"{os.fspath(path)} is a {kind_of(mode)}, not a regular file: it "
            "would be read to an end it may never reach. Give the path of the "
            "file itself."
        )
    with open(fd, "rb") as f:
        return f.read()


def array_digest(arrays: dict[str, Any], extra: str = "") -> str:
    """SHA-256 over names, dtypes, shapes and bytes of ``arrays`` (and ``extra``)."""
    h = hashlib.sha256(extra.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _looks_like_pickle(blob: bytes) -> str | None:
    if blob[:4] == b"PK\x03\x04":
        return "a zip archive, torch.save's default format"
    if len(blob) > 1 and blob[0] == 0x80 and 2 <= blob[1] <= 5:
        return f"a protocol-{blob[1]} pickle, torch.save's legacy format"
    return None


def refuse_pickle(path: str | os.PathLike, kind: str, who: str) -> None:
    """Raise a ``CorruptFileError`` explaining why a pickle is not loaded."""
    stem = Path(path).with_suffix(".safetensors").name
    convert = (
        f"    import torch, safetensors.torch\n"
        f"    state_dict = torch.load({str(path)!r}, weights_only=True)\n"
        f"    safetensors.torch.save_file(state_dict, {stem!r})"
    )
    if importlib.util.find_spec("torch") is not None:
        how = f"PyTorch is installed: convert it once with\n{convert}"
    else:
        how = "Install PyTorch (pip install torch) and convert it once with\n" + convert
    raise CorruptFileError(
        f"{path} is a PyTorch pickle ({kind}), not safetensors. {who} never "
        "unpickles, because loading a pickle can run arbitrary code hidden in the "
        f"file. {how}\n(weights_only=True makes torch.load refuse code as well.)"
    )


def read_safetensors(
    path: str | os.PathLike, who: str = "jaxblitz"
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(arrays, metadata)`` of a safetensors file, checksum-verified when it has one.

    A pickle, a truncated or corrupt file and one whose checksum fails are each a
    :class:`CorruptFileError` saying which and what to do.
    """
    blob = read_whole(path)
    try:
        header_len = int.from_bytes(blob[:8], "little")
        metadata = json.loads(blob[8 : 8 + header_len]).get("__metadata__") or {}
        try:
            arrays = _st_load(blob)
        except KeyError:  # a dtype NumPy's reader lacks (BF16): through JAX's
            arrays = _load_via_jax(path)
    except (SafetensorError, ValueError, UnicodeDecodeError, AttributeError) as e:
        kind = _looks_like_pickle(blob)
        if kind is not None:
            refuse_pickle(path, kind, who)
        raise CorruptFileError(
            f"{path} is not a readable safetensors file ({e}): it is truncated, "
            "corrupt or in another format. Write it again (or restore a copy)."
        ) from e
    expected = metadata.get(CHECKSUM_KEY)
    if expected is not None:
        actual = array_digest(arrays, _metadata_text(metadata))
        if actual != expected:
            raise CorruptFileError(
                f"{path} fails its checksum (sha256 {actual}, recorded {expected}): "
                "the file was altered or damaged after it was written. Write it "
                "again (or restore a copy); its numbers cannot be trusted."
            )
    return arrays, metadata


def _load_via_jax(path) -> dict[str, np.ndarray]:
    from safetensors import safe_open

    with safe_open(path, framework="flax") as f:
        return {k: np.asarray(f.get_tensor(k)) for k in f.keys()}  # noqa: SIM118


def _metadata_text(metadata: dict[str, str]) -> str:
    return json.dumps(
        {k: v for k, v in metadata.items() if k != CHECKSUM_KEY}, sort_keys=True
    )


def write_safetensors(
    arrays: dict[str, np.ndarray], path: str | os.PathLike, metadata: dict[str, str]
) -> Path:
    """Write ``arrays`` with ``metadata`` and a checksum, atomically; the same
    arrays and metadata always give the same bytes. A link at ``path`` is refused
    (:func:`jaxblitz.files.atomic_write`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.asarray(v, order="C") for k, v in arrays.items()}  # keeps 0-d
    metadata = {
        **metadata,
        CHECKSUM_KEY: array_digest(arrays, _metadata_text(metadata)),
    }
    blob = _sorted_metadata(save(arrays, metadata=metadata))
    return atomic_write(path, lambda f: f.write(blob))


def _sorted_metadata(blob: bytes) -> bytes:
    """``blob`` with its header's metadata in sorted key order.

    safetensors keeps the metadata in a Rust ``HashMap``, whose order changes from
    one call to the next: the same arrays would give other bytes each time. The
    tensors' order and offsets are already fixed, and the data is left as it is.
    """
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + size])
    if "__metadata__" in header:
        header["__metadata__"] = dict(sorted(header["__metadata__"].items()))
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as before
    return len(text).to_bytes(8, "little") + text + blob[8 + size :]
