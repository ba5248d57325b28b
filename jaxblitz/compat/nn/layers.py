"""Blitz 3, "Neural Networks": the layers the Blitz uses, as ``nn.Module``s.

Weights get PyTorch's default initialisation, the core's ``init_conv2d`` /
``init_linear`` distribution (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and
bias), drawn on the host with a key from compat's global generator
(:mod:`.._host_random`): building a layer compiles no XLA program.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn._convnd import _ntuple, conv_extra_repr, mode_pads
from jaxblitz.compat.nn.container import Sequential  # noqa: F401
from jaxblitz.compat.nn.losses import CrossEntropyLoss, MSELoss  # noqa: F401
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.padding import pad
from jaxblitz.compat.tensor import Tensor, _dtype, _host_random, creation
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import from_host


def _draw(key: Any, shape: tuple[int, ...], dt: Any) -> tuple[np.ndarray, np.ndarray]:
    """The values of a weight of ``shape`` and its bias, as torch's default
    initialisation draws them (fan-in: the product of all but its first size)."""
    fan_in = math.prod(shape[1:])
    if not fan_in:  # torch: no fan-in -> an empty weight and a bias of zeros
        if not math.prod(shape):
            warnings.warn(
                "Initializing zero-element tensors is a no-op", UserWarning, 4
            )
        return np.zeros(shape, dt.np), np.zeros(shape[0], dt.np)
    # One draw for both: weight then bias, U(-bound, bound) (the core's init).
    bound = 1.0 / math.sqrt(fan_in)
    n = math.prod(shape)
    flat = _host_random.uniform(key, (n + shape[0],), dt.np, -bound, bound)
    return flat[:n].reshape(shape), flat[n:]


def _init_key(device: Any) -> Any:
    """The key of a new layer's initial values; None for a layer made on the
    meta device, which draws nothing (torch's meta kernels leave the generator
    as it was)."""
    if _dtype.factory_device(device).type == "meta":
        return None
    return creation.default_generator.next_key()


def _init(
    key: Any, shape: tuple[int, ...], bias: bool, device: Any, dtype: Any
) -> tuple[Parameter, Parameter | None]:
    """Weight and bias as torch's default initialisation draws them, for a weight of
    ``shape``.

    ``shape`` is checked as torch's ``torch.empty(shape)`` checks it: ints, none
    negative (a float or negative size raised ZeroDivisionError or "math domain
    error" from inside the initialiser).
    """
    shape = creation._size("empty", (shape,))
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    if not dt.is_floating_point:
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients"
        )
    device = _dtype.factory_device(device)  # torch.empty's: the default device
    if key is None:  # made on meta (see _init_key)
        weight_param = Parameter(creation.empty(shape, dtype=dt, device=device))
        if not bias:
            return weight_param, None
        return weight_param, Parameter(
            creation.empty(shape[0], dtype=dt, device=device)
        )
    weight, bias_values = _draw(key, shape, dt)
    with x64(True):  # a float64 layer is float64
        weight_param = Parameter(Tensor._wrap(from_host(weight)).to(device))
        if not bias:
            return weight_param, None
        return weight_param, Parameter(Tensor._wrap(from_host(bias_values)).to(device))


def _reset(module: Linear | _ConvNd) -> None:
    """torch's ``reset_parameters()`` of a linear or conv layer: weight and bias
    drawn again from the global generator as construction draws them, so
    ``manual_seed`` then a reset gives the values a new layer would have."""
    weight, bias = module.weight, module.bias
    key = creation.default_generator.next_key()
    values, bias_values = _draw(key, tuple(weight.shape), weight.dtype)
    with no_grad():
        weight.copy_(Tensor._wrap(from_host(values)))
        if bias is not None:
            bias.copy_(Tensor._wrap(from_host(bias_values)))


class Identity(Module):
    """``nn.Identity(*args, **kwargs)``: the input itself (arguments ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        key = _init_key(device)
        self.weight, bias_param = _init(
            key, (out_features, in_features), bias, device, dtype
        )
        self.register_parameter("bias", bias_param)

    def reset_parameters(self) -> None:
        _reset(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """torch's ``_ConvNd`` for ``Conv1d``/``Conv2d``/``Conv3d``: ``_n`` spatial axes,
    ``_conv`` the functional form."""

    _n: int
    _conv: Any

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ):
        super().__init__()
        spread = _ntuple(self._n)
        # torch's checks, in torch's order and words (nn.modules.conv._ConvNd).
        if isinstance(groups, int) and groups <= 0:
            raise ValueError("groups must be a positive integer")
        if isinstance(groups, int) and in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if isinstance(groups, int) and out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size, self.stride = spread(kernel_size), spread(stride)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of "
                    f"{_PADDING_STRINGS}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(
                    "padding='same' is not supported for strided convolutions"
                )
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        if len(self.kernel_size) != self._n:
            raise ValueError(
                f"{type(self).__name__}: kernel_size must be an int or a tuple of "
                f"{self._n} ints, got {kernel_size!r}"
            )
        dilations = spread(dilation)
        if all(isinstance(d, int) for d in dilations) and min(dilations) <= 0:
            raise RuntimeError(  # torch's words, raised there in forward
                f"dilation should be greater than zero, but got {list(dilations)}"
            )
        in_per_group = in_channels // groups if isinstance(groups, int) else groups
        shape = (out_channels, in_per_group, *self.kernel_size)
        creation._size("empty", (shape,))  # ints, none negative, before anything
        self.in_channels, self.out_channels = in_channels, out_channels
        self.padding = padding if isinstance(padding, str) else spread(padding)
        self.dilation, self.groups = dilations, groups
        self.padding_mode = padding_mode
        key = _init_key(device)
        self.weight, bias_param = _init(key, shape, bias, device, dtype)
        self.register_parameter("bias", bias_param)

    def reset_parameters(self) -> None:
        _reset(self)

    def forward(self, input: Tensor) -> Tensor:
        padding = self.padding
        if self.padding_mode != "zeros":
            # torch's _conv_forward: F.pad in that mode, then an unpadded conv
            pads = mode_pads(padding, self.kernel_size, self.dilation)
            widths = [w for lo_hi in reversed(pads) for w in lo_hi]
            input, padding = pad(input, widths, mode=self.padding_mode), 0
        return type(self)._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            padding,
            self.dilation,
            self.groups,
        )

    def extra_repr(self) -> str:
        return conv_extra_repr(self)


class Conv1d(_ConvNd):
    _n, _conv = 1, F.conv1d


class Conv2d(_ConvNd):
    _n, _conv = 2, F.conv2d


class Conv3d(_ConvNd):
    _n, _conv = 3, F.conv3d


class _MaxPoolNd(Module):
    """torch's ``_MaxPoolNd``: the arguments kept as given; ``_pool`` the
    functional form."""

    _pool: Any

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation, self.ceil_mode = padding, dilation, ceil_mode
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
            f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    _pool = F.max_pool1d


class MaxPool2d(_MaxPoolNd):
    _pool = F.max_pool2d


class MaxPool3d(_MaxPoolNd):
    _pool = F.max_pool3d


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
