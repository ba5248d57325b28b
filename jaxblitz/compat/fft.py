"""Blitz 1, "Tensors": ``torch.fft``, discrete Fourier transforms, their sample
frequencies and shifts.

compat has no complex dtypes. The transforms with a real result (``irfft``,
``hfft`` and their 2-d and n-d forms) take a real input, which torch reads as
complex with a zero imaginary part; those whose result is complex (``fft``,
``ifft``, ``rfft``, ``ihfft`` and their 2-d and n-d forms) check their arguments
as torch does, then are refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.ops._arrange import roll
from jaxblitz.compat.ops._funnel import _require_tensors, _to_out
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import wrap_dim
from jaxblitz.compat.tensor.creation import _finish, _placed

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")
# torch: hfft is irfft of the conjugate, scaled as the forward transform
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---------------------------------------------------------------------------
# Arguments, checked in torch's order and with its messages
# ---------------------------------------------------------------------------


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _dims(dims: Sequence[int], ndim: int) -> list[int]:
    """torch's ``maybe_wrap_dims`` without scalar wrapping: a 0-d tensor has no
    dimension to transform."""
    if ndim == 0 and dims:
        raise IndexError(
            f"Dimension specified as {dims[0]} but tensor has no dimensions"
        )
    return [wrap_dim(d, ndim) for d in dims]


def _checked_float(name: str, input: Tensor) -> _dtype.dtype:
    """torch's ``promote_tensor_fft``: integers and bools become the default float
    dtype; half precision has no CPU kernel."""
    _require_tensors(f"fft_{name}", input)
    dt = input.dtype
    if not dt.is_floating_point:
        return _dtype.get_default_dtype()
    if dt not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"Unsupported dtype {dt.scalar_type}")
    return dt


def _sizes(n: Any) -> tuple[int, ...] | None:
    return None if n is None else (n,) if isinstance(n, int) else tuple(n)


def _shape_and_dims(input: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int]]:
    """torch's ``canonicalize_fft_shape_and_dim_args``: the transformed dims and
    their lengths (``s`` entries of -1 are the input's)."""
    ndim, shape = input.dim(), tuple(input.shape)
    s, dim = _sizes(s), _sizes(dim)
    dims: list[int] = []
    if dim is not None:
        dims = _dims(dim, ndim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError(
                "When given, dim and shape arguments must have the same length"
            )
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} "
                "dimensions."
            )
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        lengths = [shape[d] if n == -1 else n for d, n in zip(dims, s, strict=True)]
    elif dim is None:
        dims, lengths = list(range(ndim)), list(shape)
    else:
        lengths = [shape[d] for d in dims]
    for n in lengths:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return lengths, dims


def _checked_out(name: str, out: Tensor | None) -> None:
    if out is not None and not out.dtype.is_floating_point:
        raise RuntimeError(
            f"{name} expects a floating point output tensor, but got "
            f"{out.dtype.scalar_type}"
        )


def _complex_result(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"fft.{name}: complex results are not supported by jaxblitz.compat (it has "
        "no complex dtypes); fft.irfft and fft.hfft and their 2-d and n-d forms "
        "take a real input"
    )


# ---------------------------------------------------------------------------
# Real results: the complex-to-real transforms of a real input
# ---------------------------------------------------------------------------


def _c2r_fn(x, *, s, axes, norm, dt):
    return jnp.fft.irfftn(x.astype(dt), s=s, axes=axes, norm=norm)


def _c2r(
    name: str, input: Tensor, s: Any, dim: Any, norm: str | None, out: Any
) -> Tensor:
    """irfftn of a real input, torch's checks first (hfftn: the norm swapped,
    torch's hfft being the irfft of the conjugate)."""
    _checked_out(name, out)
    lengths, dims = _shape_and_dims(input, s, dim)
    if not lengths:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = lengths[-1]
    if s is None or _sizes(s)[-1] == -1:
        last = 2 * (input.shape[dims[-1]] - 1)
        if last < 1:
            raise RuntimeError(f"Invalid number of data points ({last}) specified")
    dt = _checked_float(name, input)
    norm = _norm(norm)
    if name.startswith("hfft"):
        norm = _SWAPPED[norm]
    result = apply(
        "FftC2RBackward0",
        _c2r_fn,
        input,
        s=(*lengths[:-1], last),
        axes=tuple(dims),
        norm=norm,
        dt=dt.np_name,
    )
    return _to_out(result, out)


def _c2r_1d(
    name: str, input: Tensor, n: int | None, dim: int, norm: str | None, out: Any
) -> Tensor:
    _checked_out(name, out)
    (d,) = _dims([dim], input.dim())
    length = 2 * (input.shape[d] - 1) if n is None else n
    if length < 1:
        raise RuntimeError(f"Invalid number of data points ({length}) specified")
    return _c2r(name, input, (length,), (d,), norm, out)


# ---------------------------------------------------------------------------
# The transforms: those with complex results checked as torch does, then
# refused by name
# ---------------------------------------------------------------------------

_DOCS = {
    "fft": "The discrete Fourier transform along ``dim``.",
    "ifft": "The inverse of :func:`fft`.",
    "rfft": "The one-sided transform of a real signal.",
    "irfft": "The inverse of :func:`rfft`: ``n`` real points from the one-sided half.",
    "hfft": "The transform of a Hermitian signal given by its one-sided half.",
    "ihfft": "The inverse of :func:`hfft`.",
    "fft2": ":func:`fftn` over two dims.",
    "ifft2": ":func:`ifftn` over two dims.",
    "rfft2": ":func:`rfftn` over two dims.",
    "irfft2": ":func:`irfftn` over two dims.",
    "hfft2": ":func:`hfftn` over two dims.",
    "ihfft2": ":func:`ihfftn` over two dims.",
    "fftn": "The n-d discrete Fourier transform over ``dim`` (every dim if None).",
    "ifftn": "The inverse of :func:`fftn`.",
    "rfftn": "The n-d transform of a real signal, one-sided in the last of ``dim``.",
    "irfftn": "The inverse of :func:`rfftn`.",
    "hfftn": "The n-d transform of a Hermitian signal, one-sided in the last dim.",
    "ihfftn": "The inverse of :func:`hfftn`.",
}


def _documented(fn, name: str):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _DOCS[name]
    if not name.startswith(("irfft", "hfft")):
        fn.__doc__ += " Refused by compat: the result is complex."
    return fn


def _one_dim(name: str):
    def fn(
        input: Tensor,
        n: int | None = None,
        dim: int = -1,
        norm: str | None = None,
        *,
        out: Tensor | None = None,
    ) -> Tensor:
        if name in ("irfft", "hfft"):
            return _c2r_1d(name, input, n, dim, norm, out)
        _checked_float(name, input)
        (d,) = _dims([dim], input.dim())
        length = input.shape[d] if n is None else n
        if length < 1:
            raise RuntimeError(f"Invalid number of data points ({length}) specified")
        _norm(norm)
        raise _complex_result(name)

    return _documented(fn, name)


def _n_dim(name: str, default_dim: tuple[int, ...] | None):
    kernel = name[:-1] + "n" if name.endswith("2") else name  # torch's messages

    def fn(
        input: Tensor,
        s: Sequence[int] | None = None,
        dim: Sequence[int] | None = default_dim,
        norm: str | None = None,
        *,
        out: Tensor | None = None,
    ) -> Tensor:
        if kernel in ("irfftn", "hfftn"):
            return _c2r(kernel, input, s, dim, norm, out)
        _checked_float(name, input)
        lengths, _ = _shape_and_dims(input, s, dim)
        if not lengths and kernel in ("rfftn", "ihfftn"):
            raise RuntimeError(f"{kernel} must transform at least one axis")
        _norm(norm)
        raise _complex_result(name)

    return _documented(fn, name)


fft = _one_dim("fft")
ifft = _one_dim("ifft")
rfft = _one_dim("rfft")
irfft = _one_dim("irfft")
hfft = _one_dim("hfft")
ihfft = _one_dim("ihfft")
fft2 = _n_dim("fft2", (-2, -1))
ifft2 = _n_dim("ifft2", (-2, -1))
rfft2 = _n_dim("rfft2", (-2, -1))
irfft2 = _n_dim("irfft2", (-2, -1))
hfft2 = _n_dim("hfft2", (-2, -1))
ihfft2 = _n_dim("ihfft2", (-2, -1))
fftn = _n_dim("fftn", None)
ifftn = _n_dim("ifftn", None)
rfftn = _n_dim("rfftn", None)
irfftn = _n_dim("irfftn", None)
hfftn = _n_dim("hfftn", None)
ihfftn = _n_dim("ihfftn", None)


# ---------------------------------------------------------------------------
# Frequencies and shifts
# ---------------------------------------------------------------------------


def _frequencies(name: str, indices, doc: str):
    """``torch.fft.<name>(n, d)``: ``indices(n) / (d * n)``, as torch computes it."""

    def fn(
        n: int,
        d: float = 1.0,
        *,
        out: Tensor | None = None,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: [{n}]"
            )
        dt = _dtype.to_dtype(
            dtype
            or (out.dtype if out is not None else None)
            or _dtype.get_default_dtype()
        )
        if not dt.is_floating_point:
            raise RuntimeError(f"{name} requires a floating point or complex dtype")
        # torch: arange(n).mul_(1.0 / (n * d)), in the dtype (half in float32)
        wide = np.float32 if dt.itemsize < 4 else dt.np
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.float64(1.0) / (np.float64(n) * np.float64(d))
        values = (indices(n).astype(wide) * scale.astype(wide)).astype(dt.np)
        return _to_out(_finish(values, None, device, requires_grad), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return _placed(fn)


fftfreq = _frequencies(
    "fftfreq",
    lambda n: np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]),
    "The sample frequencies of a length-``n`` transform, sample spacing ``d``: "
    "``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.",
)
rfftfreq = _frequencies(
    "rfftfreq",
    lambda n: np.arange(n // 2 + 1),
    "The sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``.",
)


def _shifted(input: Tensor, dim: Any, half) -> Tensor:
    _require_tensors("fft_fftshift", input)
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [wrap_dim(d, input.dim()) for d in _sizes(dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    return roll(input, [half(input.shape[d]) for d in dims], dims)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The zero frequency moved to the centre: a roll by ``size // 2`` along
    ``dim`` (every dim if None)."""
    return _shifted(input, dim, lambda n: n // 2)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of :func:`fftshift`: a roll by ``(size + 1) // 2``."""
    return _shifted(input, dim, lambda n: (n + 1) // 2)
