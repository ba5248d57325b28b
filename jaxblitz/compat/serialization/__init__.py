"""Blitz 4 (saving the model): ``torch.save`` / ``torch.load``, PyTorch's own files.

``save`` writes what real PyTorch's ``torch.save`` writes, the zip archive
(``_use_new_zipfile_serialization=False``: the legacy stream), so
``torch.load(PATH, weights_only=True)`` in PyTorch reads it; to a path where
``torch.save`` would write it (through a symbolic link, into a hard link's shared
file or a device), atomically where it can (temp file + rename, see
:mod:`jaxblitz.files`), straight into a file object such as ``io.BytesIO``. It takes
what a checkpoint holds: Tensors and Parameters (views keep sharing their storage,
the same tensor twice stays one), Python numbers, strings, bytes, None, dtypes,
devices, ``torch.Size``, and dicts (``OrderedDict`` and a ``state_dict``'s
``_metadata`` included), lists, tuples and sets of them. Anything else is refused
with where it is, never saved as something else.

``load`` reads both of PyTorch's formats, and the safetensors files earlier
jaxblitz versions wrote (told apart by their first bytes). The pickle inside a
PyTorch file is never unpickled by Python's ``pickle``: :mod:`._unpickler` reads
its opcodes with PyTorch's ``weights_only=True`` rules and builds compat objects
from an allowlist (:mod:`._torch_globals`), so a file cannot run code, with
``weights_only=False`` too: a file that needs arbitrary objects is refused, unless
the user trusts them by name, as in PyTorch: ``add_safe_globals([Config])`` or
``with safe_globals([Config]):`` lets a file make ``Config`` objects (that class
is then called and built as PyTorch's weights-only unpickler does).
"""

from __future__ import annotations

import os
import warnings
from typing import IO, Any

from jaxblitz.compat.serialization._trusted import (  # noqa: F401 (torch's)
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from jaxblitz.files import atomic_write
from jaxblitz.integrity import CorruptFileError, read_whole

_WHO = "jaxblitz.compat.load"
_SAFETY = (
    "jaxblitz.compat.load never unpickles arbitrary objects, because loading them "
    "can run arbitrary code hidden in the file"
)


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------


def save(
    obj: Any,
    f: str | os.PathLike | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """``torch.save(net.state_dict(), PATH)``; see the module doc for what it takes."""
    from jaxblitz.compat.serialization import _torch_write

    if pickle_module is not None and getattr(pickle_module, "__name__", "") != "pickle":
        raise NotImplementedError(
            "torch.save with a pickle_module is not supported by jaxblitz.compat: it "
            "writes what torch.load(weights_only=True) reads"
        )
    if pickle_protocol != 2:
        raise NotImplementedError(
            f"torch.save with pickle_protocol={pickle_protocol}: jaxblitz.compat "
            "writes protocol 2, torch's default, the one weights_only loading reads"
        )
    if _disable_byteorder_record:
        raise NotImplementedError("torch.save(_disable_byteorder_record=True)")

    def write(out: IO[bytes], name: str) -> None:
        if _use_new_zipfile_serialization:
            _torch_write.write_zip(obj, out, name)
        else:
            _torch_write.write_legacy(obj, out)

    if hasattr(f, "write") and not isinstance(f, str | os.PathLike):
        write(f, "archive")
        return
    path = _path(f, "jaxblitz.compat.save")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    # The pickle is built before the temp file opens: a refused object leaves the
    # old file in place.
    if path.endswith(os.sep):
        raise RuntimeError(f"{_ENFORCE}:720] . invalid file name: {path}")
    blob = _bytes_of(write, os.path.splitext(os.path.basename(path))[0])
    try:
        atomic_write(path, lambda out: out.write(blob), links="follow")  # as torch
    except OSError as e:
        if e.errno is None:
            raise
        raise RuntimeError(
            f"{_ENFORCE}:747] . open file failed with strerror: {os.strerror(e.errno)}"
        ) from None


# torch's file writer's failed check, in its words (its C++ source and line)
_ENFORCE = "[enforce fail at inline_container.cc"


def _bytes_of(write: Any, name: str) -> bytes:
    import io

    out = io.BytesIO()
    write(out, name)
    return out.getvalue()


def _path(f: Any, who: str) -> str:
    try:
        return os.fspath(f)
    except TypeError:
        raise TypeError(
            f"{who} takes a file path (str or os.PathLike) or a binary file object, "
            f"got a {type(f).__name__}"
        ) from None


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------


def load(
    f: str | os.PathLike | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """``torch.load(PATH, weights_only=True)``: what ``torch.save`` was given."""
    if pickle_module is not None:
        if weights_only:  # torch's own refusal
            raise RuntimeError(
                "Can not safely load weights when explicit pickle_module is specified"
            )
        raise NotImplementedError(f"torch.load with a pickle_module: {_SAFETY}")
    passed = bool(pickle_load_args)
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(
            f"torch.load got unexpected keyword arguments {sorted(pickle_load_args)} "
            "(jaxblitz.compat takes encoding= only)"
        )
    if weights_only is not False and passed:
        warnings.warn("pickle_load_args only works if `weights_only=False`.",
                      stacklevel=2)  # fmt: skip
    is_path = not hasattr(f, "read") or isinstance(f, str | os.PathLike)
    if is_path:
        name = _path(f, _WHO)
        blob = read_whole(name)
    else:
        if mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        name, blob = "the file object", f.read()
        if not isinstance(blob, bytes | bytearray):
            raise TypeError(f"{_WHO}: f.read() gave a {type(blob).__name__}, not bytes")
        blob = bytes(blob)
    return _load_bytes(blob, name, is_path, map_location, weights_only, mmap, encoding)


def _load_bytes(
    blob: bytes,
    name: str,
    is_path: bool,
    map_location: Any,
    weights_only: bool | None,
    mmap: bool | None,
    encoding: str,
) -> Any:
    from jaxblitz.compat.serialization import _safetensors_format, _torch_read
    from jaxblitz.compat.serialization._torch_globals import Loader
    from jaxblitz.compat.serialization._unpickler import UnpicklingError

    is_zip = blob[:4] == b"PK\x03\x04"
    if not is_zip and _safetensors_format.looks_like_safetensors(blob):
        import tempfile

        if is_path:
            return _safetensors_format.read(name, _WHO)
        with tempfile.TemporaryDirectory() as folder:  # read_safetensors takes paths
            path = os.path.join(folder, "file.safetensors")
            with open(path, "wb") as out:
                out.write(blob)
            return _safetensors_format.read(path, _WHO)
    if mmap and not is_zip:
        raise RuntimeError(
            "mmap can only be used with files saved with `torch.save("
            f"{name + ', ' if is_path else ''}_use_new_zipfile_serialization=True), "
            "please torch.save your checkpoint with this option in order to use mmap."
        )
    loader = Loader(_placement(map_location), len(blob), encoding)
    try:
        if is_zip:
            return _torch_read.read_zip(blob, name, loader)
        if _torch_read.is_legacy(blob):
            return _torch_read.read_legacy(blob, name, loader)
    except UnpicklingError as e:
        also = (
            "; weights_only=False does not change that" if weights_only is False else ""
        )
        raise UnpicklingError(
            f"Weights only load failed. {name} holds a pickle that "
            f"torch.load(weights_only=True) refuses, or a broken one. {_SAFETY}"
            f"{also}.\n\nWeightsUnpickler error: {e}"
        ) from None
    if _torch_read.is_tar(blob):
        raise NotImplementedError(
            f"{name} is in PyTorch's legacy .tar format (before 0.4); "
            "torch.load(weights_only=True) does not read it either"
        )
    raise CorruptFileError(
        f"{name} is not a file torch.save writes (a zip archive or the legacy "
        "pickle stream) nor a jaxblitz safetensors file: it is truncated, corrupt "
        "or in another format."
    )


class _CPUStorage:
    """What a ``map_location`` callable is handed: the storage, read on the CPU."""

    device = "cpu"

    def cpu(self) -> _CPUStorage:
        return self


def _placement(map_location: Any):
    """``location tag in the file -> compat device (None: the default, cpu)``."""
    from jaxblitz.compat.tensor import _dtype

    def place(location: str) -> Any:
        target: Any = location
        if map_location is None:
            pass
        elif isinstance(map_location, str | bytes):
            target = (
                map_location.decode()
                if isinstance(map_location, bytes)
                else map_location
            )
        elif isinstance(map_location, _dtype.device):
            target = str(map_location)
        elif isinstance(map_location, dict):
            target = map_location.get(location, location)
        elif callable(map_location):
            given = _CPUStorage()
            result = map_location(given, location)
            if result is given:
                target = "cpu"
            elif result is not None:
                raise NotImplementedError(
                    "torch.load: a map_location callable that returns a new storage "
                    "is not supported by jaxblitz.compat; pass a device such as "
                    "map_location='cpu' instead"
                )
        else:
            raise TypeError(f"map_location of type {type(map_location).__name__}")
        d = _dtype.device(target)
        if d.type == "cpu":
            return None
        if d.type == "cuda" and _dtype.accelerator_type() != "cuda":
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use torch.load with map_location=torch.device('cpu') "
                "to map your storages to the CPU."
            )
        _dtype.jax_device(d)  # raises for a device this process lacks
        return d

    return place
