"""``torch.distributions``: probability distributions with torch's parameters,
shapes, checks and formulas, and ``kl_divergence``.

    from jaxblitz.compat.distributions import Categorical, Normal

    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -dist.log_prob(action) * reward

Each is torch's own class written over compat's tensor ops, so gradients through
``rsample``, ``log_prob``, ``entropy`` and ``kl_divergence`` are compat's autograd's,
and lazy execution records them. The draws come from compat's generator
(``torch.manual_seed(s)`` repeats them), not PyTorch's stream: a seeded script
samples reproducibly, with other numbers than PyTorch's.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat._not_offered import NotOffered
from jaxblitz.compat.distributions import constraints
from jaxblitz.compat.distributions.bernoulli import Bernoulli
from jaxblitz.compat.distributions.categorical import Categorical
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.distributions.exp_family import ExponentialFamily
from jaxblitz.compat.distributions.independent import Independent
from jaxblitz.compat.distributions.kl import kl_divergence, register_kl
from jaxblitz.compat.distributions.multivariate_normal import MultivariateNormal
from jaxblitz.compat.distributions.normal import Normal
from jaxblitz.compat.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from jaxblitz.compat.distributions.uniform import Uniform

__all__ = [
    "Bernoulli",
    "Categorical",
    "Distribution",
    "ExponentialFamily",
    "Independent",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
]

# torch.distributions' names compat does not offer, refused by name
_NOT_OFFERED = (
    "ContinuousBernoulli",
    "FisherSnedecor",
    "GeneralizedPareto",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "NegativeBinomial",
    "Pareto",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "transform_to",
)


def __getattr__(name: str) -> Any:  # noqa: N807 -- a module's __getattr__
    if name in _NOT_OFFERED:
        raise NotOffered(
            f"torch.distributions.{name} is not supported by jaxblitz.compat: "
            "not implemented"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
