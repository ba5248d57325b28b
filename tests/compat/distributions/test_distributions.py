"""``torch.distributions`` in compat against PyTorch's: values, gradients, shapes,
validation errors and reprs for each distribution, over parameter sets with
broadcasting and edge values; the draws (compat's generator, not PyTorch's
stream) are checked by their moments at a fixed seed."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")

QUANTITIES = ("mean", "variance", "stddev", "mode")


def both(params: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """The parameters as compat and torch tensors (floats require grad)."""
    ours, theirs = {}, {}
    for k, v in params.items():
        if isinstance(v, np.ndarray):
            grad = v.dtype.kind == "f"
            ours[k] = ct.tensor(v, requires_grad=grad)
            theirs[k] = pt.tensor(v, requires_grad=grad)
        else:
            ours[k] = theirs[k] = v
    return ours, theirs


def outcome(fn):
    """``fn()``, or the type and message of what it raised."""
    try:
        return fn(), None
    except (NotImplementedError, ValueError, RuntimeError) as e:
        return None, (type(e), str(e))


def close(ours, theirs, what, rtol=1e-5, atol=1e-6):
    assert tuple(ours.shape) == tuple(theirs.shape), what
    assert str(ours.dtype) == str(theirs.dtype), what
    np.testing.assert_allclose(
        ours.detach().numpy().astype(np.float64),
        theirs.detach().numpy().astype(np.float64),
        rtol=rtol,
        atol=atol,
        err_msg=what,
    )


def finite_sum(t, lib):
    return lib.where(lib.isfinite(t), t, lib.zeros_like(t)).sum()


def check_against_torch(make, params, value=None, q=None, rtol=1e-5, atol=1e-6):
    """Every quantity of ``make(lib, **params)`` in compat and in torch, and the
    gradients of their sum with respect to the float parameters."""
    ours_p, theirs_p = both(params)
    ours, theirs = make(ct, **ours_p), make(pt, **theirs_p)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert repr(ours.support) == repr(theirs.support)
    our_terms, their_terms = [], []
    calls = [(n, lambda d, lib, n=n: getattr(d, n)) for n in QUANTITIES]
    calls.append(("entropy", lambda d, lib: d.entropy()))
    if value is not None:
        calls.append(("log_prob", lambda d, lib: d.log_prob(lib.tensor(value))))
        calls.append(("cdf", lambda d, lib: d.cdf(lib.tensor(value))))
    if q is not None:
        calls.append(("icdf", lambda d, lib: d.icdf(lib.tensor(q))))
    for name, call in calls:
        mine, my_err = outcome(lambda call=call: call(ours, ct))
        want, err = outcome(lambda call=call: call(theirs, pt))
        if err is not None:
            assert my_err is not None and my_err[0] is err[0], (name, my_err, err)
            continue
        assert my_err is None, (name, my_err)
        close(mine, want, name, rtol, atol)
        if mine.dtype.is_floating_point:
            our_terms.append((name, finite_sum(mine, ct)))
            their_terms.append((name, finite_sum(want, pt)))
    grads = [k for k, v in theirs_p.items() if getattr(v, "requires_grad", False)]
    if grads and their_terms:
        try:  # torch has no derivative of igamma in its first argument
            sum(t for _, t in their_terms).backward(retain_graph=True)
        except RuntimeError:
            for v in theirs_p.values():
                if isinstance(v, pt.Tensor):
                    v.grad = None
            their_terms = [(n, t) for n, t in their_terms if n != "cdf"]
            our_terms = [(n, t) for n, t in our_terms if n != "cdf"]
            sum(t for _, t in their_terms).backward()
        sum(t for _, t in our_terms).backward()
        for k in grads:
            if theirs_p[k].grad is None:
                continue
            close(ours_p[k].grad, theirs_p[k].grad, f"grad of {k}", rtol, atol)
    return ours, theirs


def check_samples(dist, sample_shapes=((2,),)):
    """Sample (and rsample) shapes and dtypes as torch's, within the support."""
    for shape in sample_shapes:
        want = tuple(shape) + tuple(dist.batch_shape) + tuple(dist.event_shape)
        drawn = dist.sample(shape)
        assert tuple(drawn.shape) == want
        assert not drawn.requires_grad
        assert bool(dist.support.check(drawn).all())
        if dist.has_rsample:
            r = dist.rsample(shape)
            assert tuple(r.shape) == want


def f32(*x):
    return np.array(x, np.float32)


def bad_args(make_ct, make_pt):
    """compat raises what torch raises (type and message)."""
    with pytest.raises(Exception) as theirs:
        make_pt()
    with pytest.raises(theirs.type) as ours:
        make_ct()
    assert str(ours.value) == str(theirs.value)


# -- group one: Normal, Categorical, Bernoulli, Uniform, OneHotCategorical,
#    Independent, MultivariateNormal -----------------------------------------------

SPD = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.8]], np.float32)
TRIL = np.linalg.cholesky(SPD).astype(np.float32)
PROBS = np.array([[0.2, 0.3, 0.5], [0.0, 0.4, 0.6]], np.float32)

CASES = {
    "normal": (
        lambda D, loc, scale: D.Normal(loc, scale),
        dict(loc=f32(0.0, 1.0, -2.0), scale=f32(1.0, 0.5, 3.0)),
        f32(0.3, 1.0, 5.0),
        f32(0.1, 0.5, 0.99),
    ),
    "normal_broadcast": (
        lambda D, loc, scale: D.Normal(loc, scale),
        dict(loc=f32(0.0, 1.0).reshape(2, 1), scale=f32(1.0, 0.5, 2.0)),
        f32(0.3, -1.0, 2.0),
        f32(0.25),
    ),
    "normal_numbers": (
        lambda D, loc, scale: D.Normal(loc, scale),
        dict(loc=0.5, scale=2.0),
        f32(0.3, -1.0),
        f32(0.7),
    ),
    "categorical_probs": (
        lambda D, probs: D.Categorical(probs=probs),
        dict(probs=PROBS * 3),
        np.array([[0, 2], [1, 0]]),
        None,
    ),
    "categorical_logits": (
        lambda D, logits: D.Categorical(logits=logits),
        dict(logits=f32(1.0, -2.0, 0.5, 3.0)),
        np.array([3, 0]),
        None,
    ),
    "bernoulli_probs": (
        lambda D, probs: D.Bernoulli(probs=probs),
        dict(probs=f32(0.0, 0.3, 0.5, 1.0)),
        f32(0.0, 1.0, 1.0, 1.0),
        None,
    ),
    "uniform": (
        lambda D, low, high: D.Uniform(low, high),
        dict(low=f32(0.0, -1.0), high=f32(1.0, 3.0)),
        f32(0.5, 3.5),
        f32(0.2, 0.9),
    ),
    "one_hot_categorical": (
        lambda D, probs: D.OneHotCategorical(probs),
        dict(probs=PROBS),
        np.eye(3, dtype=np.float32)[[2, 1]],
        None,
    ),
    "independent_normal": (
        lambda D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
        dict(loc=f32(0.0, 1.0, -2.0, 0.5).reshape(2, 2), scale=f32(1.0, 0.5)),
        f32(0.3, 1.0),
        None,
    ),
    "mvn_covariance": (
        lambda D, loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
        dict(loc=f32(0.0, 1.0, -1.0, 2.0, 0.5, 0.0).reshape(2, 3), cov=SPD),
        f32(0.3, 1.0, -0.5),
        None,
    ),
    "mvn_scale_tril": (
        lambda D, loc, tril: D.MultivariateNormal(loc, scale_tril=tril),
        dict(loc=f32(0.0, 1.0, -1.0), tril=np.stack([TRIL, TRIL * 2])),
        f32(0.3, 1.0, -0.5),
        None,
    ),
    "mvn_precision": (
        lambda D, loc, prec: D.MultivariateNormal(loc, precision_matrix=prec),
        dict(loc=f32(0.0, 1.0, -1.0), prec=SPD),
        f32(0.3, 1.0, -0.5),
        None,
    ),
}


POS = f32(0.5, 1.0, 3.0)
SIMPLEX = f32(0.2, 0.3, 0.5)


def ct_or_pt(D):
    return ct if D is ct.distributions else pt


CASES.update(
    {
        "beta": (
            lambda D, a, b: D.Beta(a, b),
            dict(a=POS, b=f32(2.0, 1.0, 0.5)),
            f32(0.3, 0.5, 0.9),
            None,
        ),
        "gamma": (
            lambda D, a, b: D.Gamma(a, b),
            dict(a=POS, b=f32(2.0, 1.0, 0.5)),
            f32(0.3, 1.5, 4.0),
            None,
        ),
        "dirichlet": (
            lambda D, a: D.Dirichlet(a),
            dict(a=np.stack([POS, POS[::-1]])),
            SIMPLEX,
            None,
        ),
        "exponential": (
            lambda D, a: D.Exponential(a),
            dict(a=POS),
            f32(0.0, 1.5, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "laplace": (
            lambda D, a, b: D.Laplace(a, b),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 1.0, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "log_normal": (
            lambda D, a, b: D.LogNormal(a, b),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 1.0, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "poisson": (
            lambda D, a: D.Poisson(a),
            dict(a=f32(0.5, 1.0, 30.0)),
            f32(0.0, 2.0, 25.0),
            None,
        ),
        "binomial": (
            lambda D, n, p: D.Binomial(n, probs=p),
            dict(n=f32(10.0, 5.0, 1.0), p=f32(0.0, 0.3, 1.0)),
            f32(0.0, 2.0, 1.0),
            None,
        ),
        "multinomial": (
            lambda D, p: D.Multinomial(6, p),
            dict(p=np.stack([SIMPLEX, SIMPLEX[::-1]])),
            f32(1.0, 2.0, 3.0),
            None,
        ),
        "geometric": (
            lambda D, p: D.Geometric(p),
            dict(p=f32(0.2, 0.5, 1.0)),
            f32(0.0, 2.0, 0.0),
            None,
        ),
        "student_t": (
            lambda D, a, b, c: D.StudentT(a, b, c),
            dict(a=f32(0.5, 1.5, 5.0), b=f32(0.0, 1.0, -1.0), c=POS),
            f32(0.3, 1.0, 4.0),
            None,
        ),
        "cauchy": (
            lambda D, a, b: D.Cauchy(a, b),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 1.0, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "gumbel": (
            lambda D, a, b: D.Gumbel(a, b),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 1.0, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "half_normal": (
            lambda D, a: D.HalfNormal(a),
            dict(a=POS),
            f32(0.3, 1.0, 4.0),
            f32(0.1, 0.5, 0.9),
        ),
        "relaxed_bernoulli": (
            lambda D, p: D.RelaxedBernoulli(ct_or_pt(D).tensor(0.5), probs=p),
            dict(p=f32(0.2, 0.5, 0.9)),
            f32(0.3, 0.5, 0.9),
            None,
        ),
        "relaxed_one_hot": (
            lambda D, p: D.RelaxedOneHotCategorical(ct_or_pt(D).tensor(2.0), logits=p),
            dict(p=f32(0.2, -1.0, 0.9)),
            SIMPLEX,
            None,
        ),
        "transformed_tanh_affine": (
            lambda D, a, b: D.TransformedDistribution(
                D.Normal(a, b),
                [D.transforms.TanhTransform(), D.transforms.AffineTransform(1.0, 2.0)],
            ),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 1.0, 2.5),
            f32(0.1, 0.5, 0.9),
        ),
        "transformed_sigmoid": (
            lambda D, a, b: D.TransformedDistribution(
                D.Normal(a, b), D.transforms.SigmoidTransform()
            ),
            dict(a=f32(0.0, 1.0, -1.0), b=POS),
            f32(0.3, 0.5, 0.9),
            f32(0.1, 0.5, 0.9),
        ),
        "mixture_same_family": (
            lambda D, w, a, b: D.MixtureSameFamily(
                D.Categorical(logits=w), D.Normal(a, b)
            ),
            dict(w=f32(0.0, 1.0, -1.0), a=f32(-2.0, 0.0, 3.0), b=POS),
            f32(0.3, 1.0, 4.0),
            None,
        ),
        "mixture_of_independent": (
            lambda D, w, a, b: D.MixtureSameFamily(
                D.Categorical(logits=w), D.Independent(D.Normal(a, b), 1)
            ),
            dict(w=f32(0.0, 1.0), a=f32(-2.0, 0.0, 3.0, 1.0).reshape(2, 2), b=POS[:2]),
            f32(0.3, 1.0),
            None,
        ),
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    make, params, value, q = CASES[name]
    ours, _ = check_against_torch(
        lambda lib, **p: make(lib.distributions, **p), params, value, q
    )
    ct.manual_seed(0)
    check_samples(ours)


def kl_matches_torch(make_p, make_q, params):
    """``kl_divergence(p, q)`` and its gradients as torch's."""
    ours_p, theirs_p = both(params)
    ours = ct.distributions.kl_divergence(make_p(ct, **ours_p), make_q(ct, **ours_p))
    theirs = pt.distributions.kl_divergence(
        make_p(pt, **theirs_p), make_q(pt, **theirs_p)
    )
    close(ours, theirs, "kl")
    assert ours.requires_grad == theirs.requires_grad
    if not theirs.requires_grad:
        return
    finite_sum(theirs, pt).backward()
    finite_sum(ours, ct).backward()
    for k, v in theirs_p.items():
        if getattr(v, "grad", None) is not None:
            close(ours_p[k].grad, v.grad, f"grad of {k}")


KL_PAIRS = {
    "normal_normal": (
        lambda lib, a, b, c: lib.distributions.Normal(a, b),
        lambda lib, a, b, c: lib.distributions.Normal(c, 2 * b),
        dict(a=f32(0.0, 1.0, 2.0), b=f32(1.0, 0.5, 2.0), c=f32(0.5, 0.0, 2.0)),
    ),
    "categorical_categorical": (
        lambda lib, a, b: lib.distributions.Categorical(probs=a),
        lambda lib, a, b: lib.distributions.Categorical(logits=b),
        dict(a=PROBS, b=f32(0.0, 1.0, -1.0)),
    ),
    "one_hot_one_hot": (
        lambda lib, a, b: lib.distributions.OneHotCategorical(probs=a),
        lambda lib, a, b: lib.distributions.OneHotCategorical(probs=b),
        dict(a=PROBS, b=PROBS[::-1].copy()),
    ),
    "bernoulli_bernoulli": (
        lambda lib, a, b: lib.distributions.Bernoulli(probs=a),
        lambda lib, a, b: lib.distributions.Bernoulli(logits=b),
        dict(a=f32(0.0, 0.3, 1.0), b=f32(0.5, -1.0, 2.0)),
    ),
    "uniform_uniform": (
        lambda lib, a, b: lib.distributions.Uniform(a, b),
        lambda lib, a, b: lib.distributions.Uniform(a - 1, b + a),
        dict(a=f32(0.0, 1.0, -1.0), b=f32(1.0, 3.0, 0.5)),
    ),
    "normal_uniform": (
        lambda lib, a, b: lib.distributions.Normal(a, b),
        lambda lib, a, b: lib.distributions.Uniform(a, a + b),
        dict(a=f32(0.0, 1.0, -1.0), b=f32(1.0, 3.0, 0.5)),
    ),
    "uniform_normal": (
        lambda lib, a, b: lib.distributions.Uniform(a, a + b),
        lambda lib, a, b: lib.distributions.Normal(a, b),
        dict(a=f32(0.0, 1.0, -1.0), b=f32(1.0, 3.0, 0.5)),
    ),
    "independent_independent": (
        lambda lib, a, b: lib.distributions.Independent(
            lib.distributions.Normal(a, b), 1
        ),
        lambda lib, a, b: lib.distributions.Independent(
            lib.distributions.Normal(b, a + 2), 1
        ),
        dict(a=f32(0.0, 1.0, -1.0), b=f32(1.0, 3.0, 0.5)),
    ),
    "mvn_mvn": (
        lambda lib, a, L: lib.distributions.MultivariateNormal(a, scale_tril=L),
        lambda lib, a, L: lib.distributions.MultivariateNormal(
            a * 2, covariance_matrix=L @ L.mT + lib.eye(3)
        ),
        dict(a=f32(0.0, 1.0, -1.0), L=np.stack([TRIL, TRIL * 2])),
    ),
}


def two(cls_p, cls_q, args_p, args_q):
    """A KL pair from two constructors over the shared parameters."""
    return (
        lambda lib, a, b: getattr(lib.distributions, cls_p)(*args_p(a, b)),
        lambda lib, a, b: getattr(lib.distributions, cls_q)(*args_q(a, b)),
        dict(a=POS, b=f32(2.0, 1.0, 0.5)),
    )


KL_PAIRS.update(
    {
        "beta_beta": two("Beta", "Beta", lambda a, b: (a, b), lambda a, b: (b, a + 1)),
        "gamma_gamma": two("Gamma", "Gamma", lambda a, b: (a, b), lambda a, b: (b, a)),
        "exponential_exponential": two(
            "Exponential", "Exponential", lambda a, b: (a,), lambda a, b: (b,)
        ),
        "exponential_gamma": two(
            "Exponential", "Gamma", lambda a, b: (a,), lambda a, b: (b, a)
        ),
        "gamma_normal": two(
            "Gamma", "Normal", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "beta_normal": two("Beta", "Normal", lambda a, b: (a, b), lambda a, b: (b, a)),
        "uniform_beta": two(
            "Uniform",
            "Beta",
            lambda a, b: (a * 0.1, a * 0.2 + 0.5),
            lambda a, b: (b, a),
        ),
        "laplace_laplace": two(
            "Laplace", "Laplace", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "laplace_normal": two(
            "Laplace", "Normal", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "normal_gumbel": two(
            "Normal", "Gumbel", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "gumbel_gumbel": two(
            "Gumbel", "Gumbel", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "cauchy_cauchy": two(
            "Cauchy", "Cauchy", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "poisson_poisson": two(
            "Poisson", "Poisson", lambda a, b: (a,), lambda a, b: (b,)
        ),
        "half_normal_half_normal": two(
            "HalfNormal", "HalfNormal", lambda a, b: (a,), lambda a, b: (b,)
        ),
        "geometric_geometric": two(
            "Geometric", "Geometric", lambda a, b: (a / 4,), lambda a, b: (b / 3,)
        ),
        "binomial_binomial": two(
            "Binomial", "Binomial", lambda a, b: (5, a / 4), lambda a, b: (5, b / 3)
        ),
        "dirichlet_dirichlet": two(
            "Dirichlet", "Dirichlet", lambda a, b: (a,), lambda a, b: (b,)
        ),
        "log_normal_log_normal": two(
            "LogNormal", "LogNormal", lambda a, b: (a, b), lambda a, b: (b, a)
        ),
        "chi2_chi2_by_exponential_family": two(
            "Chi2", "Chi2", lambda a, b: (a,), lambda a, b: (b,)
        ),
    }
)


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence_and_its_gradients_match_torch(name):
    kl_matches_torch(*KL_PAIRS[name])


def test_kl_divergence_of_an_unregistered_pair_is_refused_as_torch_refuses():
    bad_args(
        lambda: ct.distributions.kl_divergence(
            ct.distributions.Normal(0.0, 1.0), ct.distributions.Bernoulli(0.5)
        ),
        lambda: pt.distributions.kl_divergence(
            pt.distributions.Normal(0.0, 1.0), pt.distributions.Bernoulli(0.5)
        ),
    )


def test_register_kl_adds_a_pair_and_kl_divergence_dispatches_to_it():
    D = ct.distributions

    class Shifted(D.Normal):
        pass

    @D.register_kl(Shifted, D.Bernoulli)
    def _kl(p, q):
        return p.loc * 0 + 7.0

    got = D.kl_divergence(Shifted(ct.tensor([1.0]), 1.0), D.Bernoulli(0.5))
    assert got.tolist() == [7.0]


BAD_ARGS = [
    lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, -1.0])),
    lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 1.0])).log_prob(t([[1.0, 2.0, 3.0]])),
    lambda D, t: D.Normal(0.0, 1.0).log_prob([1.0]),
    lambda D, t: D.Categorical(t([-0.5, 1.0])),
    lambda D, t: D.Categorical(t([0.5, 0.5]), t([0.0, 0.0])),
    lambda D, t: D.Categorical(t(0.5)),
    lambda D, t: D.Categorical(t([0.5, 0.5])).log_prob(t([2])),
    lambda D, t: D.Bernoulli(t([1.5])),
    lambda D, t: D.Bernoulli(t([0.5])).log_prob(t([0.5])),
    lambda D, t: D.Uniform(t([1.0]), t([0.0])),
    lambda D, t: D.Uniform(0.0, 1.0).log_prob(t([1.5])),
    lambda D, t: D.OneHotCategorical(t([0.5, 0.5])).log_prob(t([1.0, 1.0])),
    lambda D, t: D.MultivariateNormal(t(0.0), t([[1.0]])),
    lambda D, t: D.MultivariateNormal(t([0.0, 0.0])),
    lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
    lambda D, t: D.MultivariateNormal(t([0.0]), scale_tril=t([[-1.0]])),
    lambda D, t: D.Independent(D.Normal(0.0, 1.0), 1),
    lambda D, t: D.Gamma(t([1.0]), t([-1.0])),
    lambda D, t: D.Beta(t([1.0]), t([2.0])).log_prob(t([1.5])),
    lambda D, t: D.Poisson(t([-1.0])),
    lambda D, t: D.Binomial(t([2.5]), t([0.5])),
    lambda D, t: D.Dirichlet(t(1.0)),
    lambda D, t: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)),
    lambda D, t: D.MixtureSameFamily(D.Categorical(t([0.5, 0.5])), "normal"),
]


@pytest.mark.parametrize("make", BAD_ARGS, ids=range(len(BAD_ARGS)))
def test_bad_arguments_and_values_raise_torchs_errors(make):
    bad_args(
        lambda: make(ct.distributions, ct.tensor),
        lambda: make(pt.distributions, pt.tensor),
    )


def test_validation_can_be_switched_off_per_distribution_and_by_default():
    D = ct.distributions
    D.Normal(ct.tensor([0.0]), ct.tensor([-1.0]), validate_args=False)  # no error
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Bernoulli(ct.tensor([2.0])).probs.tolist() == [2.0]
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Bernoulli(ct.tensor([2.0]))


def test_expand_broadcasts_parameters_and_keeps_values():
    for lib in (ct, pt):
        lib.manual_seed(0)
    for make in (
        lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        lambda D, t: D.Categorical(logits=t([0.0, 1.0, 2.0])),
        lambda D, t: D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
        lambda D, t: D.Independent(D.Bernoulli(t([0.2, 0.7])), 1),
    ):
        ours = make(ct.distributions, ct.tensor).expand(
            (3, *make(ct.distributions, ct.tensor).batch_shape)
        )
        theirs = make(pt.distributions, pt.tensor).expand(
            (3, *make(pt.distributions, pt.tensor).batch_shape)
        )
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
        assert repr(ours) == repr(theirs)
        close(ours.entropy(), theirs.entropy(), "entropy")
        assert tuple(ours.sample((2,)).shape) == tuple(theirs.sample((2,)).shape)


def test_enumerate_support_and_perplexity_match_torch():
    for make in (
        lambda D, t: D.Categorical(t([[0.2, 0.8], [0.5, 0.5]])),
        lambda D, t: D.Bernoulli(t([0.2, 0.8])),
        lambda D, t: D.OneHotCategorical(t([[0.2, 0.8], [0.5, 0.5]])),
    ):
        ours, theirs = (
            make(ct.distributions, ct.tensor),
            make(pt.distributions, pt.tensor),
        )
        for expand in (True, False):
            close(
                ours.enumerate_support(expand),
                theirs.enumerate_support(expand),
                "support",
            )
        close(ours.perplexity(), theirs.perplexity(), "perplexity")


def test_samples_repeat_under_manual_seed():
    D = ct.distributions
    draws = []
    for _ in range(2):
        ct.manual_seed(3)
        draws.append(
            [
                D.Normal(ct.zeros(4), 1.0).sample().tolist(),
                D.Categorical(logits=ct.zeros(5)).sample((4,)).tolist(),
                D.Bernoulli(ct.full((4,), 0.5)).sample().tolist(),
            ]
        )
    assert draws[0] == draws[1]


def test_sample_moments_are_the_distributions_at_a_fixed_seed():
    D = ct.distributions
    ct.manual_seed(0)
    n = 20_000
    normal = D.Normal(ct.tensor([1.0, -2.0]), ct.tensor([0.5, 3.0])).sample((n,))
    np.testing.assert_allclose(normal.mean(0).numpy(), [1.0, -2.0], atol=0.07)
    np.testing.assert_allclose(normal.std(0).numpy(), [0.5, 3.0], rtol=0.03)
    counts = np.bincount(
        D.Categorical(ct.tensor([0.1, 0.2, 0.7])).sample((n,)).numpy(), minlength=3
    )
    np.testing.assert_allclose(counts / n, [0.1, 0.2, 0.7], atol=0.015)
    L = ct.tensor(TRIL)
    mvn = D.MultivariateNormal(ct.zeros(3), scale_tril=L).sample((n,)).numpy()
    np.testing.assert_allclose(np.cov(mvn.T), SPD, atol=0.1)
    u = D.Uniform(-1.0, 3.0).sample((n,)).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05


def test_reinforce_step_matches_torch():
    """The REINFORCE loss of PyTorch's example: -log_prob(action) * return."""
    grads = []
    for lib in (ct, pt):
        lib.manual_seed(0)
        w = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
        w.requires_grad_()
        state = lib.tensor([[0.5, -1.0, 2.0, 0.1]])
        m = lib.distributions.Categorical(logits=state @ w)
        action = lib.tensor([1])
        (-m.log_prob(action) * 2.5 - 0.01 * m.entropy()).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_gamma_family_and_count_draws_have_their_moments_at_a_fixed_seed():
    """Draws through jax.random (gamma, poisson, binomial): not torch's stream."""
    D = ct.distributions
    ct.manual_seed(0)
    n = 10_000
    for dist, mean, var in (
        (D.Gamma(ct.tensor([2.0, 0.5]), 3.0), [2 / 3, 1 / 6], [2 / 9, 1 / 18]),
        (D.Beta(ct.tensor([2.0, 1.0]), 3.0), [0.4, 0.25], [0.04, 0.0375]),
        (D.Poisson(ct.tensor([4.0, 0.5])), [4.0, 0.5], [4.0, 0.5]),
        (D.Binomial(10, ct.tensor([0.3, 0.9])), [3.0, 9.0], [2.1, 0.9]),
        (D.Dirichlet(ct.tensor([1.0, 3.0])), [0.25, 0.75], [0.0375, 0.0375]),
    ):
        drawn = dist.sample((n,)).numpy().astype(np.float64)
        np.testing.assert_allclose(drawn.mean(0), mean, rtol=0.04, atol=0.006)
        np.testing.assert_allclose(drawn.var(0), var, rtol=0.12)


def test_rsample_of_gamma_carries_the_implicit_reparameterization_gradient():
    """d E[x] / d alpha = 1 / rate for Gamma(alpha, rate), averaged over draws."""
    ct.manual_seed(1)
    alpha = ct.tensor([2.0, 0.5], requires_grad=True)
    ct.distributions.Gamma(alpha, 4.0).rsample((10_000,)).mean(0).sum().backward()
    np.testing.assert_allclose(alpha.grad.numpy(), [0.25, 0.25], atol=0.01)


@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.ExpTransform(),
        lambda T: T.AffineTransform(1.0, -2.0),
        lambda T: T.SigmoidTransform(),
        lambda T: T.TanhTransform(),
        lambda T: T.ComposeTransform([T.AffineTransform(0.5, 3.0), T.ExpTransform()]),
    ],
    ids=["exp", "affine", "sigmoid", "tanh", "compose"],
)
def test_transforms_map_invert_and_give_log_det_jacobians_as_torchs(make):
    ours, theirs = make(ct.distributions.transforms), make(pt.distributions.transforms)
    assert repr(ours) == repr(theirs) and ours.sign == theirs.sign
    x = f32(-0.5, 0.1, 0.7)
    our_x, their_x = ct.tensor(x, requires_grad=True), pt.tensor(x, requires_grad=True)
    our_y, their_y = ours(our_x), theirs(their_x)
    close(our_y, their_y, "forward")
    close(ours.inv(our_y), theirs.inv(their_y), "inverse")
    our_j = ours.log_abs_det_jacobian(our_x, our_y)
    their_j = theirs.log_abs_det_jacobian(their_x, their_y)
    close(our_j, their_j, "log_abs_det_jacobian")
    (our_y.sum() + our_j.sum()).backward()
    (their_y.sum() + their_j.sum()).backward()
    close(our_x.grad, their_x.grad, "grad")
