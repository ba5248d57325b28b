"""``torch.distributions.HalfNormal``: ``|x|`` of a Normal(0, scale)."""

from __future__ import annotations

import math

from jaxblitz.compat.distributions._half import Half
from jaxblitz.compat.distributions.normal import Normal
from jaxblitz.compat.tensor import Tensor

__all__ = ["HalfNormal"]


class HalfNormal(Half):
    _base = Normal
    base_dist: Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
