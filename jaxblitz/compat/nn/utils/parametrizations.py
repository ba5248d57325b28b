"""Blitz 3, "Neural Networks": ``torch.nn.utils.parametrizations`` --
``weight_norm`` and ``spectral_norm`` as parametrizations
(:mod:`jaxblitz.compat.nn.utils.parametrize`).

``weight_norm`` keeps ``parametrizations.weight.original0`` (the norm ``g``) and
``original1`` (the direction ``v``); ``spectral_norm`` keeps
``parametrizations.weight.original`` and the power iteration's vectors as the
parametrization's buffers ``_u`` and ``_v`` (15 iterations at registration, one
or more at each read in training mode, none in eval mode): torch's state dict
names.
"""

from __future__ import annotations

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.normalization import normalize
from jaxblitz.compat.nn.utils import parametrize
from jaxblitz.compat.nn.utils.spectral_norm import (
    default_dim,
    random_unit,
    weight_matrix,
)
from jaxblitz.compat.nn.utils.weight_norm import _weight_norm, norm_except_dim
from jaxblitz.compat.tensor import Tensor

__all__ = ["spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``torch.nn.utils.parametrizations.weight_norm``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(
        self,
        weight: Tensor,
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = weight_matrix(weight, self.dim)
            h, w = weight_mat.size()
            with no_grad():
                self.register_buffer("_u", random_unit(weight_mat, h, eps))
                self.register_buffer("_v", random_unit(weight_mat, w, eps))
            self._power_method(weight_mat, 15)

    @no_grad()
    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # torch: out=self._u, out=self._v -- the buffers updated in place
        for _ in range(n_power_iterations):
            self._u.copy_(normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
            self._v.copy_(normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """``torch.nn.utils.parametrizations.spectral_norm``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"Module '{module}' has no parameter or buffer with name '{name}'"
        )
    if dim is None:
        dim = default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
