"""The rest of ``torch.distributions`` in compat against PyTorch's: Weibull,
Pareto, InverseGamma, Kumaraswamy, GeneralizedPareto, FisherSnedecor,
NegativeBinomial, ContinuousBernoulli, LogisticNormal, LKJCholesky, VonMises,
LowRankMultivariateNormal and Wishart -- values and gradients, KL pairs, draws by
shape, support and moments (compat's stream, not torch's) in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as ct
from jaxblitz.compat import lazy

from .test_distributions import (
    POS,
    SIMPLEX,
    SPD,
    bad_args,
    check_against_torch,
    check_samples,
    close,
    f32,
    kl_matches_torch,
    two,
)

pt = pytest.importorskip("torch")

FACTOR = f32(1.0, 0.5, -0.3, 0.2, 0.1, 0.7).reshape(3, 2)
CORR_L = np.linalg.cholesky(
    np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]])
).astype(np.float32)

CASES = {
    "weibull": (
        lambda D, a, b: D.Weibull(a, b),
        dict(a=POS, b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 1.5, 4.0),
        f32(0.1, 0.5, 0.9),
    ),
    "pareto": (
        lambda D, a, b: D.Pareto(a, b),
        dict(a=POS, b=f32(3.0, 1.0, 0.5)),
        f32(0.6, 1.5, 4.0),
        f32(0.1, 0.5, 0.9),
    ),
    "inverse_gamma": (
        lambda D, a, b: D.InverseGamma(a, b),
        dict(a=f32(0.5, 1.5, 3.0), b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 1.5, 4.0),
        None,
    ),
    "kumaraswamy": (
        lambda D, a, b: D.Kumaraswamy(a, b),
        dict(a=f32(0.5, 2.0, 3.0), b=f32(2.0, 1.0, 0.5)),
        f32(0.3, 0.5, 0.9),
        f32(0.1, 0.5, 0.9),
    ),
    "generalized_pareto": (
        lambda D, a, b, c: D.GeneralizedPareto(a, b, c),
        dict(a=f32(0.0, 1.0, -1.0), b=POS, c=f32(0.0, 0.3, -0.2)),
        f32(0.3, 1.5, 0.4),
        f32(0.1, 0.5, 0.9),
    ),
    "fisher_snedecor": (
        lambda D, a, b: D.FisherSnedecor(a, b),
        dict(a=f32(1.0, 3.0, 6.0), b=f32(2.0, 5.0, 9.0)),
        f32(0.3, 1.5, 4.0),
        None,
    ),
    "negative_binomial_probs": (
        lambda D, n, p: D.NegativeBinomial(n, probs=p),
        dict(n=f32(3.0, 1.0, 0.0), p=f32(0.2, 0.5, 0.7)),
        f32(0.0, 2.0, 5.0),
        None,
    ),
    "negative_binomial_logits": (
        lambda D, p: D.NegativeBinomial(4, logits=p),
        dict(p=f32(-1.0, 0.0, 2.0)),
        f32(0.0, 2.0, 5.0),
        None,
    ),
    "continuous_bernoulli_probs": (
        lambda D, p: D.ContinuousBernoulli(probs=p),
        dict(p=f32(0.1, 0.4995, 0.5, 0.9)),
        f32(0.0, 0.3, 0.5, 1.0),
        f32(0.1, 0.5, 0.7, 0.9),
    ),
    "continuous_bernoulli_logits": (
        lambda D, p: D.ContinuousBernoulli(logits=p),
        dict(p=f32(-2.0, 0.0, 0.001, 3.0)),
        f32(0.2, 0.3, 0.5, 0.9),
        f32(0.1, 0.5, 0.7, 0.9),
    ),
    "logistic_normal": (
        lambda D, a, b: D.LogisticNormal(a, b),
        dict(a=f32(0.0, 1.0), b=POS[:2]),
        SIMPLEX,
        None,
    ),
    "lkj_cholesky": (
        lambda D, c: D.LKJCholesky(3, c),
        dict(c=f32(0.5, 1.0, 2.5)),
        CORR_L,
        None,
    ),
    "von_mises": (
        lambda D, a, b: D.VonMises(a, b),
        dict(a=f32(0.0, 1.0, -2.0), b=f32(0.5, 3.0, 10.0)),
        f32(0.3, 1.0, 3.0),
        None,
    ),
    "lowrank_mvn": (
        lambda D, a, w, d: D.LowRankMultivariateNormal(a, w, d),
        dict(a=f32(0.0, 1.0, -1.0, 2.0, 0.5, 0.0).reshape(2, 3), w=FACTOR, d=POS),
        f32(0.3, 1.0, -0.5),
        None,
    ),
    "wishart_covariance": (
        lambda D, df, cov: D.Wishart(df, covariance_matrix=cov),
        dict(df=f32(4.0, 6.5), cov=SPD),
        SPD * 2,
        None,
    ),
    "wishart_scale_tril": (
        lambda D, df, tril: D.Wishart(df, scale_tril=tril),
        dict(df=f32(3.5), tril=np.linalg.cholesky(SPD).astype(np.float32)),
        SPD,
        None,
    ),
    "wishart_precision": (
        lambda D, prec: D.Wishart(5.0, precision_matrix=prec),
        dict(prec=SPD),
        SPD,
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    make, params, value, q = CASES[name]
    ours, _ = check_against_torch(
        lambda lib, **p: make(lib.distributions, **p), params, value, q, rtol=2e-5
    )
    ct.manual_seed(0)
    check_samples(ours)


def pareto_args(a, b):
    return (a + 0.5, b + 1.5)


KL_PAIRS = {
    "cb_cb": two(
        "ContinuousBernoulli",
        "ContinuousBernoulli",
        lambda a, b: (a / 4,),
        lambda a, b: (b / 3,),
    ),
    "beta_cb": two(
        "Beta", "ContinuousBernoulli", lambda a, b: (a, b), lambda a, b: (b / 3,)
    ),
    "uniform_cb": two(
        "Uniform",
        "ContinuousBernoulli",
        lambda a, b: (a * 0.1, a * 0.2 + 0.5),
        lambda a, b: (b / 3,),
    ),
    "cb_exponential": two(
        "ContinuousBernoulli", "Exponential", lambda a, b: (a / 4,), lambda a, b: (b,)
    ),
    "cb_normal": two(
        "ContinuousBernoulli", "Normal", lambda a, b: (a / 4,), lambda a, b: (b, a)
    ),
    "cb_uniform": two(
        "ContinuousBernoulli",
        "Uniform",
        lambda a, b: (a / 4,),
        lambda a, b: (a - 1, a + b),
    ),
    "pareto_pareto": two("Pareto", "Pareto", pareto_args, lambda a, b: (a, b)),
    "pareto_exponential": two(
        "Pareto", "Exponential", lambda a, b: (a, b), lambda a, b: (b,)
    ),
    "pareto_gamma": two(
        "Pareto", "Gamma", lambda a, b: (a, b + 1), lambda a, b: (b, a)
    ),
    "pareto_normal": two("Pareto", "Normal", pareto_args, lambda a, b: (b, a)),
    "uniform_pareto": two(
        "Uniform", "Pareto", lambda a, b: (a, a + b), lambda a, b: (a / 2, b)
    ),
    "normal_pareto_infinite": two(
        "Normal", "Pareto", lambda a, b: (a, b), lambda a, b: (a, b)
    ),
    "gamma_cb_infinite": two(
        "Gamma", "ContinuousBernoulli", lambda a, b: (a, b), lambda a, b: (b / 3,)
    ),
    "lowrank_lowrank": (
        lambda lib, a, w, d: lib.distributions.LowRankMultivariateNormal(a, w, d),
        lambda lib, a, w, d: lib.distributions.LowRankMultivariateNormal(
            a * 2, w.flip(0), d + 1
        ),
        dict(a=f32(0.0, 1.0, -1.0), w=FACTOR, d=POS),
    ),
    "mvn_lowrank": (
        lambda lib, a, w, d: lib.distributions.MultivariateNormal(
            a, covariance_matrix=w @ w.mT + lib.diag_embed(d)
        ),
        lambda lib, a, w, d: lib.distributions.LowRankMultivariateNormal(
            a * 2, w.flip(0), d + 1
        ),
        dict(a=f32(0.0, 1.0, -1.0), w=FACTOR, d=POS),
    ),
    "lowrank_mvn": (
        lambda lib, a, w, d: lib.distributions.LowRankMultivariateNormal(a, w, d),
        lambda lib, a, w, d: lib.distributions.MultivariateNormal(
            a * 2, scale_tril=lib.diag_embed(d + 1)
        ),
        dict(a=f32(0.0, 1.0, -1.0), w=FACTOR, d=POS),
    ),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence_and_its_gradients_match_torch(name):
    kl_matches_torch(*KL_PAIRS[name])


STRUCTURED = [
    lambda T: T.StickBreakingTransform(),
    lambda T: T.CorrCholeskyTransform(),
    lambda T: T.CatTransform(
        [T.ExpTransform(), T.AffineTransform(1.0, 2.0)], 0, [1, 2]
    ),
    lambda T: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], 0),
]


@pytest.mark.parametrize("make", STRUCTURED, ids=["stick", "corr", "cat", "stack"])
def test_structured_transforms_map_invert_and_give_log_det_jacobians(make):
    ours, theirs = make(ct.distributions.transforms), make(pt.distributions.transforms)
    x = f32(-0.5, 0.1, 0.7)
    if isinstance(theirs, pt.distributions.transforms.StackTransform):
        x = x[:2]
    our_x, their_x = ct.tensor(x, requires_grad=True), pt.tensor(x, requires_grad=True)
    our_y, their_y = ours(our_x), theirs(their_x)
    close(our_y, their_y, "forward")
    close(ours.inv(our_y), theirs.inv(their_y), "inverse", atol=1e-5)
    our_j = ours.log_abs_det_jacobian(our_x, our_y)
    their_j = theirs.log_abs_det_jacobian(their_x, their_y)
    close(our_j, their_j, "log_abs_det_jacobian", atol=1e-5)
    (our_y.sum() + our_j.sum()).backward()
    (their_y.sum() + their_j.sum()).backward()
    close(our_x.grad, their_x.grad, "grad", atol=1e-5)
    assert ours.bijective == theirs.bijective


@pytest.mark.parametrize(
    "name", ["LowerCholeskyTransform", "PositiveDefiniteTransform"]
)
def test_matrix_transforms_round_trip_as_torchs(name):
    x = f32(0.3, -1.0, 0.5, 0.2).reshape(2, 2)
    ours = getattr(ct.distributions.transforms, name)()
    theirs = getattr(pt.distributions.transforms, name)()
    our_y, their_y = ours(ct.tensor(x)), theirs(pt.tensor(x))
    close(our_y, their_y, "forward")
    close(ours.inv(our_y), theirs.inv(their_y), "inverse", atol=1e-5)
    assert ours == getattr(ct.distributions.transforms, name)()


CONSTRAINTS = [
    lambda C: C.real,
    lambda C: C.positive,
    lambda C: C.greater_than(2.0),
    lambda C: C.less_than(-1.0),
    lambda C: C.unit_interval,
    lambda C: C.interval(-2.0, 3.0),
    lambda C: C.simplex,
    lambda C: C.lower_cholesky,
    lambda C: C.positive_definite,
    lambda C: C.corr_cholesky,
    lambda C: C.independent(C.positive, 1),
    lambda C: C.cat([C.positive, C.real], -1, [1, 2]),
    lambda C: C.stack([C.positive, C.unit_interval], 0),
]


@pytest.mark.parametrize("make", CONSTRAINTS, ids=range(len(CONSTRAINTS)))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to_pick_torchs_transforms(make, registry):
    ours_c = make(ct.distributions.constraints)
    theirs_c = make(pt.distributions.constraints)
    try:
        theirs = getattr(pt.distributions, registry)(theirs_c)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            getattr(ct.distributions, registry)(ours_c)
        return
    ours = getattr(ct.distributions, registry)(ours_c)
    assert repr(ours) == repr(theirs)
    shape = theirs.inverse_shape((2, 3) if ours_c.event_dim < 2 else (3, 3))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    close(ours(ct.tensor(x)), theirs(pt.tensor(x)), "forward", atol=1e-5)
    assert bool(ours_c.check(ours(ct.tensor(x))).all())


def test_constraint_registry_registers_and_refuses_as_torchs():
    from jaxblitz.compat.distributions.constraint_registry import ConstraintRegistry

    registry = ConstraintRegistry()
    C = ct.distributions.constraints
    registry.register(C.positive, lambda c: "mine")
    assert registry(C.greater_than(3.0)) == "mine"
    bad_args(
        lambda: registry(C.boolean),
        lambda: pt.distributions.constraint_registry.ConstraintRegistry()(
            pt.distributions.constraints.boolean
        ),
    )
    with pytest.raises(TypeError, match="Expected constraint to be either"):
        registry.register(int, lambda c: c)


def test_each_distribution_imports_from_its_torch_module():
    import importlib

    for module in [
        "continuous_bernoulli",
        "fishersnedecor",
        "generalized_pareto",
        "inverse_gamma",
        "kumaraswamy",
        "lkj_cholesky",
        "logistic_normal",
        "lowrank_multivariate_normal",
        "negative_binomial",
        "pareto",
        "von_mises",
        "weibull",
        "wishart",
        "constraint_registry",
    ]:
        theirs = importlib.import_module(f"torch.distributions.{module}")
        ours = importlib.import_module(f"jaxblitz.compat.distributions.{module}")
        assert set(theirs.__all__) <= set(vars(ours)), module


MOMENTS = [
    lambda D, t: D.Weibull(t([1.5, 0.5]), t([2.0, 3.0])),
    lambda D, t: D.Pareto(t([1.0, 2.0]), t([5.0, 6.0])),
    lambda D, t: D.InverseGamma(t([5.0, 6.0]), t([2.0, 3.0])),
    lambda D, t: D.Kumaraswamy(t([2.0, 0.7]), t([3.0, 1.5])),
    lambda D, t: D.GeneralizedPareto(t([0.0, 1.0]), t([1.0, 2.0]), t([0.1, -0.3])),
    lambda D, t: D.FisherSnedecor(t([5.0, 8.0]), t([12.0, 20.0])),
    lambda D, t: D.NegativeBinomial(t([3.0, 10.0]), t([0.3, 0.6])),
    lambda D, t: D.ContinuousBernoulli(t([0.2, 0.8])),
    lambda D, t: D.VonMises(t([0.5, -1.0]), t([4.0, 10.0])),
    lambda D, t: D.LowRankMultivariateNormal(t([0.0, 1.0, -1.0]), t(FACTOR), t(POS)),
    lambda D, t: D.Wishart(t(6.0), t(SPD)),
]


@pytest.mark.parametrize("make", MOMENTS, ids=range(len(MOMENTS)))
def test_draws_have_torchs_shape_support_and_moments_in_both_modes(make):
    ct.manual_seed(0)
    n = 4000
    theirs = make(pt.distributions, pt.tensor)
    draws = []
    for on in (False, True):
        was = lazy.is_lazy()
        lazy.set_lazy(on)
        try:
            ct.manual_seed(0)
            ours = make(ct.distributions, ct.tensor)
            drawn = ours.sample((n,))
            assert str(drawn.dtype) == str(theirs.sample((2,)).dtype)
            assert bool(ours.support.check(drawn).all())
            draws.append(drawn.numpy().astype(np.float64))
        finally:
            lazy.set_lazy(was)
    np.testing.assert_array_equal(draws[0], draws[1])
    want = theirs.mean.double().numpy()
    spread = theirs.variance.double().sqrt().numpy()
    np.testing.assert_allclose(
        draws[0].mean(0), want, atol=float(6 * spread.max() / np.sqrt(n)) + 1e-3
    )


def test_lkj_cholesky_draws_are_correlation_factors_in_both_modes():
    for on in (False, True):
        was = lazy.is_lazy()
        lazy.set_lazy(on)
        try:
            ct.manual_seed(0)
            d = ct.distributions.LKJCholesky(4, ct.tensor([0.5, 2.0]))
            drawn = d.sample((50,))
            assert tuple(drawn.shape) == (50, 2, 4, 4)
            assert bool(d.support.check(drawn).all())
            corr = (drawn @ drawn.mT).numpy()
            np.testing.assert_allclose(np.diagonal(corr, 0, -2, -1), 1.0, atol=1e-5)
        finally:
            lazy.set_lazy(was)


SAMPLERS = {
    "VonMises": lambda D, w: D.VonMises(w, w + 1).sample((3,)),
    "NegativeBinomial": lambda D, w: D.NegativeBinomial(w * 5, w * 0.9).sample(),
    "FisherSnedecor": lambda D, w: D.FisherSnedecor(w + 1, w + 2).rsample(),
    "Weibull": lambda D, w: D.Weibull(w + 1, w + 0.5).rsample(),
    "LKJCholesky": lambda D, w: D.LKJCholesky(3, w + 0.5).sample(),
    "ContinuousBernoulli": lambda D, w: D.ContinuousBernoulli(w * 0.9).rsample(),
    "LowRankMVN": lambda D, w: D.LowRankMultivariateNormal(
        w, w.unsqueeze(-1), w + 1
    ).rsample(),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_a_draw_from_pending_parameters_runs_no_work_early(lazily, name):
    w = ct.tensor([0.2, 0.5, 0.9]) * 1
    lazy.sync()
    lazy.metrics(reset=True)
    SAMPLERS[name](ct.distributions, w)
    assert lazy.metrics().get("syncs", 0) == 0


BAD_ARGS = [
    lambda D, t: D.Weibull(t([1.0]), t([-1.0])),
    lambda D, t: D.Pareto(t([1.0]), t([2.0])).log_prob(t([0.5])),
    lambda D, t: D.NegativeBinomial(t([2.0]), t([1.0])),
    lambda D, t: D.NegativeBinomial(t([2.0])),
    lambda D, t: D.ContinuousBernoulli(t([1.5]), validate_args=True),
    lambda D, t: D.LKJCholesky(1),
    lambda D, t: D.VonMises(t([0.0]), t([0.0])),
    lambda D, t: D.LowRankMultivariateNormal(t(0.0), t([[1.0]]), t([1.0])),
    lambda D, t: D.LowRankMultivariateNormal(t([0.0]), t([1.0]), t([1.0])),
    lambda D, t: D.LowRankMultivariateNormal(t([0.0]), t([[1.0]]), t([1.0, 2.0])),
    lambda D, t: D.Wishart(t(0.5), t([[1.0, 0.0], [0.0, 1.0]])),
    lambda D, t: D.Kumaraswamy(t([1.0]), t([1.0])).log_prob(t([1.5])),
]


@pytest.mark.parametrize("make", BAD_ARGS, ids=range(len(BAD_ARGS)))
def test_bad_arguments_and_values_raise_torchs_errors(make):
    bad_args(
        lambda: make(ct.distributions, ct.tensor),
        lambda: make(pt.distributions, pt.tensor),
    )


def test_expand_keeps_values_as_torchs():
    for make in (
        lambda D, t: D.Weibull(t([1.0, 2.0]), t([0.5, 3.0])),
        lambda D, t: D.Pareto(t([1.0, 2.0]), t([2.5, 3.0])),
        lambda D, t: D.NegativeBinomial(t([3.0, 2.0]), logits=t([0.5, -1.0])),
        lambda D, t: D.LowRankMultivariateNormal(
            t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, 2.0])
        ),
        lambda D, t: D.Wishart(t(4.0), t([[2.0, 0.5], [0.5, 1.0]])),
        lambda D, t: D.LKJCholesky(3, t(2.0)),
        lambda D, t: D.VonMises(t([0.0, 1.0]), t([1.0, 2.0])),
        lambda D, t: D.GeneralizedPareto(t([0.0, 1.0]), t([1.0, 2.0]), t([0.2, 0.0])),
    ):
        ours = make(ct.distributions, ct.tensor)
        theirs = make(pt.distributions, pt.tensor)
        ours = ours.expand((3, *ours.batch_shape))
        theirs = theirs.expand((3, *theirs.batch_shape))
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
        assert repr(ours) == repr(theirs)
        x = theirs.sample()
        close(
            ours.log_prob(ct.tensor(x.numpy())),
            theirs.log_prob(x),
            "log_prob",
            atol=1e-5,
        )
