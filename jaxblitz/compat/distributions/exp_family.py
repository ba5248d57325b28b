"""``torch.distributions.ExponentialFamily``: distributions with natural
parameters and a log normalizer, whose entropy is the Bregman divergence of the
log normalizer (computed with compat's autograd)."""

from __future__ import annotations

from jaxblitz.compat.autograd import grad
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the form ``exp(<t(x), theta> - F(theta) + k(x))``."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np, g in zip(nparams, gradients, strict=False):
            result -= (np * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
