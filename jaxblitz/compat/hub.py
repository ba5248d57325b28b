"""Blitz 2, "A Gentle Introduction to torch.autograd" (its weights): ``torch.hub``.

``load_state_dict_from_url`` reads ``$TORCH_HOME/hub/checkpoints/<file>`` (the
folder torch and torchvision cache weights in, so a file torch downloaded is
found without network) with ``jaxblitz.compat.load``, and downloads it first as
torch does when it is missing. ``download_url_to_file`` writes through a
temporary file beside the destination, renamed into place when the download
(and its hash, when asked) is complete. ``get_dir``/``set_dir`` are torch's.

``load``, ``list`` and ``help`` are refused by name: they download a GitHub
repository and run its ``hubconf.py``, which builds models with PyTorch's own
code.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import urllib.error
import warnings
from typing import IO, Any
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from jaxblitz.files import atomic_write

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
# the hash prefix in torchvision's file names: resnet18-f37072fd.pth
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
READ_DATA_CHUNK = 128 * 1024

_hub_dir: str | None = None


def get_dir() -> str:
    """``set_dir``'s folder, else ``$TORCH_HOME/hub``; ``TORCH_HOME`` defaults to
    ``$XDG_CACHE_HOME/torch`` or ``~/.cache/torch``."""
    if os.getenv("TORCH_HUB"):
        warnings.warn(
            "TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if _hub_dir is not None:
        return _hub_dir
    cache = os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR)
    home = os.getenv(ENV_TORCH_HOME, os.path.join(cache, "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Downloads ``url`` to ``dst``; a ``hash_prefix`` must begin the file's
    SHA-256 (torch's ``RuntimeError`` otherwise, and ``dst`` is left alone)."""
    from tqdm import tqdm

    def write(out: IO[bytes]) -> None:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as response:
            size = response.info().get_all("Content-Length")
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(
                total=int(size[0]) if size else None,
                disable=not progress,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
            ) as bar:
                while buffer := response.read(READ_DATA_CHUNK):
                    out.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    bar.update(len(buffer))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(
                    f'invalid hash value (expected "{hash_prefix}", got "{digest}")'
                )

    atomic_write(os.path.expanduser(dst), write, links="follow")


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """The object saved at ``url``, read from ``model_dir`` (default
    ``get_dir()/checkpoints``) and downloaded there first when missing."""
    from jaxblitz.compat.serialization import load as torch_load

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
            stacklevel=2,
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        try:
            download_url_to_file(url, cached_file, match and match.group(1), progress)
        except urllib.error.URLError as error:
            error.add_note(
                f"{url} could not be downloaded to {cached_file}; saving the file "
                "there lets it load without network"
            )
            raise
    if _is_legacy_zip(cached_file):
        raise NotImplementedError(
            "load_state_dict_from_url: a checkpoint zipped in PyTorch's format from "
            "before 1.6 is not supported by jaxblitz.compat; unzip it and load the "
            "file inside with torch.load"
        )
    return torch_load(cached_file, map_location=map_location, weights_only=weights_only)


def _is_legacy_zip(filename: str) -> bool:
    """One file zipped alone: torch's format before 1.6 (newer ones hold more)."""
    import zipfile

    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _refuse(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.hub.{name} is not supported by jaxblitz.compat: it downloads a "
        "GitHub repository and runs its hubconf.py, which builds the model with "
        "PyTorch's own code. Build the model with compat's modules (or "
        "jaxblitz.compat.vision.models) and load its weights with "
        "torch.hub.load_state_dict_from_url"
    )


def load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Refused: see the module's docstring."""
    raise _refuse("load")


def list(github: str, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 -- torch's
    """Refused: see the module's docstring."""
    raise _refuse("list")


def help(github: str, model: str, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    """Refused: see the module's docstring."""
    raise _refuse("help")
