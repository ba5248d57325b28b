"""``torch.distributions.Dirichlet``: the Dirichlet distribution on the simplex.

``rsample`` normalizes Gamma draws (``jax.random.gamma``, not PyTorch's stream);
its gradient is the implicit reparameterization torch's ``_dirichlet_grad`` gives.
"""

from __future__ import annotations

from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions._ops import _standard_gamma
from jaxblitz.compat.distributions.exp_family import ExponentialFamily
from jaxblitz.compat.nn.functional import one_hot
from jaxblitz.compat.ops._special_math import digamma, lgamma, xlogy
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._tensor_base import Size

__all__ = ["Dirichlet"]


def _sample_dirichlet(concentration):
    # torch: torch._sample_dirichlet, differentiated by _dirichlet_grad; here
    # normalized Gamma draws, whose implicit gradient is the same quantity
    gammas = _standard_gamma(concentration)
    return gammas / gammas.sum(-1, keepdim=True)


class Dirichlet(ExponentialFamily):
    arg_constraints = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, concentration: Tensor, validate_args: bool | None = None
    ) -> None:
        if concentration.dim() < 1:
            raise ValueError(
                "`concentration` parameter must be at least one-dimensional."
            )
        self.concentration = concentration
        batch_shape, event_shape = (concentration.shape[:-1], concentration.shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: tuple[int, ...] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        return _sample_dirichlet(concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration - 1.0, value).sum(-1)
            + lgamma(self.concentration.sum(-1))
            - lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(
            mode
        )
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return (
            self.concentration
            * (con0 - self.concentration)
            / (con0.pow(2) * (con0 + 1))
        )

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            lgamma(self.concentration).sum(-1)
            - lgamma(a0)
            - (k - a0) * digamma(a0)
            - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))
