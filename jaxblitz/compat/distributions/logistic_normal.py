"""``torch.distributions.LogisticNormal``: a Normal's vector (an
Independent over its last dimension) mapped onto the simplex by stick
breaking, as a TransformedDistribution."""

from __future__ import annotations

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions._matrix_transforms import StickBreakingTransform
from jaxblitz.compat.distributions.normal import Normal
from jaxblitz.compat.distributions.transformed_distribution import (
    TransformedDistribution,
)
from jaxblitz.compat.tensor import Tensor

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(
            base_dist, StickBreakingTransform(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
