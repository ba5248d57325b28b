"""Blitz 4, "Test the network on the test data": predictions, accuracy, per class.

- :func:`predict`: class indices for a whole split, in compiled batches of one
  shape (torch: ``torch.max(net(images), 1)`` under ``torch.no_grad()``);
- :func:`evaluate`: accuracy, per-class accuracy and the confusion matrix;
- :func:`report_lines`: the Blitz's printout of them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz import data, kernels, models


@jax.jit
def predict_batch(params, images: jax.Array) -> jax.Array:
    """Predicted class indices ``(B,)`` for images ``(B, C, 32, 32)``."""
    chunk = kernels.eval_chunk(images.shape[0])  # cache-sized convolutions
    return jnp.argmax(models.lenet(params, images, chunk=chunk), axis=-1)


def predict(params, images: np.ndarray, batch_size: int = 1000) -> np.ndarray:
    """Predictions for a whole split, in compiled batches of one shape.

    Every batch is dispatched before any result is read back, so copying the
    next batch in overlaps the device's work on the last (JAX's async dispatch).
    """
    models._check_sizes("predict", batch_size=batch_size)
    n = len(images)
    out = []
    for start in range(0, n, batch_size):
        batch = images[start : start + batch_size]
        keep = len(batch)
        pad = batch_size - keep if n > batch_size else 0
        if pad:  # one compiled shape for every batch
            batch = np.pad(batch, ((0, pad), (0, 0), (0, 0), (0, 0)))
        out.append((predict_batch(params, jnp.asarray(batch)), keep))
    return (
        np.concatenate([np.asarray(p)[:keep] for p, keep in out])
        if out
        else np.zeros(0, np.int64)
    )


def evaluate(params, dataset, batch_size: int = 1000) -> dict:
    """Test accuracy, per-class accuracy and the confusion matrix (rows: truth)."""
    k = len(dataset.class_names)
    labels = np.asarray(dataset.labels)
    data.check_labels(labels, k)
    predicted = predict(params, dataset.images, batch_size)
    confusion = np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k)
    per_class_total = confusion.sum(axis=1)
    per_class = {
        name: float(confusion[i, i] / per_class_total[i]) if per_class_total[i] else 0.0
        for i, name in enumerate(dataset.class_names)
    }
    return {
        "accuracy": float(np.trace(confusion) / max(len(labels), 1)),
        "correct": int(np.trace(confusion)),
        "total": len(labels),
        "per_class": per_class,
        "confusion": confusion.tolist(),
    }


def report_lines(result: dict) -> list[str]:
    """The Blitz's accuracy printout for an :func:`evaluate` result."""
    total = result["total"]
    lines = [
        f"Accuracy of the network on the {total} test images: "
        f"{100 * result['correct'] // max(total, 1)} %"
    ]
    for name, acc in result["per_class"].items():
        lines.append(f"Accuracy for class: {name:5s} is {100 * acc:.1f} %")
    return lines
