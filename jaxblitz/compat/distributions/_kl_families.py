"""torch's KL pairs (:func:`.kl.register_kl`) of ContinuousBernoulli, Pareto and
LowRankMultivariateNormal, with torch's formulas; registered on import (by the
package), beside :mod:`.kl`'s own pairs."""

from __future__ import annotations

import math
from math import inf

from jaxblitz.compat.distributions.beta import Beta
from jaxblitz.compat.distributions.continuous_bernoulli import ContinuousBernoulli
from jaxblitz.compat.distributions.exponential import Exponential
from jaxblitz.compat.distributions.gamma import Gamma
from jaxblitz.compat.distributions.gumbel import Gumbel
from jaxblitz.compat.distributions.kl import (
    _batch_trace_XXT,
    _infinite_like,
    _x_log_x,
    register_kl,
)
from jaxblitz.compat.distributions.laplace import Laplace
from jaxblitz.compat.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from jaxblitz.compat.distributions.multivariate_normal import (
    MultivariateNormal,
    _batch_mahalanobis,
)
from jaxblitz.compat.distributions.normal import Normal
from jaxblitz.compat.distributions.pareto import Pareto
from jaxblitz.compat.distributions.uniform import Uniform
from jaxblitz.compat.ops._gather import where
from jaxblitz.compat.ops._linalg_ex import solve_triangular
from jaxblitz.compat.ops.shape_ops import broadcast_shapes

# -- ContinuousBernoulli -------------------------------------------------------


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p()
    result = result - q._cont_bern_log_norm()
    if isinstance(p, Uniform):  # torch: infinite where the Uniform leaves [0, 1]
        outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
        return where(outside, inf, result)
    return result


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (
        2.0 * q.scale.square()
    )
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return where(outside, inf, result)


# -- Pareto --------------------------------------------------------------------


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return where(p.support.lower_bound < q.support.lower_bound, inf, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return where(p.alpha <= 1, inf, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return where(p.alpha <= 1, inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return where(p.alpha <= 2, inf, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    return where(p.low < q.support.lower_bound, inf, result)


# torch: no finite KL between these supports
_INFINITE = {
    (Beta, Pareto): "concentration1",
    (ContinuousBernoulli, Pareto): "probs",
    (Exponential, ContinuousBernoulli): "rate",
    (Exponential, Pareto): "rate",
    (Gamma, ContinuousBernoulli): "concentration",
    (Gamma, Pareto): "concentration",
    (Gumbel, ContinuousBernoulli): "loc",
    (Gumbel, Pareto): "loc",
    (Laplace, ContinuousBernoulli): "loc",
    (Laplace, Pareto): "loc",
    (Normal, ContinuousBernoulli): "loc",
    (Normal, Pareto): "loc",
    (Pareto, Beta): "scale",
    (Pareto, ContinuousBernoulli): "scale",
    (Pareto, Uniform): "scale",
}

for (_p, _q), _name in _INFINITE.items():
    register_kl(_p, _q)(lambda p, q, _name=_name: _infinite_like(getattr(p, _name)))

# -- LowRankMultivariateNormal ---------------------------------------------------


def _check_event_shapes(p, q, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"KL-divergence between two {what} with\
                          different event shapes cannot be computed"
        )


def _woodbury_A(q):
    """``inv(q_C) @ q_W.T @ inv(q_D)``: inv(q_cov) = inv(q_D) - A.T @ A."""
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(
        d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril
    )


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(
        q._unbroadcasted_cov_factor,
        q._unbroadcasted_cov_diag,
        x,
        q._capacitance_tril,
    )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # inv(qcov) @ pcov = [inv(qD) - A.T @ A] @ (pD + pW @ pW.T)
    A = _woodbury_A(q)
    term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_XXT(
        p._unbroadcasted_cov_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)
    )
    term23 = _batch_trace_XXT(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A.matmul(p._unbroadcasted_cov_factor))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    p_logdet = 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term1 = _lowrank_logdet(q) - p_logdet
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # inv(qcov) @ pcov = [inv(qD) - A.T @ A] @ p_tril @ p_tril.T
    A = _woodbury_A(q)
    term21 = _batch_trace_XXT(
        p._unbroadcasted_scale_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)
    )
    term22 = _batch_trace_XXT(A.matmul(p._unbroadcasted_scale_tril))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    q_logdet = 2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term1 = q_logdet - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, (q.loc - p.loc))
    # inv(qcov) @ pcov = inv(q_tril @ q_tril.T) @ (pW @ pW.T + pD)
    combined_batch_shape = broadcast_shapes(
        q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2]
    )
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    p_cov_factor = p._unbroadcasted_cov_factor.expand(
        combined_batch_shape + (n, p.cov_factor.size(-1))
    )
    p_cov_diag = (
        p._unbroadcasted_cov_diag.sqrt()
        .diag_embed()
        .expand(combined_batch_shape + (n, n))
    )
    term21 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_factor, upper=False))
    term22 = _batch_trace_XXT(solve_triangular(q_scale_tril, p_cov_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
