"""compat's random-number state (torch.get_rng_state / set_rng_state / seed,
Generator.get_state / set_state / seed) and its poisson and binomial draws:
round trips, distribution moments, shapes, dtypes and PyTorch's errors (the
values themselves are compat's, not PyTorch's)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _raises_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    first = str(theirs.value).splitlines()[0].split(":")[0].split(" of size")[0]
    assert str(ours.value).startswith(first), (str(ours.value), str(theirs.value))


def test_set_rng_state_of_get_rng_state_repeats_the_draws():
    c.manual_seed(5)
    c.rand(3)
    state = c.get_rng_state()
    assert state.dtype == c.uint8 and state.dim() == 1
    first = (c.rand(4).tolist(), c.randn(2, 2).tolist(), c.randint(9, (5,)).tolist())
    c.set_rng_state(state)
    again = (c.rand(4).tolist(), c.randn(2, 2).tolist(), c.randint(9, (5,)).tolist())
    assert again == first
    assert c.initial_seed() == 5


def test_a_generators_state_round_trips_and_leaves_the_default_alone():
    g = c.Generator().manual_seed(11)
    state = g.get_state()
    x = c.randn(6, generator=g).tolist()
    before = c.get_rng_state()
    assert g.set_state(state) is g
    assert c.randn(6, generator=g).tolist() == x
    assert c.get_rng_state().tolist() == before.tolist()


def test_seed_is_non_deterministic_and_returned_as_torch():
    a, b = c.seed(), c.seed()
    assert a != b and 0 <= a < 1 << 64
    assert c.initial_seed() == b
    g = c.Generator()
    assert g.seed() == g.initial_seed()


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.set_rng_state([1, 2]),
        lambda T: T.set_rng_state(T.zeros(16)),
        lambda T: T.Generator().set_state((1, 2)),
    ],
)
def test_bad_rng_states_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.set_rng_state(T.zeros(3, dtype=T.uint8)),
        lambda T: T.Generator().set_state(T.zeros(3, dtype=T.uint8)),
    ],
)
def test_a_state_of_another_size_is_refused_as_torch_refuses_it(call):
    with pytest.raises(RuntimeError, match="Expected a ") as theirs:
        call(torch)
    with pytest.raises(RuntimeError, match="Expected a jaxblitz.compat") as ours:
        call(c)
    assert str(ours.value).split("(")[0].endswith("state size to be 3 ")
    assert str(theirs.value).endswith("state size to be 3")


def test_a_pytorch_rng_state_is_refused_by_name():
    with pytest.raises(RuntimeError, match=r"PyTorch's torch.get_rng_state\(\)"):
        c.set_rng_state(c.tensor(torch.get_rng_state().numpy()))


@pytest.mark.parametrize("rate", [0.5, 4.0, 250.0])
def test_poisson_draws_have_the_rates_mean_and_variance(rate):
    c.manual_seed(0)
    x = c.poisson(c.full((20000,), rate))
    values = np.asarray(x.tolist())
    assert np.all(values == np.floor(values)) and values.min() >= 0
    assert abs(values.mean() - rate) < 5 * np.sqrt(rate / 20000)
    assert abs(values.var() / rate - 1) < 0.1


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_poisson_keeps_torchs_shape_dtype_and_zero_gradient(dtype):
    def run(T):
        rates = T.tensor([[1.0, 0.0], [3.0, 2.0]], dtype=getattr(T, dtype))
        rates.requires_grad_(dtype in ("float32", "float64"))
        out = T.poisson(rates, generator=T.Generator().manual_seed(1))
        if rates.requires_grad:
            (out * 3).sum().backward()
            return out, rates.grad
        return out, None

    (theirs, their_grad), (ours, our_grad) = run(torch), run(c)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours[0, 1].item() == 0.0
    if their_grad is not None:
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__
        assert our_grad.tolist() == their_grad.tolist()


def test_poisson_repeats_with_a_seeded_generator():
    rates = c.tensor([1.0, 5.0, 9.0])
    a = c.poisson(rates, c.Generator().manual_seed(3))
    assert c.poisson(rates, c.Generator().manual_seed(3)).tolist() == a.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.poisson(T.tensor([1, 2])),
        lambda T: T.poisson(T.tensor([-1.0, 2.0])),
        lambda T: T.poisson(T.tensor([float("nan")])),
        lambda T: T.poisson([1.0]),
    ],
)
def test_bad_poisson_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize(("n", "p"), [(10.0, 0.5), (40.0, 0.1), (3.0, 0.9)])
def test_binomial_draws_have_the_distributions_moments(n, p):
    c.manual_seed(0)
    x = c.binomial(c.full((20000,), n), c.full((20000,), p))
    values = np.asarray(x.tolist())
    assert values.min() >= 0 and values.max() <= n
    assert abs(values.mean() - n * p) < 5 * np.sqrt(n * p * (1 - p) / 20000)
    assert abs(values.var() / (n * p * (1 - p)) - 1) < 0.1


def test_binomial_broadcasts_keeps_dtype_and_gives_torchs_edge_values():
    nan = float("nan")

    def run(T):
        count = T.tensor([[10.0], [0.0], [-3.0], [nan]], dtype=T.float64)
        prob = T.tensor([0.0, 1.0, nan, -0.5, 1.5], dtype=T.float64)
        return T.binomial(count, prob)

    def warned(T):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = run(T)
        return out, [str(w.message).split(" (Triggered")[0] for w in seen]

    (theirs, their_warnings), (ours, our_warnings) = warned(torch), warned(c)
    assert our_warnings == their_warnings
    assert tuple(ours.shape) == tuple(theirs.shape) == (4, 5)
    assert ours.dtype == c.float64
    np.testing.assert_array_equal(np.asarray(ours.tolist()), theirs.numpy())


def test_binomial_backward_raises_as_torch():
    count = c.tensor([10.0, 5.0], requires_grad=True)
    out = c.binomial(count, c.tensor([0.5, 0.1]))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::binomial"):
        out.sum().backward()


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.binomial(T.tensor([10, 5]), T.tensor([0.5, 0.1])),
        lambda T: T.binomial(T.tensor([10.0]), T.tensor([0.5], dtype=T.float64)),
        lambda T: T.binomial(T.tensor([1.0, 2]), T.tensor([0.5, 0.1, 0.2])),
        lambda T: T.binomial(T.tensor([10.0]), 0.5),
    ],
)
def test_bad_binomial_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda: c.binomial(c.tensor([10.5]), c.tensor([0.5])),
        lambda: c.poisson(c.tensor([float("inf")])),
    ],
)
def test_parameters_outside_the_domain_are_refused_by_name(call):
    with pytest.raises(NotImplementedError, match="jaxblitz.compat refuses"):
        call()
