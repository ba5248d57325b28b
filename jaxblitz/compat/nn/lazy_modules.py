"""Blitz 3, "Neural Networks": the lazy modules (``nn.LazyLinear``,
``nn.LazyConv1d/2d/3d``, ``nn.LazyConvTranspose1d/2d/3d``,
``nn.LazyBatchNorm1d/2d/3d``, ``nn.LazyInstanceNorm1d/2d/3d``), whose input size is
read from the first input, as torch's.

Until then their parameters are :class:`UninitializedParameter` (and running
statistics :class:`UninitializedBuffer`). A forward pre-hook reads the size at the
first call, builds the module the lazy one becomes (``cls_to_become``) with that
size and the arguments the lazy one was given, so the weights are drawn exactly as
that module draws them, hands each uninitialised tensor its value in place (the
same object, now a ``Parameter``), and turns the module into that class. Each lazy
class names the size's attribute and says where the input holds it.
"""

from __future__ import annotations

import warnings
from itertools import chain
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.conv_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from jaxblitz.compat.nn.instancenorm import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from jaxblitz.compat.nn.layers import Conv1d, Conv2d, Conv3d, Linear
from jaxblitz.compat.nn.module import Parameter
from jaxblitz.compat.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import int64
from jaxblitz.compat.tensor.creation import empty
from jaxblitz.compat.tensor.creation import tensor as make_tensor

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LazyModuleMixin",
    "UninitializedBuffer",
    "UninitializedParameter",
]


# -- uninitialised tensors ------------------------------------------------------------


class UninitializedTensorMixin:
    """A tensor with no shape yet: ``materialize`` gives it one, in place."""

    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._become(empty(tuple(shape), device=device, dtype=dtype))

    def _become(self, value: Tensor) -> None:
        """Take ``value`` (its storage, shared) and become ``cls_to_become``."""
        with no_grad():
            self.data = value
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """``nn.UninitializedParameter(requires_grad=True, device=None, dtype=None)``."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        return super().__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(
        self, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """``nn.UninitializedBuffer(requires_grad=False, device=None, dtype=None)``."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None
    ):
        t = Tensor._wrap(None, cls=cls)
        t._share(empty(0, device=device, dtype=dtype))
        t.requires_grad = requires_grad
        return t

    def __init__(
        self, requires_grad: bool = False, device: Any = None, dtype: Any = None
    ):
        pass


def is_lazy(value: Any) -> bool:
    return isinstance(value, UninitializedTensorMixin)


# -- the mixin ------------------------------------------------------------------------


class LazyModuleMixin:
    """torch's ``LazyModuleMixin``, over the module the lazy class becomes.

    A lazy class calls :meth:`_lazy_init` at the end of its ``__init__`` (after
    the real ``__init__`` ran with size 0) with the arguments ``cls_to_become``
    takes after the size, the names of its uninitialised parameters and buffers,
    and defines ``_size_of(input)``; ``_size_name`` is the size's attribute.
    """

    cls_to_become: type | None = None
    _size_name: str

    def _lazy_init(
        self, args: dict, params: list[str], buffers: list[str], device, dtype
    ) -> None:
        self._lazy_args = args
        for name in params:
            setattr(self, name, UninitializedParameter(device=device, dtype=dtype))
        for name in buffers:
            setattr(self, name, UninitializedBuffer(device=device, dtype=dtype))
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def has_uninitialized_params(self) -> bool:
        stores = chain(self._parameters.values(), self._buffers.values())
        return any(is_lazy(v) for v in stores)

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Read the size from ``input``; each uninitialised tensor gets the value
        ``cls_to_become`` built with that size draws for it."""
        if not self.has_uninitialized_params():
            return
        size = self._size_of(input)
        setattr(self, self._size_name, size)
        stores = (self._parameters, self._buffers)
        lazy = [(s, n) for s in stores for n, v in s.items() if is_lazy(v)]
        first = lazy[0][0][lazy[0][1]]
        with no_grad():
            built = self.cls_to_become(
                size, **self._lazy_args, device=first.device, dtype=first.dtype
            )
        for store, name in lazy:
            store[name]._become(getattr(built, name))

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(
                f"module {type(self).__name__} has not been fully initialized"
            )
        module._initialize_hook.remove()
        del module._initialize_hook, module._lazy_args
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """torch's: an uninitialised tensor is put in as itself."""
        out = super().state_dict(destination, prefix, keep_vars)
        for store in (self._parameters, self._buffers):
            for name, value in store.items():
                if is_lazy(value) and prefix + name in out:
                    out[prefix + name] = value
        return out

    def _load_pre(self, state_dict: dict, prefix: str) -> None:
        """torch's ``_lazy_load_hook``: an uninitialised tensor takes the shape of
        the value loaded into it (an uninitialised value leaves it as it is),
        also inside a container."""
        for store in (self._parameters, self._buffers):
            for name, value in store.items():
                given = state_dict.get(prefix + name)
                if is_lazy(value) and given is not None and not is_lazy(given):
                    value.materialize(tuple(given.shape))


def _quiet_init(init: Any, module: Any, *args: Any, **kwargs: Any) -> None:
    """The real ``__init__`` at size 0 (its warning about empty weights is moot)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        init(module, *args, **kwargs)


# -- Linear -------------------------------------------------------------------------


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear
    _size_name = "in_features"

    def __init__(
        self,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        _quiet_init(Linear.__init__, self, 0, 0, False)
        self.out_features = out_features
        names = ["weight", "bias"] if bias else ["weight"]
        self._lazy_init(
            {"out_features": out_features, "bias": bias}, names, [], device, dtype
        )

    def _size_of(self, input: Tensor) -> int:
        return input.shape[-1]


# -- convolutions -------------------------------------------------------------------


class _LazyConvXdMixin(LazyModuleMixin):
    _size_name = "in_channels"
    _n: int

    def _lazy_conv_init(self, real: type, out_channels: int, args: dict, device, dtype):
        """``real``'s ``__init__`` at 0 channels and no bias, then ``weight`` (and
        ``bias``) uninitialised; ``args``: the rest of ``real``'s arguments."""
        _quiet_init(real.__init__, self, 0, 0, **{**args, "bias": False})
        self.out_channels = out_channels
        names = ["weight", "bias"] if args["bias"] else ["weight"]
        self._lazy_init(
            {"out_channels": out_channels, **args}, names, [], device, dtype
        )

    def _size_of(self, input: Tensor) -> int:
        unbatched = self._n + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                f"input to {type(self).__name__}, but got input of size: "
                f"{input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv(real: type) -> type:
    """The lazy class of the convolution ``real``, with torch's signature."""

    class LazyConv(_LazyConvXdMixin, real):
        cls_to_become = real

        def __init__(
            self,
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
        ) -> None:
            args = {
                "kernel_size": kernel_size,
                "stride": stride,
                "padding": padding,
                "dilation": dilation,
                "groups": groups,
                "bias": bias,
                "padding_mode": padding_mode,
            }
            self._lazy_conv_init(real, out_channels, args, device, dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + real.__name__
    return LazyConv


def _lazy_conv_transpose(real: type) -> type:
    """The lazy class of the transposed convolution ``real``."""

    class LazyConvTranspose(_LazyConvXdMixin, real):
        cls_to_become = real

        def __init__(
            self,
            out_channels: int,
            kernel_size: Any,
            stride: Any = 1,
            padding: Any = 0,
            output_padding: Any = 0,
            groups: int = 1,
            bias: bool = True,
            dilation: Any = 1,
            padding_mode: str = "zeros",
            device: Any = None,
            dtype: Any = None,
        ) -> None:
            args = {
                "kernel_size": kernel_size,
                "stride": stride,
                "padding": padding,
                "output_padding": output_padding,
                "groups": groups,
                "bias": bias,
                "dilation": dilation,
                "padding_mode": padding_mode,
            }
            self._lazy_conv_init(real, out_channels, args, device, dtype)

    LazyConvTranspose.__name__ = "Lazy" + real.__name__
    LazyConvTranspose.__qualname__ = LazyConvTranspose.__name__
    return LazyConvTranspose


# -- norms ----------------------------------------------------------------------------


def _lazy_norm(real: type) -> type:
    """The lazy class of the batch or instance norm ``real``: torch's
    ``_LazyNormBase`` (``affine`` and ``track_running_stats`` on by default, for
    the instance norms too; the size is ``input.shape[1]``)."""

    class LazyNorm(LazyModuleMixin, real):
        cls_to_become = real
        _size_name = "num_features"

        def __init__(
            self,
            eps: float = 1e-5,
            momentum: float | None = 0.1,
            affine: bool = True,
            track_running_stats: bool = True,
            device: Any = None,
            dtype: Any = None,
            *,
            bias: bool = True,
        ) -> None:
            _quiet_init(real.__init__, self, 0, eps, momentum, False, False, bias=False)
            self.affine, self.track_running_stats = affine, track_running_stats
            params = (["weight", "bias"] if bias else ["weight"]) if affine else []
            buffers = ["running_mean", "running_var"] if track_running_stats else []
            args = {
                "eps": eps,
                "momentum": momentum,
                "affine": affine,
                "track_running_stats": track_running_stats,
                "bias": bias,
            }
            self._lazy_init(args, params, buffers, device, dtype)
            if track_running_stats:
                tracked = make_tensor(0, dtype=int64, device=device)
                self.register_buffer("num_batches_tracked", tracked)

        def _size_of(self, input: Tensor) -> int:
            return input.shape[1]

    LazyNorm.__name__ = LazyNorm.__qualname__ = "Lazy" + real.__name__
    return LazyNorm


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)
LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
