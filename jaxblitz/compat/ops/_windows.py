"""Blitz 1, "Tensors": the window functions of signal processing --
``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window``
and ``kaiser_window`` -- computed on the host as ATen's factories compute them:
an ``arange`` scaled step by step, each step rounded to the dtype (computed in
float for half and bfloat16, as torch's opmath does). ``periodic=True`` (the
default) is the first ``N`` points of the ``N + 1``-point symmetric window."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor.creation import _check_layout, _finish, _int

if TYPE_CHECKING:
    from collections.abc import Callable

    from jaxblitz.compat.tensor import Tensor


def _window(
    name: str,
    window_length: Any,
    periodic: Any,
    make: Callable[[np.ndarray, int, Callable], np.ndarray],
    dtype: Any,
    layout: Any,
    device: Any,
    requires_grad: bool,
) -> Tensor:
    """torch's ``window_function_checks``, its 0- and 1-point answers, then
    ``make(points, n, rounded)`` over ``arange(n)`` (n one more when periodic),
    ``rounded(v)`` giving ``v`` in the dtype."""
    _check_layout(name, layout)
    n = _int(name, "window_length", 1, window_length)
    if not isinstance(periodic, bool):
        raise TypeError(
            f"{name}(): argument 'periodic' (position 2) must be bool, not "
            f"{type(periodic).__name__}"
        )
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_dtype._CPP[dt.np_name]}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))"
        )
    if n < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={n}"
        )
    if n <= 1:
        return _finish(np.ones(n, dt.np), None, device, requires_grad)
    size = n + 1 if periodic else n
    op = np.float32 if dt.np.itemsize < 4 else dt.np.type  # torch's opmath type

    def rounded(v: Any) -> np.ndarray:
        return np.asarray(np.asarray(v, op).astype(dt.np), op)

    # a Python number taken into the dtype first, as torch's scalar arguments are
    rounded.scalar = lambda v: op(dt.np.type(v))  # type: ignore[attr-defined]
    rounded.op = op  # type: ignore[attr-defined]
    window = make(rounded(np.arange(size)), size, rounded)
    return _finish(window[:n].astype(dt.np), None, device, requires_grad)


def _shape_after_periodic(name: str, length: Any, periodic: Any, **shape: Any):
    """torch's overloads take a window's shape parameters only after
    ``periodic``: ``hamming_window(5, alpha=0.5)`` is refused."""
    given = [k for k, v in shape.items() if v is not None]
    if periodic is None and given:
        kinds = ", ".join(
            [type(length).__name__] + [f"{k}={type(shape[k]).__name__}" for k in given]
        )
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({kinds}), "
            "but expected the shape parameters after (int window_length, bool "
            "periodic)"
        )


def _cosine_sum(alpha: float, beta: float) -> Callable:
    def make(x: np.ndarray, n: int, r: Callable) -> np.ndarray:
        # torch: arange.mul_(2 pi / (n - 1)).cos_().mul_(-beta).add_(alpha)
        x = r(x * r.scalar(np.pi * 2.0 / (n - 1)))
        return r(r(r(np.cos(x)) * r.scalar(-beta)) + r.scalar(alpha))

    return make


def _blackman(x: np.ndarray, n: int, r: Callable) -> np.ndarray:
    f = r.scalar
    x = r(x * f(np.pi / (n - 1)))
    # torch: x.mul(4).cos_().mul_(0.08) - x.mul(2).cos_().mul_(0.5) + 0.42
    four = r(r(np.cos(r(x * f(4)))) * f(0.08))
    two = r(r(np.cos(r(x * f(2)))) * f(0.5))
    return r(r(four - two) + f(0.42))


def _bartlett(x: np.ndarray, n: int, r: Callable) -> np.ndarray:
    f = r.scalar
    x = r(x * f(2.0 / (n - 1)))
    half = ((n - 1) >> 1) + 1
    x[half:] = r(r(x[half:] * f(-1)) + f(2))
    return x


def _kaiser(beta: float) -> Callable:
    def make(x: np.ndarray, n: int, r: Callable) -> np.ndarray:
        f = r.op  # the kernel's constants, in opmath
        alpha = f((n - 1) / 2.0)
        ratio = (x - alpha) / alpha
        arg = f(beta) * np.sqrt(np.abs(f(1) - ratio**2))
        return r(np.i0(arg.astype(np.float64)) / np.i0(float(f(beta))))

    return make


@declare
def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.hann_window``: ``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    return _window(
        "hann_window",
        window_length,
        periodic,
        _cosine_sum(0.5, 0.5),
        dtype,
        layout,
        device,
        requires_grad,
    )


@declare
def hamming_window(
    window_length: int,
    periodic: Any = None,
    alpha: Any = None,
    beta: Any = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.hamming_window``: ``alpha - beta cos(2 pi n / (N - 1))``
    (0.54 and 0.46 unless given, after ``periodic``)."""
    _shape_after_periodic("hamming_window", window_length, periodic, alpha=alpha)
    return _window(
        "hamming_window",
        window_length,
        True if periodic is None else periodic,
        _cosine_sum(
            0.54 if alpha is None else float(alpha),
            0.46 if beta is None else float(beta),
        ),
        dtype,
        layout,
        device,
        requires_grad,
    )


@declare
def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.blackman_window``: ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08
    cos(4 pi n / (N - 1))``."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        _blackman,
        dtype,
        layout,
        device,
        requires_grad,
    )


@declare
def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.bartlett_window``: the triangular window, 0 at the ends."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        _bartlett,
        dtype,
        layout,
        device,
        requires_grad,
    )


@declare
def kaiser_window(
    window_length: int,
    periodic: Any = None,
    beta: Any = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``torch.kaiser_window``: ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)``,
    ``a = (N - 1) / 2`` (``beta`` 12 unless given, after ``periodic``)."""
    _shape_after_periodic("kaiser_window", window_length, periodic, beta=beta)
    return _window(
        "kaiser_window",
        window_length,
        True if periodic is None else periodic,
        _kaiser(12.0 if beta is None else float(beta)),
        dtype,
        layout,
        device,
        requires_grad,
    )
