"""``torch.distributions.Poisson``: the Poisson distribution with ``rate``.

``sample`` is ``jax.random.poisson`` (:mod:`._ops`), not PyTorch's stream.
"""

from __future__ import annotations

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions._ops import poisson
from jaxblitz.compat.distributions.exp_family import ExponentialFamily
from jaxblitz.compat.distributions.utils import _Number, broadcast_all
from jaxblitz.compat.ops._unary import exp, log
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import Size

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, _Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)
