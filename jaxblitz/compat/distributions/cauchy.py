"""``torch.distributions.Cauchy``: the Cauchy distribution with ``loc`` and ``scale``.

``rsample`` is ``loc + cauchy_() * scale`` as torch's, from compat's generator.
"""

from __future__ import annotations

import math
from math import inf, nan

from jaxblitz.compat.distributions._loc_scale import LocScale
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.ops._unary import atan, tan
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import full

__all__ = ["Cauchy"]


class Cauchy(LocScale, Distribution):
    @property
    def mean(self) -> Tensor:
        return full(
            self._extended_shape(), nan, dtype=self.loc.dtype, device=self.loc.device
        )

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return full(
            self._extended_shape(), inf, dtype=self.loc.dtype, device=self.loc.device
        )

    def rsample(self, sample_shape: tuple[int, ...] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi)
            - self.scale.log()
            - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
