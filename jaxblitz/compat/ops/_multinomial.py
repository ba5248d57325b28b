"""Blitz 1, "Tensors" (random sampling): ``torch.multinomial``.

Indices drawn from the categories of each row of ``input`` (weights, not
necessarily normalised), in PyTorch's shapes, dtype and errors. The noise is
drawn from compat's generator's next key (``torch.manual_seed`` repeats it;
PyTorch's own values are not reproduced) and the indices are computed from it
and the weights in one JAX function, so that lazy mode keeps the draw in its
program and both modes give the same indices. Without replacement (and for one
sample) it is PyTorch's method: the ``num_samples`` largest ``p /
Exponential(1)``, ties (zero weights) in index order; with replacement, the
inverse of each row's cumulative distribution at uniform draws, in float64.
torch's checks of the weights' values run where the values are
(:mod:`compat.tensor._checks`): at the op eagerly, at the next sync lazily.
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import run
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._checks import check_values
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = ["multinomial"]

_MAX_CATEGORIES = 1 << 24  # torch: FLOAT32_MAX_CONSECUTIVE_INT

_INVALID = "invalid multinomial distribution "
_MESSAGES = {
    0: "probability tensor contains either `inf`, `nan` or element < 0",
    1: _INVALID + "(encountering probability entry < 0)",
    2: _INVALID + "(encountering probability entry = infinity or NaN)",
    3: _INVALID + "(sum of probabilities <= 0)",
}


def _bad_weights(p: Any, *, categories: int, replacement_kernel: bool) -> tuple:
    """torch's checks of the weights, as marks and message codes
    (:data:`_MESSAGES`) for :func:`check_values` (NumPy's arrays or JAX's)."""
    xp = np if isinstance(p, np.ndarray) else jnp
    p = p.astype("float64").reshape(-1, categories)
    negative = ~(p >= 0)  # NaN among them, as torch's check reads it
    bad = negative | ~(abs(p) < np.inf)  # or infinite
    empty = ~(p.sum(axis=1) > 0)
    if not replacement_kernel:  # all entries checked first, then every sum
        marks = xp.stack([bad, empty[:, None] & (bad | True)])
        return marks, xp.stack([bad * 0, bad * 0 + 3])
    # torch's with-replacement kernel: row by row, each entry, then the sum
    empty_row = empty & ~bad.any(axis=1)
    marks = bad | empty_row[:, None]
    return marks, 3 - 2 * negative - (bad & ~negative)


def _message(code: Any, _: int) -> RuntimeError:
    return RuntimeError(_MESSAGES[int(code)])


def _draw_fn(p, noise, *, n, shape, replacement):
    """(rows, n) category indices for the rows of ``p``, from ``noise``:
    exponentials (rows, categories) or, with replacement, uniforms (rows, n)."""
    p = p.astype(jnp.float64).reshape(noise.shape[0], -1)
    if not replacement:
        order = jnp.argsort(-(p / noise), axis=1, stable=True)
        return order[:, :n].astype(jnp.int64).reshape(shape)
    cdf = jnp.cumsum(p, axis=1)
    cdf = cdf / cdf[:, -1:]
    picked = jax.vmap(partial(jnp.searchsorted, side="right"))(cdf, noise)
    # a rounding above the last cumulative value: the last category with weight
    last = p.shape[1] - 1 - jnp.argmax(p[:, ::-1] > 0, axis=1)
    return jnp.minimum(picked, last[:, None]).astype(jnp.int64).reshape(shape)


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
    rows = 1 if input.dim() == 1 else input.shape[0]
    shape = (num_samples,) if input.dim() == 1 else (rows, num_samples)
    if rows == 0:
        return _to_out(creation.zeros(shape, dtype=_dtype.int64), out, shape)
    if categories == 0:  # every row's sum is 0, whatever the values
        raise RuntimeError(_MESSAGES[3])
    replacement = replacement and num_samples > 1
    check_values(
        [input],
        _bad_weights,
        _message,
        categories=categories,
        replacement_kernel=replacement,
    )
    key = creation._key(generator)
    with x64(True):
        if replacement:
            noise = creation.draw(
                jax.random.uniform, key, (rows, num_samples), jnp.float64
            )
        else:
            noise = creation.draw(
                jax.random.exponential, key, (rows, categories), jnp.float64
            )
        picked = run(
            _draw_fn,
            input.detach()._value(),
            noise,
            n=num_samples,
            shape=shape,
            replacement=replacement,
        )
    return _to_out(TensorBase._wrap(picked), out, shape)


def _to_out(result: Tensor, out: Tensor | None, shape: tuple) -> Tensor:
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
