"""Blitz 1, "Tensors" (random sampling): ``torch.multinomial``.

Indices drawn from the categories of each row of ``input`` (weights, not
necessarily normalised), in PyTorch's shapes, dtype and errors. The numbers come
from compat's generator on the host (a NumPy generator seeded by its next key,
:mod:`._host_random`): ``torch.manual_seed`` repeats them, PyTorch's own values
are not reproduced. Without replacement (and for one sample) it is PyTorch's
method: the ``num_samples`` largest ``p / Exponential(1)``, ties (zero weights)
in index order; with replacement, the inverse of each row's cumulative
distribution at uniform draws, in float64.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.tensor import Tensor, _dtype, _host_random, creation

__all__ = ["multinomial"]

_MAX_CATEGORIES = 1 << 24  # torch: FLOAT32_MAX_CONSECUTIVE_INT


def _check_rows(p: np.ndarray, replacement_kernel: bool) -> None:
    """torch's checks of the weights (``p`` is (rows, categories), float64)."""
    if not replacement_kernel:  # the exponential path checks all at once
        if not bool(np.all(p >= 0)) or not bool(np.all(np.isfinite(p))):
            raise RuntimeError(
                "probability tensor contains either `inf`, `nan` or element < 0"
            )
        if bool(np.any(p.sum(axis=1) == 0)):
            raise RuntimeError(
                "invalid multinomial distribution (sum of probabilities <= 0)"
            )
        return
    # torch's with-replacement kernel: row by row, each entry, then the sum
    bad = ~(p >= 0) | ~np.isfinite(p)
    bad_row = bad.any(axis=1) | ~(p.sum(axis=1) > 0)
    if not bad_row.any():
        return
    row = p[int(np.argmax(bad_row))]
    if bad[int(np.argmax(bad_row))].any():
        first = row[int(np.argmax(~(row >= 0) | ~np.isfinite(row)))]
        what = "< 0" if not first >= 0 else "= infinity or NaN"
        raise RuntimeError(
            f"invalid multinomial distribution (encountering probability entry {what})"
        )
    raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _draw(p: np.ndarray, n: int, replacement: bool, rng: np.random.Generator):
    """(rows, n) category indices for the rows of ``p``."""
    rows, categories = p.shape
    if not replacement or n == 1:
        scores = p / rng.standard_exponential((rows, categories))
        return np.argsort(-scores, axis=1, kind="stable")[:, :n]
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    u = rng.random((rows, n))
    picked = np.stack(
        [np.searchsorted(c, v, side="right") for c, v in zip(cdf, u, strict=True)]
    )
    # a rounding above the last cumulative value: the last category with weight
    last = categories - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
    return np.minimum(picked, last[:, None])


@declare
def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: creation.Generator | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.multinomial``: (num_samples,) or (rows, num_samples) int64 indices."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        try:
            num_samples = operator.index(num_samples)
        except TypeError:
            raise TypeError(
                "multinomial(): argument 'num_samples' (position 2) must be int, "
                f"not {type(num_samples).__name__}"
            ) from None
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{input.dtype.scalar_type}"
        )
    if out is not None and out.dtype is not _dtype.int64:
        raise RuntimeError(
            f"multinomial expects Long tensor out, got: {out.dtype.scalar_type}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if categories > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")
    input._needs_value("multinomial (its draws depend on the values)")
    rows = 1 if input.dim() == 1 else input.shape[0]
    p = np.asarray(input.detach()._data, dtype=np.float64).reshape(rows, categories)
    shape = (num_samples,) if input.dim() == 1 else (p.shape[0], num_samples)
    if p.shape[0] == 0:
        picked = np.zeros(shape, np.int64)
    else:
        _check_rows(p, replacement and num_samples > 1)
        rng = _host_random.generator(creation._key(generator))
        picked = _draw(p, num_samples, replacement, rng).reshape(shape)
    result = creation.tensor(picked.astype(np.int64), device=input.device)
    if out is None:
        return result
    if tuple(out.shape) != shape:
        raise NotImplementedError(
            f"multinomial(out=) of shape {list(out.shape)} for a result of shape "
            f"{list(shape)} is not supported by jaxblitz.compat: pass out of the "
            "result's shape, or no out"
        )
    out.copy_(result)
    return out


# torch: Tensor.multinomial. Set here: this module needs the Tensor class, so it
# loads after ops sets the declared methods onto MathMixin.
Tensor.multinomial = multinomial
