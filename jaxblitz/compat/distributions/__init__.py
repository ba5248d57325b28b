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

from jaxblitz.compat.distributions import (
    _kl_families,  # noqa: F401 -- registers the newer families' KL pairs
    constraints,
    transforms,
)
from jaxblitz.compat.distributions._cat_stack_transforms import (
    CatTransform,
    StackTransform,
)
from jaxblitz.compat.distributions._matrix_transforms import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    StickBreakingTransform,
)
from jaxblitz.compat.distributions.bernoulli import Bernoulli
from jaxblitz.compat.distributions.beta import Beta
from jaxblitz.compat.distributions.binomial import Binomial
from jaxblitz.compat.distributions.categorical import Categorical
from jaxblitz.compat.distributions.cauchy import Cauchy
from jaxblitz.compat.distributions.chi2 import Chi2
from jaxblitz.compat.distributions.constraint_registry import biject_to, transform_to
from jaxblitz.compat.distributions.continuous_bernoulli import ContinuousBernoulli
from jaxblitz.compat.distributions.dirichlet import Dirichlet
from jaxblitz.compat.distributions.distribution import Distribution
from jaxblitz.compat.distributions.exp_family import ExponentialFamily
from jaxblitz.compat.distributions.exponential import Exponential
from jaxblitz.compat.distributions.fishersnedecor import FisherSnedecor
from jaxblitz.compat.distributions.gamma import Gamma
from jaxblitz.compat.distributions.generalized_pareto import GeneralizedPareto
from jaxblitz.compat.distributions.geometric import Geometric
from jaxblitz.compat.distributions.gumbel import Gumbel
from jaxblitz.compat.distributions.half_cauchy import HalfCauchy
from jaxblitz.compat.distributions.half_normal import HalfNormal
from jaxblitz.compat.distributions.independent import Independent
from jaxblitz.compat.distributions.inverse_gamma import InverseGamma
from jaxblitz.compat.distributions.kl import kl_divergence, register_kl
from jaxblitz.compat.distributions.kumaraswamy import Kumaraswamy
from jaxblitz.compat.distributions.laplace import Laplace
from jaxblitz.compat.distributions.lkj_cholesky import LKJCholesky
from jaxblitz.compat.distributions.log_normal import LogNormal
from jaxblitz.compat.distributions.logistic_normal import LogisticNormal
from jaxblitz.compat.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
)
from jaxblitz.compat.distributions.mixture_same_family import MixtureSameFamily
from jaxblitz.compat.distributions.multinomial import Multinomial
from jaxblitz.compat.distributions.multivariate_normal import MultivariateNormal
from jaxblitz.compat.distributions.negative_binomial import NegativeBinomial
from jaxblitz.compat.distributions.normal import Normal
from jaxblitz.compat.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from jaxblitz.compat.distributions.pareto import Pareto
from jaxblitz.compat.distributions.poisson import Poisson
from jaxblitz.compat.distributions.relaxed_bernoulli import RelaxedBernoulli
from jaxblitz.compat.distributions.relaxed_categorical import RelaxedOneHotCategorical
from jaxblitz.compat.distributions.studentT import StudentT
from jaxblitz.compat.distributions.transformed_distribution import (
    TransformedDistribution,
)
from jaxblitz.compat.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from jaxblitz.compat.distributions.uniform import Uniform
from jaxblitz.compat.distributions.von_mises import VonMises
from jaxblitz.compat.distributions.weibull import Weibull
from jaxblitz.compat.distributions.wishart import Wishart

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]

# torch's transforms of structured values live in their own modules, which build
# on transforms.Transform: torch.distributions.transforms names them too
for _name in (
    "CatTransform",
    "StackTransform",
    "CorrCholeskyTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "StickBreakingTransform",
):
    setattr(transforms, _name, globals()[_name])
