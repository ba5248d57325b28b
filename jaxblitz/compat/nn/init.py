"""``torch.nn.init``: in-place initialisers, with torch's fans, gains and checks.

Every initialiser writes into its tensor under ``no_grad`` (so a Parameter that
requires grad can be initialised) and draws from compat's generator, as the
tensor methods ``uniform_`` / ``normal_`` do: the distributions are torch's, the
numbers are JAX's (torch's Philox/MT19937 streams are not reproduced).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.tensor import _host_random
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import TensorBase, from_host
from jaxblitz.compat.tensor.creation import default_generator

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
    "constant",
    "dirac",
    "eye",
    "kaiming_normal",
    "kaiming_uniform",
    "normal",
    "orthogonal",
    "uniform",
    "xavier_normal",
    "xavier_uniform",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """torch's recommended gain for ``nonlinearity`` (1 is an int there too)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(
            param, float
        ):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: TensorBase) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 "
            "dimensions"
        )
    receptive_field_size = math.prod(tensor.shape[2:])
    return (
        tensor.size(1) * receptive_field_size,
        tensor.size(0) * receptive_field_size,
    )


def _calculate_correct_fan(tensor: TensorBase, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _write(tensor: TensorBase, array: jax.Array) -> TensorBase:
    """``array`` (the tensor's shape) copied into ``tensor`` under no_grad."""
    with no_grad():
        tensor.copy_(TensorBase._wrap(array))
    return tensor


def _key(generator: Any) -> jax.Array:
    return (generator or default_generator).next_key()


# -- the plain fills ------------------------------------------------------------------


# Drawn on the host (NumPy, from the generator's next key): initialising a network
# compiles no XLA program per parameter shape (see compat/tensor/_host_random.py).


def uniform_(
    tensor: TensorBase, a: float = 0.0, b: float = 1.0, generator: Any = None
) -> TensorBase:
    return _host_fill(tensor, _host_random.uniform, a, b, generator)


def normal_(
    tensor: TensorBase, mean: float = 0.0, std: float = 1.0, generator: Any = None
) -> TensorBase:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return _host_fill(tensor, _host_random.normal, mean, std, generator)


def _host_fill(tensor: TensorBase, draw: Any, a: float, b: float, generator: Any):
    with no_grad():
        tensor._check_inplace()
        array = draw(_key(generator), tuple(tensor.shape), tensor.dtype.np, a, b)
        with x64(True):
            tensor._set_data(from_host(array))
    return tensor


def trunc_normal_(
    tensor: TensorBase,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> TensorBase:
    """N(mean, std^2) restricted to [a, b] (JAX's inverse-CDF truncated normal)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    key = _key(generator)
    dt = tensor.dtype.np
    with x64(True):
        # Drawn in float32 at least (float16's inverse CDF is too coarse), then
        # clipped: rounding to the tensor's dtype must not leave [a, b].
        wide = jnp.promote_types(dt, jnp.float32)
        lo, hi = (a - mean) / std, (b - mean) / std
        z = jax.random.truncated_normal(key, lo, hi, tuple(tensor.shape), wide)
        array = jnp.clip(mean + std * z, a, b).astype(dt)
    return _write(tensor, array)


def constant_(tensor: TensorBase, val: float) -> TensorBase:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: TensorBase) -> TensorBase:
    return constant_(tensor, 1.0)


def zeros_(tensor: TensorBase) -> TensorBase:
    with no_grad():
        return tensor.zero_()


def eye_(tensor: TensorBase) -> TensorBase:
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with x64(True):
        array = jnp.eye(*tensor.shape, dtype=tensor.dtype.np)
    return _write(tensor, array)


def dirac_(tensor: TensorBase, groups: int = 1) -> TensorBase:
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with x64(True):
        array = jnp.zeros(sizes, tensor.dtype.np)
        for g in range(groups):
            for d in range(min_dim):
                array = array.at[(g * out_per_group + d, d, *centre)].set(1)
    return _write(tensor, array)


# -- Xavier (Glorot) and Kaiming (He) -------------------------------------------------


def xavier_uniform_(
    tensor: TensorBase, gain: float = 1.0, generator: Any = None
) -> TensorBase:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(
    tensor: TensorBase, gain: float = 1.0, generator: Any = None
) -> TensorBase:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: TensorBase,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> TensorBase:
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: TensorBase,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> TensorBase:
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0, std, generator)


def orthogonal_(
    tensor: TensorBase, gain: float = 1, generator: Any = None
) -> TensorBase:
    """A (semi-)orthogonal matrix, trailing dims flattened: torch's QR recipe."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    key = _key(generator)
    dt = tensor.dtype.np
    with x64(True):
        wide = jnp.promote_types(dt, jnp.float32)  # LAPACK has no float16 QR
        flattened = jax.random.normal(key, (rows, cols), wide)
        if rows < cols:
            flattened = flattened.T
        q, r = jnp.linalg.qr(flattened)
        q = q * jnp.sign(jnp.diagonal(r))
        if rows < cols:
            q = q.T
        array = (q * gain).reshape(tuple(tensor.shape)).astype(dt)
    return _write(tensor, array)


# -- torch's deprecated spellings -----------------------------------------------------


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
