"""Blitz 4's pictures, as PNG files: the running-loss curve, per-class accuracy and
a labelled grid of images (the Blitz's ``imshow(torchvision.utils.make_grid(...))``
with the class names printed under it; predicted names green when right, red when
wrong).

matplotlib's object API with the Agg canvas (no global backend switch, no
display needed); every file is written atomically, refusing a link in its
place, and the same picture always gives the same bytes.
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


def save_figure(fig: Figure, path: str | os.PathLike) -> Path:
    """Write ``fig`` as a PNG at ``path``, atomically; a link there is refused.

    The same figure gives the same bytes: a PNG holds no date, and the
    "Software" text (matplotlib's version) is left out.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    return atomic_write(
        path,
        lambda f: fig.savefig(f, format="png", dpi=100, metadata={"Software": None}),
    )


def save_loss_curve(
    epoch_losses: Sequence[Sequence[float]], path: str | os.PathLike, window: int = 50
) -> Path:
    """Per-batch training loss over all epochs, with a running mean of ``window``."""
    arrays = [np.asarray(e, np.float64).ravel() for e in epoch_losses]
    losses = np.concatenate(arrays) if arrays else np.zeros(0)
    if not losses.size:
        raise ValueError("save_loss_curve: no losses to plot (every epoch is empty).")
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    steps = np.arange(1, len(losses) + 1)
    ax.plot(steps, losses, color="0.8", linewidth=0.5, label="batch loss")
    window = max(1, min(window, len(losses)))
    running = np.convolve(losses, np.ones(window) / window, mode="valid")
    ax.plot(steps[window - 1 :], running, color="C0", label=f"running mean ({window})")
    boundary = 0
    for epoch in epoch_losses[:-1]:
        boundary += len(epoch)
        ax.axvline(boundary, color="0.5", linestyle=":", linewidth=1)
    ax.set(xlabel="mini-batch", ylabel="cross-entropy loss", title="Training loss")
    ax.legend()
    fig.tight_layout()
    return save_figure(fig, path)


def save_per_class(per_class: dict[str, float], path: str | os.PathLike) -> Path:
    """Bar chart of test accuracy per class (the Blitz's per-class printout)."""
    names = list(per_class)
    values = [100 * per_class[n] for n in names]
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    bars = ax.bar(names, values, color="C0")
    ax.bar_label(bars, fmt="%.1f")
    ax.set(ylabel="accuracy (%)", ylim=(0, 105), title="Accuracy per class")
    ax.axhline(100 / max(len(names), 1), color="0.5", linestyle=":", label="chance")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return save_figure(fig, path)


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
    return save_figure(fig, path)


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
