"""Blitz 4, "Save/load the model": training checkpoints and exported weights.

Two kinds of file, both pickle-free and written atomically (a crash never leaves a
half-written file where a good one was):

- training checkpoints (params, optimizer state, step and where the data order
  stands) through orbax-checkpoint, which writes into a temporary directory and
  renames it when complete; ``--resume`` restores the newest complete one;
- final weights as ``weights.safetensors`` with PyTorch ``state_dict`` names and
  layouts, loadable by ``net.load_state_dict(safetensors.torch.load_file(path))``
  (torch: ``torch.save(net.state_dict(), PATH)``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
from safetensors.numpy import load_file, save_file


def flatten_params(params: dict[str, Any]) -> dict[str, np.ndarray]:
    """``{"conv1": {"weight": w}}`` -> ``{"conv1.weight": w}`` as NumPy arrays."""
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return {".".join(str(k.key) for k in path): np.asarray(v) for path, v in flat}


def unflatten_params(flat: dict[str, np.ndarray]) -> dict[str, Any]:
    """``{"conv1.weight": w}`` -> ``{"conv1": {"weight": w}}``."""
    params: dict[str, Any] = {}
    for name, value in flat.items():
        node = params
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return params


def save_weights(params: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``params`` as safetensors with torch ``state_dict`` names, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        tensors = {
            k: np.ascontiguousarray(v) for k, v in flatten_params(params).items()
        }
        save_file(tensors, tmp, metadata={"format": "pt"})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_weights(
    path: str | os.PathLike, like: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Read a safetensors file (ours or ``safetensors.torch.save_file``'s) as params.

    With ``like`` (a params tree), the names and shapes are checked against it and a
    clear error lists what is missing, extra or mis-shaped.
    """
    flat = load_file(str(path))
    if like is not None:
        expected = {k: v.shape for k, v in flatten_params(like).items()}
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


class Checkpointer:
    """Training checkpoints in ``directory`` (orbax), keeping the newest ``keep``."""

    def __init__(self, directory: str | os.PathLike, keep: int = 2):
        self.directory = Path(directory).absolute()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=keep, enable_async_checkpointing=False, create=True
        )
        self._manager = ocp.CheckpointManager(self.directory, options=options)

    def save(self, step: int, state: Any, meta: dict[str, Any]) -> None:
        """Save the train state (a pytree) and JSON metadata as checkpoint ``step``."""
        self._manager.save(
            step,
            args=ocp.args.Composite(
                state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta)
            ),
            force=True,
        )
        self._manager.wait_until_finished()

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def restore(self, like: Any, step: int | None = None) -> tuple[Any, dict]:
        """Restore ``(state, meta)``; ``like`` gives the structure and dtypes."""
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(
                f"No checkpoint to resume from in {self.directory}."
            )
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, like)
        restored = self._manager.restore(
            step,
            args=ocp.args.Composite(
                state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()
            ),
        )
        return restored.state, restored.meta

    def close(self) -> None:
        self._manager.close()
