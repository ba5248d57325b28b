"""compat's special and two-argument math ops against PyTorch: the edge values
(0, -0, the infinities, NaN, outside the domain) and their gradients, dtype rules,
errors and in-place variants that PyTorch's OpInfo samples do not reach."""

import numpy as np
import pytest

import jaxblitz.compat as jt

torch = pytest.importorskip("torch")

EDGES = np.array(
    [0.0, -0.0, 0.3, -0.7, 1.0, -1.0, 2.5, -3.0, np.nan, np.inf, -np.inf, 1e-3, 0.999],
    np.float32,
)
OTHER = EDGES[::-1].copy()


def _run(lib, fn, *arrays):
    """fn's value, dtype, grad_fn name and each float input's gradient."""
    ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *ts)
    out = out[0] if isinstance(out, tuple) else out
    name = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    grads = []
    if out.requires_grad:
        out.backward(lib.ones_like(out))
        grads = [None if t.grad is None else t.grad.numpy() for t in ts]
    return out.detach().numpy(), str(out.dtype), name, grads


def _same(fn, *arrays):
    want, got = _run(torch, fn, *arrays), _run(jt, fn, *arrays)
    assert got[1:3] == want[1:3]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert len(got[3]) == len(want[3])
    for g, w in zip(got[3], want[3], strict=True):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "name", ["lgamma", "digamma", "logit", "i0", "nan_to_num", "erfinv", "acosh"]
)
def test_unary_values_and_gradients_at_the_edges_match_torch(name):
    _same(lambda lib, x: getattr(lib, name)(x), EDGES)


@pytest.mark.parametrize(
    "name", ["atan2", "hypot", "logaddexp", "xlogy", "copysign", "fmax", "nextafter"]
)
def test_binary_values_and_gradients_at_the_edges_match_torch(name):
    _same(lambda lib, x, y: getattr(lib, name)(x, y), EDGES, OTHER)


def test_atan2_of_an_integer_and_a_zero_has_torchs_zero_gradient():
    _same(lambda lib, x, y: lib.atan2(x, y), np.array([0, 1, -2]), EDGES[:3])


def test_polygamma_and_its_gradient_at_poles_match_torch():
    for n in (1, 2):
        _same(lambda lib, x, n=n: lib.polygamma(n, x), EDGES)
    _same(lambda lib, x: x.polygamma(1), EDGES[:4])
    negative = np.array([-7.3, -2.5, -0.5, 0.3, 9.7, -30.2])  # torch's zeta series
    for n in (2, 5):
        _same(lambda lib, x, n=n: lib.polygamma(n, x), negative)


def test_logit_with_eps_clamps_and_zeroes_the_gradient_outside():
    _same(lambda lib, x: lib.logit(x, 0.01), EDGES)


def test_nan_to_num_with_replacements_and_an_overflowing_nan_value():
    _same(lambda lib, x: lib.nan_to_num(x, 1.5, 2.0, -3.0), EDGES)
    _same(lambda lib, x: lib.nan_to_num(x, nan=1e40), EDGES)


def test_xlogy_takes_a_number_on_either_side_with_torchs_grad_fn():
    _same(lambda lib, y: lib.xlogy(2, y), EDGES)
    _same(lambda lib, x: lib.xlogy(x, 2.5), EDGES)
    _same(lambda lib, x: lib.copysign(x, -1.0), EDGES)


def test_igamma_gradient_of_x_and_torchs_error_for_the_gradient_of_a():
    a = np.array([0.5, 1.0, 2.0, 0.0, 0.0], np.float32)
    x = np.array([0.5, 2.0, 1.0, 1.0, 0.0], np.float32)
    _same(lambda lib, x: lib.igamma(lib.tensor(a), x), x)
    _same(lambda lib, x: lib.igammac(lib.tensor(a), x), x)
    out = jt.igamma(jt.tensor(a, requires_grad=True), jt.tensor(x))
    with pytest.raises(NotImplementedError, match="'igamma: input' is not"):
        out.sum().backward()


def test_dtypes_of_integer_and_bool_inputs_match_torch():
    ints, bools = np.array([0, 1, -2, 3]), np.array([True, False, True, True])
    flipped = ints[::-1].copy()
    for name in ("sgn", "signbit", "digamma", "deg2rad", "nan_to_num", "isreal"):
        for a in (ints, bools):
            _same(lambda lib, x, name=name: getattr(lib, name)(x), a)
    for name in ("atan2", "copysign", "fmax", "gcd", "lcm", "heaviside", "ldexp"):
        _same(lambda lib, x, y, name=name: getattr(lib, name)(x, y), ints, flipped)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.hypot(lib.tensor([1, 2]), lib.tensor([3, 4])),
        lambda lib: lib.logaddexp(lib.tensor([True]), lib.tensor([False])),
        lambda lib: lib.gcd(lib.tensor([1.0]), lib.tensor([2.0])),
        lambda lib: lib.atan2(lib.tensor([1.0]), 2),
        lambda lib: lib.heaviside(lib.tensor([1.0]), lib.tensor([1.0]).double()),
        lambda lib: lib.frexp(lib.tensor([1, 2])),
        lambda lib: lib.polygamma(-1, lib.tensor([1.0])),
        lambda lib: lib.mvlgamma(lib.tensor([2.0]), 0),
        lambda lib: lib.mvlgamma(lib.tensor([True]), 1),
        lambda lib: lib.tensor([1.0]).float_power_(2),
        lambda lib: lib.tensor([1, 2]).atan2_(lib.tensor([1, 2])),
        lambda lib: (
            lib.heaviside(lib.tensor([0.0], requires_grad=True), lib.tensor([1.0]))
            .sum()
            .backward()
        ),
    ],
)
def test_errors_match_torch(call):
    assert _error(lambda: call(jt)) == _error(lambda: call(torch))


def test_frexp_returns_torchs_named_pair_and_gradient():
    x = np.array([0.0, 3.0, -0.75, 1e-3], np.float32)
    _same(lambda lib, x: lib.frexp(x), x)
    m, e = jt.frexp(jt.tensor(x))
    assert (
        e.dtype is jt.int32 and e.tolist() == torch.frexp(torch.tensor(x))[1].tolist()
    )
    assert jt.frexp(jt.tensor(x)).exponent is not None
    assert repr(jt.frexp(jt.tensor([2.0]))).startswith("torch.return_types.frexp(")


def test_in_place_variants_write_into_the_tensor():
    for name, args in [("atan2_", (OTHER,)), ("polygamma_", (1,)), ("sgn_", ())]:
        results = []
        for lib in (torch, jt):
            x = lib.tensor(EDGES)
            call = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            out = getattr(x, name)(*call)
            assert out is x
            results.append(x.numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-5)
    x = jt.tensor([2.0, 3.0], dtype=jt.float64)
    assert x.float_power_(2).tolist() == [4.0, 9.0]


def test_mvlgamma_and_float_power_match_torch():
    _same(lambda lib, x: lib.mvlgamma(x, 3), np.array([1.5, 2.0, 4.3], np.float32))
    _same(lambda lib, x: lib.float_power(x, 2), EDGES[:6])
    _same(lambda lib, y: lib.float_power(2, y), EDGES[:6])
