"""Blitz 4, "Save/load the model": training checkpoints and exported weights.

Two kinds of file, both pickle-free and written atomically (a crash never leaves a
half-written file where a good one was):

- training checkpoints (params, optimizer state, step and where the data order
  stands) through orbax-checkpoint, which writes into a temporary directory and
  renames it when complete; ``--resume`` restores the newest complete one;
- final weights as ``weights.safetensors`` with PyTorch ``state_dict`` names and
  layouts, loadable by ``net.load_state_dict(safetensors.torch.load_file(path))``
  (torch: ``torch.save(net.state_dict(), PATH)``).

Neither format checks its own contents, so both carry a SHA-256 of what they hold
(names, dtypes, shapes, bytes; for checkpoints also the metadata), verified on
load: a truncated or bit-flipped file is a ``CorruptFileError`` naming the file,
never silently wrong numbers. Nothing here unpickles: a PyTorch ``.pt``/``.pth``
pickle is refused with how to convert it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from jaxblitz.files import refuse_links
from jaxblitz.integrity import (
    CHECKSUM_KEY,
    CorruptFileError,
    array_digest,
    read_safetensors,
    write_safetensors,
)
from jaxblitz.models import flatten_params, named_shapes, unflatten_params

__all__ = [
    "CheckpointWriteError",
    "Checkpointer",
    "CorruptFileError",
    "load_weights",
    "save_weights",
]


def save_weights(params: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``params`` as safetensors with torch ``state_dict`` names, atomically.

    The same params give the same bytes; a link at ``path`` is refused.
    """
    arrays = {k: np.asarray(v) for k, v in flatten_params(params).items()}
    return write_safetensors(arrays, path, {"format": "pt"})


def load_weights(
    path: str | os.PathLike, like: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Read a safetensors file (ours or ``safetensors.torch.save_file``'s) as params.

    With ``like`` (a params tree), the names and shapes are checked against it and a
    clear error lists what is missing, extra or mis-shaped. A PyTorch pickle
    (``.pt``/``.pth``) is refused, never unpickled; a damaged file is a
    :class:`CorruptFileError`.
    """
    flat, _ = read_safetensors(path, "jaxblitz.checkpoints.load_weights")
    if like is not None:
        expected = named_shapes(like)
        missing = sorted(set(expected) - set(flat))
        unexpected = sorted(set(flat) - set(expected))
        wrong = [
            f"{k}: file has {tuple(flat[k].shape)}, model expects {expected[k]}"
            for k in sorted(set(flat) & set(expected))
            if tuple(flat[k].shape) != tuple(expected[k])
        ]
        if missing or unexpected or wrong:
            raise ValueError(
                f"Error(s) in loading weights from {path}: missing keys {missing}, "
                f"unexpected keys {unexpected}, size mismatches {wrong}."
            )
    return unflatten_params(flat)


class _HeldLogs(logging.Filter):
    """Holds what orbax logs (through absl) while a save runs: released when the
    save succeeds, dropped when it fails and its error says the same."""

    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self._logger = logging.getLogger("absl")

    def filter(self, record):  # hold, don't pass on
        self.records.append(record)
        return False

    def __enter__(self):
        self._logger.addFilter(self)
        return self

    def __exit__(self, *exc):
        self._logger.removeFilter(self)

    def release(self):
        for record in self.records:
            self._logger.handle(record)
        self.records = []


class CheckpointWriteError(OSError):
    """A checkpoint could not be written (the files already there are untouched)."""


def _state_digest(state: Any, meta: dict[str, Any]) -> str:
    def host(x):  # a replicated array spread over processes: this process's copy
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            x = x.addressable_data(0)
        return np.asarray(x)

    flat = jax.tree_util.tree_flatten_with_path(state)[0]
    arrays = {jax.tree_util.keystr(path): host(leaf) for path, leaf in flat}
    return array_digest(arrays, json.dumps(meta, sort_keys=True))


class Checkpointer:
    """Training checkpoints in ``directory`` (orbax), keeping the newest ``keep``.

    A save that never finished (a kill, a second Ctrl-C) leaves orbax's temporary
    folder ``<step>.orbax-checkpoint-tmp``; the next Checkpointer on the folder
    (of process 0) removes those and lists them in :attr:`removed`.
    """

    # orbax's temporary step folders: "<step>.orbax-checkpoint-tmp[-<timestamp>]"
    _TMP = re.compile(r"(\d+)\.orbax-checkpoint-tmp(-\d+)?")

    def __init__(self, directory: str | os.PathLike, keep: int = 2):
        self.directory = Path(directory).absolute()
        refuse_links(self.directory)  # orbax would write wherever a link points
        self.removed: list[Path] = []
        if jax.process_index() == 0:  # the others may start while it saves
            self.removed = self._remove_tmp()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=keep, enable_async_checkpointing=False, create=True
        )
        self._manager = ocp.CheckpointManager(self.directory, options=options)

    def _remove_tmp(self, step: int | None = None) -> list[Path]:
        """Remove orbax's temporary folders (of ``step``, or all) in the directory:
        only real folders named as orbax names them, never through a link."""
        try:
            if stat.S_ISLNK(os.lstat(self.directory).st_mode):
                return []
            names = os.listdir(self.directory)
        except OSError:  # not made yet, or unreadable: orbax says so
            return []
        removed = []
        for name in sorted(names):
            found = self._TMP.fullmatch(name)
            if not found or (step is not None and int(found[1]) != step):
                continue
            path = self.directory / name
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    continue
            except OSError:
                continue
            shutil.rmtree(path, ignore_errors=True)  # never follows a link inside
            if not os.path.lexists(path):
                removed.append(path)
        return removed

    def save(self, step: int, state: Any, meta: dict[str, Any]) -> None:
        """Save the train state (a pytree) and JSON metadata as checkpoint ``step``."""
        meta = {**meta, CHECKSUM_KEY: _state_digest(state, meta)}
        held = _HeldLogs()  # orbax logs a failed write's traceback; we say it once
        try:
            with held:
                self._manager.save(
                    step,
                    args=ocp.args.Composite(
                        state=ocp.args.StandardSave(state),
                        meta=ocp.args.JsonSave(meta),
                    ),
                    force=True,
                )
                self._manager.wait_until_finished()
            held.release()
        except BaseException as e:  # a full disk, a vanished folder: say so, tidy up
            self._remove_tmp(step)
            if not isinstance(e, Exception):  # Ctrl-C, a second signal: stop
                raise
            newest = [s for s in self.all_steps() if s != step]
            kept = (
                f"the earlier checkpoints are intact (newest: step {max(newest)})"
                if newest
                else "no earlier checkpoint exists"
            )
            why = e.strerror if isinstance(e, OSError) and e.strerror else e
            raise CheckpointWriteError(
                f"Could not write checkpoint step {step} in {self.directory}: "
                f"{why}. Nothing half-written is left; {kept}."
            ) from e

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def all_steps(self) -> list[int]:
        return sorted(self._manager.all_steps())

    def read_meta(self, step: int | None = None) -> dict:
        """The JSON metadata of checkpoint ``step`` (default: the newest), unverified
        and without restoring any array: what :meth:`restore` is about to read,
        for comparing settings first."""
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"No checkpoint in {self.directory}.")
        try:
            meta = self._manager.restore(
                step, args=ocp.args.Composite(meta=ocp.args.JsonRestore())
            ).meta
        except Exception as e:  # orbax/json: an unreadable metadata file
            reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            raise CorruptFileError(
                f"Checkpoint {self.directory / str(step)} has unreadable metadata "
                f"({type(e).__name__}: {reason}). {self._what_to_do(step)}"
            ) from e
        if not isinstance(meta, dict):
            raise CorruptFileError(
                f"Checkpoint {self.directory / str(step)} has metadata that is not a "
                f"JSON object. {self._what_to_do(step)}"
            )
        meta = dict(meta)
        meta.pop(CHECKSUM_KEY, None)
        return meta

    def restore(
        self, like: Any, step: int | None = None, verify: bool = True
    ) -> tuple[Any, dict]:
        """Restore ``(state, meta)``; ``like`` gives the structure and dtypes.

        The checksum written by :meth:`save` is verified (``verify=False`` skips
        it); an unreadable or altered checkpoint is a :class:`CorruptFileError`.
        """
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(
                f"No checkpoint to resume from in {self.directory}."
            )
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, like)
        where = self.directory / str(step)
        try:
            restored = self._manager.restore(
                step,
                args=ocp.args.Composite(
                    state=ocp.args.StandardRestore(abstract),
                    meta=ocp.args.JsonRestore(),
                ),
            )
            state, meta = restored.state, dict(restored.meta)
        except Exception as e:  # orbax/tensorstore/json: any failure is a bad file
            reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            raise CorruptFileError(
                f"Checkpoint {where} cannot be read ({type(e).__name__}: {reason}): "
                f"it is truncated or corrupt (or does not match `like`). "
                f"{self._what_to_do(step)}"
            ) from e
        expected = meta.pop(CHECKSUM_KEY, None)
        if verify and expected is None:
            raise CorruptFileError(
                f"Checkpoint {where} has no {CHECKSUM_KEY} in its metadata: its "
                "metadata is damaged, or an older jaxblitz wrote it. "
                f"{self._what_to_do(step)} (restore(..., verify=False) reads it "
                "unchecked.)"
            )
        if verify and _state_digest(state, meta) != expected:
            raise CorruptFileError(
                f"Checkpoint {where} fails its checksum: its arrays or metadata "
                f"changed after it was written. {self._what_to_do(step)}"
            )
        return state, meta

    def _what_to_do(self, step: int) -> str:
        older = [s for s in self._manager.all_steps() if s < step]
        if older:
            return (
                f"Move {self.directory / str(step)} out of {self.directory} to "
                f"resume from step {max(older)}, or start afresh in a new directory."
            )
        return (
            f"Move {self.directory} aside (jaxblitz-train --fresh does) or use a "
            "new directory to start afresh."
        )

    def close(self) -> None:
        self._manager.close()
