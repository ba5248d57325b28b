"""``torch.distributions.Laplace``: the Laplace distribution with ``loc`` and ``scale``.

``rsample`` maps ``uniform_(eps - 1, 1)`` draws as torch's, from compat's generator.
"""

from __future__ import annotations

from jaxblitz.compat.distributions._loc_scale import LocScale
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.distributions.utils import _finfo
from jaxblitz.compat.ops import _unary
from jaxblitz.compat.ops._unary import expm1, log, log1p
from jaxblitz.compat.tensor import Tensor

__all__ = ["Laplace"]


class Laplace(LocScale, Distribution):
    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return 2**0.5 * self.scale

    def rsample(self, sample_shape: tuple[int, ...] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        finfo = _finfo(self.loc.dtype)
        u = self.loc.new_empty(shape).uniform_(float(finfo.eps) - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - _unary.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * expm1(
            -(value - self.loc).abs() / self.scale
        )

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)
