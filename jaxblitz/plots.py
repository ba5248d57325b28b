"""Blitz 4's pictures: the running-loss curve and per-class accuracy, as PNG files.

matplotlib's object API with the Agg canvas (no global backend switch, no
display needed); every file is written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from jaxblitz.files import atomic_write


def save_figure(fig: Figure, path: str | os.PathLike) -> Path:
    """Write ``fig`` as a PNG at ``path``, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    return atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100))


def save_loss_curve(
    epoch_losses: Sequence[Sequence[float]], path: str | os.PathLike, window: int = 50
) -> Path:
    """Per-batch training loss over all epochs, with a running mean of ``window``."""
    losses = np.concatenate([np.asarray(e, np.float64) for e in epoch_losses])
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
