"""``torch.distributions.Chi2``: the chi-square distribution with ``df``: Gamma(df / "
"2, 1 / 2)."""

from __future__ import annotations

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.gamma import Gamma
from jaxblitz.compat.tensor import Tensor

__all__ = ["Chi2"]


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
