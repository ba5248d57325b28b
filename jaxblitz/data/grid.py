"""Blitz 4, Training a classifier: showing some of the training images.

The Blitz's ``imshow(torchvision.utils.make_grid(images))`` with its labels
printed underneath, as one labelled PNG: images un-normalised back to [0, 1]
(``img / 2 + 0.5``), each titled with its class name, and with the predicted name
when given (green when right, red when wrong). Uses matplotlib's ``Figure`` and
Agg canvas directly, so the global pyplot backend is left alone.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from jaxblitz.files import atomic_write


def save_image_grid(
    images,
    labels,
    class_names: Sequence[str],
    path: str | os.PathLike,
    *,
    predicted=None,
    nrow: int = 8,
) -> Path:
    """Write ``images`` (N, C, H, W) in [-1, 1] as a labelled PNG grid at ``path``.

    ``nrow`` images per row, as in ``make_grid``; ``labels`` and ``predicted`` are
    class indices into ``class_names`` (``labels`` may be None for no titles).
    """
    x = np.asarray(images, dtype=np.float32)
    if x.ndim != 4 or x.shape[1] not in (1, 3) or len(x) == 0:
        raise ValueError(
            f"save_image_grid expects images (N, C, H, W) with C 1 or 3 and N >= 1, "
            f"got shape {x.shape}"
        )
    if nrow < 1:
        raise ValueError(f"nrow must be >= 1, got {nrow}")
    truths = _titles(labels, len(x), class_names, "labels")
    guesses = _titles(predicted, len(x), class_names, "predicted")
    pictures = np.clip(x / 2 + 0.5, 0.0, 1.0)  # torch: img / 2 + 0.5  # unnormalize
    cols = min(nrow, len(x))
    rows = math.ceil(len(x) / cols)
    fig = Figure(figsize=(1.3 * cols, 1.5 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    for i, ax in enumerate(fig.subplots(rows, cols, squeeze=False).ravel()):
        ax.set_axis_off()
        if i >= len(x):
            continue
        picture = pictures[i].transpose(1, 2, 0)  # (H, W, C), matplotlib's layout
        ax.imshow(
            picture[..., 0] if picture.shape[-1] == 1 else picture,
            cmap="gray",
            vmin=0.0,
            vmax=1.0,
            interpolation="nearest",
        )
        truth, guess = truths[i], guesses[i]
        if guess is None:
            ax.set_title(truth or "", fontsize=9)
        else:
            ax.set_title(
                f"{guess}\n({truth})" if truth else guess,
                fontsize=9,
                color="black"
                if truth is None
                else "green"
                if truth == guess
                else "red",
            )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100))
    return path


def _titles(indices, n: int, class_names: Sequence[str], what: str) -> list:
    if indices is None:
        return [None] * n
    indices = np.asarray(indices).reshape(-1)
    if len(indices) != n:
        raise ValueError(f"{what} has {len(indices)} entries for {n} images")
    if indices.size and (indices.min() < 0 or indices.max() >= len(class_names)):
        raise ValueError(
            f"{what} must be class indices in 0..{len(class_names) - 1}, "
            f"got values {indices.min()}..{indices.max()}"
        )
    return [class_names[int(i)] for i in indices]
