"""Blitz 3, "Neural Networks": ``torch.nn.utils.parametrizations`` --
``orthogonal``, ``weight_norm`` and ``spectral_norm`` as parametrizations
(:mod:`jaxblitz.compat.nn.utils.parametrize`).

``orthogonal`` keeps torch's maps (``matrix_exp``, ``cayley``, ``householder``:
the product of Householder reflections written out, as
``torch.linalg.householder_product`` computes it) and its trivialization (the
``base`` buffer, made from a QR decomposition, the columns' signs those of R's
diagonal).

``weight_norm`` keeps ``parametrizations.weight.original0`` (the norm ``g``) and
``original1`` (the direction ``v``); ``spectral_norm`` keeps
``parametrizations.weight.original`` and the power iteration's vectors as the
parametrization's buffers ``_u`` and ``_v`` (15 iterations at registration, one
or more at each read in training mode, none in eval mode): torch's state dict
names.
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

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
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor, creation

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = creation.eye(k, dtype=q.dtype)
    return (q.mT @ q).allclose(eye, atol=10.0 * n * _finfo_eps(q))


def _finfo_eps(q: Tensor) -> float:
    return float(np.finfo(q.dtype.np).eps)


def _linalg():
    """``compat.linalg`` (QR, solve, matrix_exp), imported at first use."""
    from jaxblitz.compat import linalg

    return linalg


def _make_orthogonal(a: Tensor) -> Tensor:
    """torch's ``householder_product(*geqrf(a))`` with each column's sign that of
    R's diagonal: the QR decomposition's Q, the same signs."""
    q, r = _linalg().qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """``torch.linalg.householder_product(a, tau)``: ``H_1 ... H_k``'s first ``k``
    columns, ``H_i = I - tau_i v_i v_i^T``, ``v_i`` column ``i`` of ``a`` below
    the diagonal with a 1 on it."""
    n, k = a.size(-2), a.size(-1)
    eye = creation.eye(n, dtype=a.dtype)
    q = eye.expand(*a.shape[:-2], n, n)
    for i in range(k):
        v = a[..., :, i] + eye[:, i]  # a is strictly lower: zeros above, 0 at i
        qv = (q @ v.unsqueeze(-1)).squeeze(-1)
        q = q - tau[..., i, None, None] * qv.unsqueeze(-1) * v.unsqueeze(-2)
    return q[..., :k]


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(
        self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization=True
    ) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                zeros = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = cat([X, zeros], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _linalg().matrix_exp(A)
            else:
                eye = creation.eye(n, dtype=A.dtype)
                Q = _linalg().solve(eye + A * -0.5, eye + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        if n < k:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # torch: geqrf's reflectors for householder; nothing to assign else
            raise NotImplementedError(
                "It is not possible to assign to the matrix exponential or the "
                "Cayley parametrizations when use_trivialization=False."
            )
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = creation.randn(*Q.size()[:-2], n, n - k, dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_id = creation.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """``torch.nn.utils.parametrizations.orthogonal``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"Module '{module}' has no parameter or buffer with name '{name}'"
        )
    if weight.ndim < 2:
        raise ValueError(
            "Expected a matrix or batch of matrices. Got a tensor of "
            f"{weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    if orth_enum == _OrthMaps.householder and not use_trivialization:
        raise NotImplementedError(
            "orthogonal: use_trivialization=False with orthogonal_map="
            "'householder' is not supported by jaxblitz.compat"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


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
