"""What ``HalfNormal`` and ``HalfCauchy`` share: ``|x|`` of a location-0 base."""

from __future__ import annotations

import math
from math import inf
from typing import Any

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.transformed_distribution import (
    TransformedDistribution,
)
from jaxblitz.compat.distributions.transforms import AbsTransform
from jaxblitz.compat.ops._gather import where
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor.creation import as_tensor, zeros_like


class Half(TransformedDistribution):
    """``|x|`` for ``x`` of ``_base(0, scale)``; a subclass names ``_base``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: Any
    _family: Any  # the class that names _base (torch's expand checks it)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_base" in cls.__dict__:
            cls._family = cls

    def __init__(
        self, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._family, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = as_tensor(
            value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device
        )
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
