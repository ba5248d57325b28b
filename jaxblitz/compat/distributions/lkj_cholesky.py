"""``torch.distributions.LKJCholesky``: the LKJ distribution over Cholesky
factors of ``dim x dim`` correlation matrices with ``concentration``, sampled by
torch's onion method (Beta draws and normals on the hypersphere)."""

from __future__ import annotations

import math

import numpy as np

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.beta import Beta
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.distributions.utils import _finfo, broadcast_all
from jaxblitz.compat.ops._gather import where
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import Size
from jaxblitz.compat.tensor.creation import arange, randn, tensor

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self,
        dim: int,
        concentration: Tensor | float = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        if dim < 2:
            raise ValueError(
                "Expected dim to be an integer greater than or equal to 2. "
                f"Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the Beta of the onion method's squared radii: torch's construction
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(
            self.dim - 1,
            dtype=self.concentration.dtype,
            device=self.concentration.device,
        )
        offset = cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(
            self._extended_shape(sample_shape), dtype=y.dtype, device=y.device
        ).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # torch: the first row is 0 (its 0 / 0 filled)
        first_row = tensor(np.arange(self.dim) == 0).unsqueeze(-1)
        u_hypersphere = where(first_row, 0.0, u_hypersphere)
        w = y.sqrt() * u_hypersphere
        eps = _finfo(w.dtype).tiny  # the diagonal stays positive
        diag_elems = (1 - (w**2).sum(dim=-1)).clamp(min=eps).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value):
        # torch: the normalizing constant of LKJ(eta) with its Cholesky factor's
        # Jacobian, from the onion method's derivation
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        # torch's pi_constant (the mvlgamma's pi term cancels its own)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
