"""Blitz 2 (autograd): ``torch.nn.grad`` -- a convolution's gradient with respect
to its input or its weight, given the gradient of its output, as a custom
``autograd.Function`` calls them. Each is the backward pass of compat's own
``F.conv*d``: the convolution is linear in either argument, so the gradient
does not depend on the placeholder it is taken at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxblitz.compat import autograd
from jaxblitz.compat.autograd.grad_mode import enable_grad, is_grad_enabled
from jaxblitz.compat.nn import functional as F
from jaxblitz.compat.tensor import Tensor, creation

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]


def _gradient(
    conv: Callable[..., Tensor],
    input: Any,
    weight: Any,
    grad_output: Tensor,
    wrt: int,
    settings: tuple,
) -> Tensor:
    """The gradient of ``conv(input, weight)`` at ``grad_output`` with respect
    to argument ``wrt`` (0 or 1), given as a size and made a zero placeholder."""
    args = [input, weight]
    args[wrt] = creation.zeros(
        tuple(args[wrt]),
        dtype=grad_output.dtype,
        device=grad_output.device,
        requires_grad=True,
    )
    # torch's result is differentiable: keep the graph when something needs it
    graph = is_grad_enabled() and any(
        isinstance(a, Tensor) and a.requires_grad for a in (input, weight, grad_output)
    )
    with enable_grad():
        output = conv(*args, None, *settings)
        (result,) = autograd.grad(output, args[wrt], grad_output, create_graph=graph)
    return result


def _pair_of(conv: Callable[..., Tensor]) -> tuple[Callable, Callable]:
    def input_grad(
        input_size: Any,
        weight: Tensor,
        grad_output: Tensor,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
    ) -> Tensor:
        settings = (stride, padding, dilation, groups)
        return _gradient(conv, input_size, weight, grad_output, 0, settings)

    def weight_grad(
        input: Tensor,
        weight_size: Any,
        grad_output: Tensor,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
    ) -> Tensor:
        settings = (stride, padding, dilation, groups)
        return _gradient(conv, input, weight_size, grad_output, 1, settings)

    return input_grad, weight_grad


conv1d_input, conv1d_weight = _pair_of(F.conv1d)
conv2d_input, conv2d_weight = _pair_of(F.conv2d)
conv3d_input, conv3d_weight = _pair_of(F.conv3d)
for _name in __all__:
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
