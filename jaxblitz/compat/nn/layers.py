"""Blitz 3, "Neural Networks": the layers the Blitz uses, as ``nn.Module``s.

Weights are drawn by the core's ``init_conv2d`` / ``init_linear`` (PyTorch's
default initialisation) with a key from compat's global generator.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from jaxblitz import models
from jaxblitz.compat import creation
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor


def _pair(v: Any) -> tuple[int, int]:
    return tuple(v) if isinstance(v, tuple | list) else (v, v)


def _params(init: dict, bias: bool) -> tuple[Parameter, Parameter | None]:
    weight = Parameter(Tensor._wrap(init["weight"]))
    return weight, Parameter(Tensor._wrap(init["bias"])) if bias else None


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
        init = models.init_linear(
            creation.default_generator.next_key(), in_features, out_features
        )
        self.weight, bias_param = _params(init, bias)
        self.register_parameter("bias", bias_param)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Conv2d(Module):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        bias: bool = True,
        **_: Any,
    ):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding = _pair(padding)
        if self.kernel_size[0] != self.kernel_size[1]:
            raise NotImplementedError("Conv2d: only square kernels are supported")
        init = models.init_conv2d(
            creation.default_generator.next_key(),
            in_channels,
            out_channels,
            self.kernel_size[0],
        )
        self.weight, bias_param = _params(init, bias)
        self.register_parameter("bias", bias_param)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}"
        )
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        return text + ("" if self.bias is not None else ", bias=False")


class MaxPool2d(Module):
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

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
            f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


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


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(
                f"dropout probability has to be between 0 and 1, but got {p}"
            )
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Sequential(Module):
    def __init__(self, *args: Any):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class MSELoss(Module):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target)


class CrossEntropyLoss(Module):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target)


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
