"""Blitz 1, "Tensors": ``torch.signal.windows`` -- SciPy-style window functions
(``sym=True`` symmetric, ``sym=False`` periodic), written as torch writes them
(``torch/signal/windows/windows.py``): a ``linspace`` and compat's elementwise
ops, so a window made with ``requires_grad=True`` has torch's graph."""

from __future__ import annotations

import math
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from jaxblitz.compat.ops import _arith, _special_math, _unary
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._tensor_base import strided

# The torch.* names this module uses, as torch's own torch/signal/windows.py
# writes them, taken from compat's lower layers (the facade imports this module).
torch = SimpleNamespace(
    float32=_dtype.float32,
    float64=_dtype.float64,
    get_default_dtype=_dtype.get_default_dtype,
    strided=strided,
    empty=creation.empty,
    ones=creation.ones,
    linspace=creation.linspace,
    arange=creation.arange,
    tensor=creation.tensor,
    exp=_unary.exp,
    abs=_unary.abs,
    cos=_unary.cos,
    sin=_unary.sin,
    sqrt=_unary.sqrt,
    minimum=_unary.minimum,
    i0=_special_math.i0,
    pow=_arith.pow,
)

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checks(name: str, M: int, dtype: Any, layout: Any) -> Any:  # noqa: N803
    """torch's ``_window_function_checks``; the dtype, the default one if None."""
    dtype = dtype or torch.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(
            f"{name} is implemented for strided tensors only, got: {layout}"
        )
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool) -> Tensor:  # noqa: N803
    """The 0-point (empty) or 1-point (one) window."""
    make = torch.empty if M == 0 else torch.ones
    return make((M,), dtype=dtype, device=device, requires_grad=requires_grad)


def _points(start: Any, end: Any, M: int, dtype, device, requires_grad) -> Tensor:  # noqa: N803
    return torch.linspace(
        start, end, M, dtype=dtype, device=device, requires_grad=requires_grad
    )


def exponential(
    M: int,  # noqa: N803 -- torch's name
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``exp(-|n - center| / tau)``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _points(
        -center * constant,
        (-center + (M - 1)) * constant,
        M,
        dtype,
        device,
        requires_grad,
    )
    return torch.exp(-torch.abs(k))


def cosine(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``sin(pi (n + 0.5) / M)``, the sine window."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(
        start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad
    )
    return torch.sin(k)


def gaussian(
    M: int,  # noqa: N803
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``exp(-(n / (2 std))^2)`` about the centre."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _points(
        start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad
    )
    return torch.exp(-(k**2))


def kaiser(
    M: int,  # noqa: N803
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    b = torch.tensor(beta, dtype=dtype, device=device)
    start = -b
    constant = 2.0 * b / (M if not sym else M - 1)
    end = torch.minimum(b, start + (M - 1) * constant)
    k = _points(start, end, M, dtype, device, requires_grad)
    return torch.i0(torch.sqrt(b * b - torch.pow(k, 2))) / torch.i0(b)


def general_cosine(
    M: int,  # noqa: N803
    *,
    a: Iterable,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``sum_i (-1)^i a_i cos(2 pi i n / N)``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = torch.tensor(
        [(-1) ** i * w for i, w in enumerate(a)],
        device=device,
        dtype=dtype,
        requires_grad=requires_grad,
    )
    i = torch.arange(
        a_i.shape[0],
        dtype=a_i.dtype,
        device=a_i.device,
        requires_grad=a_i.requires_grad,
    )
    return (a_i.unsqueeze(-1) * torch.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(
    M: int,  # noqa: N803
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``alpha - (1 - alpha) cos(2 pi n / N)``."""
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hamming(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return general_hamming(
        M,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hann(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``1 - |2n / N - 1|``, the triangle."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _points(start, start + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - torch.abs(k)


def nuttall(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = torch.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
