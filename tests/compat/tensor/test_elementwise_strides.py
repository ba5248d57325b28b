"""The strides of an elementwise op's result against real PyTorch's: they follow
the inputs' (TensorIterator's rule), ``x.t() + 1`` stays transposed, a
channels-last input gives a channels-last result, and ``clone()``, ``to()``,
``empty_like`` preserve a layout with gaps in its order. In both modes."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import jaxblitz.compat as compat
from jaxblitz.compat import lazy
from jaxblitz.compat.autograd import graph
from jaxblitz.compat.ops import _funnel

torch = pytest.importorskip("torch")


@pytest.fixture(params=[False, True], ids=["eager", "lazy"])
def mode(request):
    was = lazy.is_lazy()
    lazy.set_lazy(request.param)
    yield
    lazy.set_lazy(was)


def _spec(rng: random.Random, shape: tuple[int, ...] | None = None) -> tuple:
    """A layout of ``shape`` (random if None): a permuted, maybe sliced with a
    step, maybe expanded view of a row-major tensor, float32 or float64."""
    if shape is None:
        shape = tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(0, 4)))
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    base = [0] * len(shape)
    for i, p in enumerate(perm):
        base[p] = shape[i]
    expand = None
    if shape and rng.random() < 0.2:
        for p in perm:
            if rng.random() < 0.5:
                base[p] = 1
        expand = shape
    step = rng.randrange(len(shape)) if shape and rng.random() < 0.3 else None
    if step is not None:
        base[step] *= 2
    dtype = "float64" if rng.random() < 0.15 else "float32"
    return tuple(base), tuple(perm), step, expand, dtype


def _make(t, spec):
    base, perm, step, expand, dtype = spec
    x = t.arange(math.prod(base), dtype=getattr(t, dtype)).reshape(base) - 3
    if step is not None:
        x = x[(slice(None),) * step + (slice(None, None, 2),)]
    x = x.permute(*perm) if perm else x
    return x if expand is None else x.expand(*expand)


def _broadcastable(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = [1 if rng.random() < 0.3 else s for s in shape]
    return tuple(out[rng.randint(0, len(out)) :])


SPECS = [  # the common ones
    ((4, 3), (1, 0), None, None, "float32"),  # t()
    ((2, 4, 5, 3), (0, 3, 1, 2), None, None, "float32"),  # channels-last
    ((2, 4, 5, 1), (0, 3, 1, 2), None, None, "float32"),  # channels-last, C == 1
    ((2, 1, 1, 3), (0, 3, 1, 2), None, None, "float32"),  # channels-last, 1x1
    ((4, 6), (1, 0), 1, None, "float32"),  # t() of a slice with gaps
]
PAIRS = [
    (SPECS[1], ((2, 3, 4, 5), (0, 1, 2, 3), None, None, "float32")),
    (SPECS[1], ((3, 1, 1), (0, 1, 2), None, None, "float32")),  # + bias
    (SPECS[2], ((2, 1, 4, 5), (0, 1, 2, 3), None, None, "float32")),
    (SPECS[4], ((4, 3), (0, 1), None, None, "float64")),
    (((3, 1), (1, 0), None, (4, 3), "float32"), SPECS[4]),  # cast expanded
]
_RNG = random.Random(0)
RANDOM_SPECS = [_spec(_RNG) for _ in range(30)]
RANDOM_PAIRS = []
for _s in RANDOM_SPECS:
    _other = _spec(_RNG, _broadcastable(_RNG, tuple(_make(torch, _s).shape)))
    RANDOM_PAIRS += [(_s, _other), (_other, _s)]

F = "nn.functional."
UNARY = {
    "x + 1": lambda t, x: x + 1,
    "x * 2.5": lambda t, x: x * 2.5,
    "1 - x": lambda t, x: 1 - x,
    "x // 2": lambda t, x: x // 2,
    "x % 2": lambda t, x: x % 2,
    "x * x": lambda t, x: x * x,
    "x.add(x, alpha=2)": lambda t, x: x.add(x, alpha=2),
    "-x": lambda t, x: -x,
    "exp": lambda t, x: x.exp(),
    "sigmoid": lambda t, x: x.sigmoid(),
    "sign": lambda t, x: x.sign(),
    "relu": lambda t, x: t.relu(x),
    "x ** 2": lambda t, x: x**2,
    "2 ** x": lambda t, x: 2**x,
    "clamp": lambda t, x: x.clamp(0, 1),
    "x > 0": lambda t, x: x > 0,
    "~(x > 0)": lambda t, x: ~(x > 0),
    "isnan": lambda t, x: x.isnan(),
    "isclose": lambda t, x: t.isclose(x, x),
    "where": lambda t, x: t.where(x > 0, x, 0.0),
    "lerp": lambda t, x: t.lerp(x, x, 0.5),
    "double": lambda t, x: x.double(),
    "long": lambda t, x: x.long(),
    "long().exp()": lambda t, x: x.long().exp(),
    "clone": lambda t, x: x.clone(),
    "empty_like": lambda t, x: t.empty_like(x),
    **{
        name: (lambda f: lambda t, x: eval(f"t.{F}{f}")(x))(name)
        for name in (
            "silu",
            "gelu",
            "leaky_relu",
            "elu",
            "selu",
            "softplus",
            "mish",
            "hardsigmoid",
            "hardswish",
            "hardshrink",
            "softshrink",
            "hardtanh",
            "relu6",
            "logsigmoid",
        )
    },
    "threshold": lambda t, x: t.nn.functional.threshold(x, 0.1, 2.0),
    "dropout": lambda t, x: t.nn.functional.dropout(x, 0.5),
    "alpha_dropout": lambda t, x: t.nn.functional.alpha_dropout(x, 0.5, True),
    "prelu": lambda t, x: t.nn.functional.prelu(x, t.tensor([0.25], dtype=x.dtype)),
}
BINARY = {
    "a + b": lambda t, a, b: a + b,
    "a * b": lambda t, a, b: a * b,
    "a / b": lambda t, a, b: a / b,
    "a.sub(b, alpha=3)": lambda t, a, b: a.sub(b, alpha=3),
    "a > b": lambda t, a, b: a > b,
    "a == b": lambda t, a, b: a == b,
    "maximum": lambda t, a, b: t.maximum(a, b),
    "|a| ** b": lambda t, a, b: a.abs() ** b,
    "where(a > 0, a, b)": lambda t, a, b: t.where(a > 0, a, b),
    "where(b > 0, a, b)": lambda t, a, b: t.where(b > 0, a, b),
    "addcmul": lambda t, a, b: t.addcmul(a, a, b),
    "addcdiv": lambda t, a, b: t.addcdiv(a, b, a.abs() + 1),
    "lerp": lambda t, a, b: t.lerp(a, b.to(a.dtype), 0.5),
    "lerp weight": lambda t, a, b: t.lerp(a, a, b.to(a.dtype)),
    "clamp(b, b + 1)": lambda t, a, b: a.clamp(b, b + 1),
    "(a > 0) & (b > 0)": lambda t, a, b: (a > 0) & (b > 0),
}


def _strides(t, fn, specs) -> list:
    out = []
    for spec in specs:
        try:
            out.append(fn(t, *[_make(t, s) for s in spec]).stride())
        except RuntimeError as e:  # (both refuse the same, checked elsewhere)
            out.append(type(e).__name__)
    return out


@pytest.mark.parametrize("op", list(UNARY))
def test_a_unary_elementwise_result_has_torchs_strides(op, mode):
    specs = [(s,) for s in SPECS]
    assert _strides(compat, UNARY[op], specs) == _strides(torch, UNARY[op], specs)


@pytest.mark.parametrize("op", list(BINARY))
def test_a_binary_elementwise_result_has_torchs_strides(op, mode):
    assert _strides(compat, BINARY[op], PAIRS) == _strides(torch, BINARY[op], PAIRS)


@pytest.mark.slow
@pytest.mark.parametrize("op", list(UNARY))
def test_a_unary_result_of_random_layouts_has_torchs_strides(op, mode):
    specs = [(s,) for s in RANDOM_SPECS]
    assert _strides(compat, UNARY[op], specs) == _strides(torch, UNARY[op], specs)


@pytest.mark.slow
@pytest.mark.parametrize("op", list(BINARY))
def test_a_binary_result_of_random_layouts_has_torchs_strides(op, mode):
    want = _strides(torch, BINARY[op], RANDOM_PAIRS)
    assert _strides(compat, BINARY[op], RANDOM_PAIRS) == want


def test_a_transposed_sum_is_transposed_and_refuses_a_flat_view_as_torchs(mode):
    for t in (torch, compat):
        out = t.arange(12.0).reshape(3, 4).t() + 1
        assert out.stride() == (1, 4)
        assert not out.is_contiguous()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            out.view(-1)


def test_a_channels_last_sum_is_channels_last_with_the_same_values(mode):
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    got, want = (
        t.tensor(a).to(memory_format=t.channels_last).relu() + 1
        for t in (compat, torch)
    )
    assert got.stride() == want.stride() == (60, 1, 15, 3)
    assert got.is_contiguous(memory_format=compat.channels_last)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(got.reshape(-1).numpy(), want.reshape(-1).numpy())


def test_gradients_through_a_transposed_result_are_torchs(mode):
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    grads = []
    for t in (compat, torch):
        x = t.tensor(a, requires_grad=True)
        y = x.t().exp()  # saves its result, now laid out transposed
        (y * t.arange(12.0).reshape(4, 3)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_an_in_place_change_of_a_saved_transposed_result_is_refused_as_torchs(mode):
    for t in (compat, torch):
        x = t.ones(3, 4, requires_grad=True)
        y = x.t().exp()
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_in_place_ops_and_out_keep_the_destinations_strides(mode):
    for t in (compat, torch):
        dest = t.zeros(4, 3).t()
        dest.add_(t.ones(3, 4))
        assert dest.stride() == (1, 3)
        out = t.zeros(3, 4)
        t.add(t.ones(4, 3).t(), 1, out=out)
        assert out.stride() == (4, 1)
        assert out.sum().item() == 24.0


def test_row_major_operands_never_reach_the_layout_rule(monkeypatch):
    def refuse(*args):
        raise AssertionError("the layout rule ran for row-major operands")

    monkeypatch.setattr(graph, "follow_operands", refuse)
    monkeypatch.setattr(_funnel, "follow_operands", refuse)
    x = compat.ones(2, 3, requires_grad=True)
    assert ((x + 1).exp() * x).relu().stride() == (3, 1)
    assert (x > 0).stride() == (3, 1)
