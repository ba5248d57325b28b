"""Blitz 3, "Neural Networks": dropout (``torch.nn.functional.dropout``,
``dropout1d``, ``dropout2d``, ``dropout3d``, ``alpha_dropout``,
``feature_alpha_dropout``) and the layers beyond ``Dropout``/``Dropout2d``.

All go through one implementation, ATen's ``_dropout_impl``: a Bernoulli(1 - p)
keep mask, drawn per element or (feature dropout) per ``(N, C)`` channel from
compat's generator, so the draws are compat's own, with torch's statistics;
plain dropout scales what is kept by ``1 / (1 - p)``, alpha dropout keeps the
SELU mean and variance by ``a * x + b`` with a dropped element set to the SELU's
negative saturation. ``p = 1`` multiplies by zero; not training, ``p = 0`` or an
empty input returns the input itself.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.tensor import Tensor, _dtype, _info
from jaxblitz.compat.tensor._fresh_layout import elementwise, laid_out
from jaxblitz.compat.tensor.creation import rand

_ALPHA = 1.7580993408473766  # torch: -SELU's scale * alpha, its negative limit


@elementwise
def _dropout_fn(x, mask, *, scale):
    return x * mask * scale


@elementwise
def _alpha_dropout_fn(x, mask, *, a, b):
    # torch: x * (mask * a) + (mask - 1) * alpha * a + alpha * a * p
    return x * (mask * a) + (mask * b[0] + b[1])


def _check_p(p: float) -> None:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check(name: str, input: Any, p: float) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    _check_p(p)


def _dropout(
    input: Tensor,
    p: float,
    training: bool,
    inplace: bool,
    *,
    feature: bool = False,
    alpha: bool = False,
) -> Tensor:
    """ATen's ``_dropout_impl``."""
    if inplace:
        input._check_inplace()
    if not training or p == 0 or not input.numel():  # torch: the input itself
        return input
    if feature and input.dim() < 2:
        raise RuntimeError(
            "Feature dropout requires at least 2 dimensions in the input"
        )
    if feature:  # one draw per (N, C)
        noise = (*input.shape[:2], *(1,) * (input.dim() - 2))
    else:
        noise = tuple(input.shape)
    where = _dtype.tensor_device(input)  # None inside torch.compile's trace
    keep = rand(*noise, dtype=input.dtype, device=where) >= p
    keep = keep.to(input.dtype)
    if not feature and input._view is not None:  # torch's noise: empty_like(input)
        keep = laid_out(keep, _info.preserve_format, input)
    if p == 1:  # torch: multiplied by zero (NaN stays NaN)
        out = apply("MulBackward0", _dropout_fn, input, keep, scale=0.0)
    elif alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = (_ALPHA * a, -_ALPHA * a + _ALPHA * a * p)
        out = apply("AddBackward0", _alpha_dropout_fn, input, keep, a=a, b=b)
    else:
        out = apply("MulBackward0", _dropout_fn, input, keep, scale=1.0 / (1 - p))
    return input._inplace(out) if inplace else out


def _unbatched(
    input: Tensor, batched: bool, p: float, training: bool, inplace: bool
) -> Tensor:
    """Feature dropout of an input with or without its batch dimension."""
    if batched:
        return _dropout(input, p, training, inplace, feature=True)
    if inplace:
        input.unsqueeze_(0)
        return _dropout(input, p, training, True, feature=True).squeeze_(0)
    return _dropout(input.unsqueeze(0), p, training, False, feature=True).squeeze(0)


def _warn_rank(name: str, dims: int, spatial: int) -> None:
    """torch's deprecation warning for dropout2d/3d of an unexpected rank."""
    warnings.warn(
        f"{name}: Received a {dims}-D input to {name}, which is deprecated "
        "and will result in an error in a future release. To retain the "
        "behavior and silence this warning, please use dropout instead. Note "
        f"that {name} exists to provide channel-wise dropout on inputs with "
        f"{spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).",
        UserWarning,
        stacklevel=3,
    )


# -- torch.nn.functional -------------------------------------------------------------


def dropout(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    _check("dropout", input, p)
    return _dropout(input, p, training, inplace)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    _check("alpha_dropout", input, p)
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    _check("feature_alpha_dropout", input, p)
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    _check("dropout1d", input, p)
    dims = input.dim()
    if dims not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dims}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs "
            "with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    return _unbatched(input, dims == 3, p, training, inplace)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Whole channels zeroed: one draw per (N, C), torch's feature dropout."""
    _check("dropout2d", input, p)
    dims = input.dim()
    if dims not in (3, 4):
        _warn_rank("dropout2d", dims, 2)
    elif dims == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that "
            "channel-wise 1D dropout behavior is desired - input is interpreted as "
            "shape (N, C, L), where C is the channel dim. This behavior will change "
            "in a future release to interpret the input as one without a batch "
            "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
            "dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    return _dropout(input, p, training, inplace, feature=True)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    _check("dropout3d", input, p)
    dims = input.dim()
    if dims not in (4, 5):
        _warn_rank("dropout3d", dims, 3)
    return _unbatched(input, dims == 5, p, training, inplace)


# -- modules -------------------------------------------------------------------------


class _DropoutNd(Module):
    """torch's ``_DropoutNd``: ``p`` checked, printed with ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:  # torch: never in place
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training)
