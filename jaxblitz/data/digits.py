"""Blitz 4, Training a classifier: ``digits``, the dataset that is always there.

scikit-learn's bundled 1797 real 8x8 handwritten digits (pixel values 0..16), made
to look like the Blitz's inputs: upscaled to 32x32 by nearest neighbour x4, so
every real pixel becomes a 4x4 block and no value is invented (torch:
``F.interpolate(x, scale_factor=4, mode="nearest")``), one channel, normalised by
``/16`` then ``(x - 0.5) / 0.5`` to [-1, 1]. The train/test split is stratified,
80/20, drawn from NumPy's legacy ``RandomState(SEED)``, whose stream is frozen
across NumPy versions and machines.
"""

from __future__ import annotations

import numpy as np

SEED = 0
TEST_FRACTION = 0.2
SCALE = 4  # 8x8 -> 32x32


def raw_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's ``(images (1797, 8, 8) float64 in 0..16, labels (1797,))``."""
    from sklearn.datasets import load_digits  # seconds to import: only when used

    bunch = load_digits()
    return bunch.images, bunch.target.astype(np.int32)


def split_indices(labels: np.ndarray) -> dict[str, np.ndarray]:
    """Sorted train and test indices, ``TEST_FRACTION`` of every class in test."""
    rng = np.random.RandomState(SEED)
    test = []
    for c in range(10):
        members = np.flatnonzero(labels == c)
        n_test = int(np.floor(TEST_FRACTION * len(members) + 0.5))
        test.append(rng.permutation(members)[:n_test])
    test_indices = np.sort(np.concatenate(test))
    return {
        "train": np.setdiff1d(np.arange(len(labels)), test_indices),
        "test": test_indices,
    }


def load_digits_split(split: str) -> tuple[np.ndarray, np.ndarray]:
    """``(images (N, 1, 32, 32) float32 in [-1, 1], labels (N,) int32)``."""
    images, labels = raw_digits()
    keep = split_indices(labels)[split]
    x = images[keep].astype(np.float32)[:, None]  # (N, 1, 8, 8)
    x = x.repeat(SCALE, axis=2).repeat(SCALE, axis=3)  # (N, 1, 32, 32)
    x = (x / np.float32(16) - np.float32(0.5)) / np.float32(0.5)
    return x, labels[keep]
