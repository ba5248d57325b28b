"""``torch.distributions.HalfCauchy``: ``|x|`` of a Cauchy(0, scale)."""

from __future__ import annotations

import math

from jaxblitz.compat.distributions._half import Half
from jaxblitz.compat.distributions.cauchy import Cauchy
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import full

__all__ = ["HalfCauchy"]


class HalfCauchy(Half):
    _base = Cauchy
    base_dist: Cauchy

    @property
    def mean(self) -> Tensor:
        return full(
            self._extended_shape(),
            math.inf,
            dtype=self.scale.dtype,
            device=self.scale.device,
        )

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
