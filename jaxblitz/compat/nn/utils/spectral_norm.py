"""Blitz 3, "Neural Networks": the hook-based ``torch.nn.utils.spectral_norm``
and ``remove_spectral_norm``.

The weight is ``weight_orig / sigma``, ``sigma`` the largest singular value of
``weight_orig`` seen as a matrix (``dim`` first), estimated by power iteration
from the buffers ``weight_u`` and ``weight_v``: one or more iterations before
each call in training mode, none in eval mode, as torch does. ``weight_orig``,
``weight_u`` and ``weight_v`` are torch's state dict names.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.conv_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from jaxblitz.compat.nn.lazy_modules import UninitializedParameter
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.normalization import normalize
from jaxblitz.compat.nn.utils.weight_norm import check_no_hook, remove_hook
from jaxblitz.compat.tensor import Tensor

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


def weight_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix of ``weight.size(dim)`` rows."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)


def random_unit(weight: Tensor, n: int, eps: float) -> Tensor:
    """A random unit vector of ``n`` of ``weight``'s dtype (torch: normal, then
    normalized)."""
    return normalize(weight.new_empty(n).normal_(0, 1), dim=0, eps=eps)


def default_dim(module: Module) -> int:
    """The output dimension of ``module``'s weight: 1 for a transposed
    convolution, else 0."""
    transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
    return 1 if isinstance(module, transposed) else 0


class SpectralNorm:
    """The forward pre-hook that recomputes ``module.<name>``."""

    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self,
        name: str = "weight",
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return weight_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # torch: out=v, out=u -- the buffers updated in place
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        weight = self.compute_weight(module, do_power_iteration=module.training)
        setattr(module, self.name, weight)

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        check_no_hook(module, SpectralNorm, name, "spectral_norm")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(
                f"`SpectralNorm` cannot be applied as parameter `{name}` is None"
            )
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "spectral normalization"
            )
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u, v = random_unit(weight, h, fn.eps), random_unit(weight, w, fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """``torch.nn.utils.spectral_norm``."""
    if dim is None:
        dim = default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """``torch.nn.utils.remove_spectral_norm``: ``name`` a plain parameter again."""
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
