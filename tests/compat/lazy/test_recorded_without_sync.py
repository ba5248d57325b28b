"""Ops whose result's shape does not depend on the values record without a sync
in lazy mode: adaptive max pooling (with its indices), max_unpool, isclose,
quantile and nanquantile with a tensor q, cov's weights, masked_scatter, a
channels-last copy, a copy of a permuted tensor, ``index_put`` with a boolean
mask and one value, and ``torch.embedding_bag``'s four results. Their values,
once synced, are eager mode's bit for bit and torch's; a wrong value (an
unpooling index outside the output, a q outside [0, 1], a negative weight, a
source too short for the mask) raises torch's error at the next sync point,
naming the user's line, and eagerly at the op."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((2, 3, 6, 8)).astype(np.float32)


def _cases(t, bad: bool):
    """(name, op) pairs on library ``t`` (torch or compat), each taking ``b``,
    ``X`` as a tensor, and computing its inputs from it (pending, lazily);
    ``bad``: values torch refuses."""
    f = t.nn.functional
    weight = t.arange(40.0).reshape(10, 4) % 7

    def unpool(n, b):
        x = (b * 1)[(0,) * (3 - n)]  # (6, 8), (3, 6, 8), (2, 3, 6, 8)
        pool = getattr(f, f"max_pool{n}d")
        out, index = pool(x, 2, return_indices=True)
        bump = t.zeros(index.numel(), dtype=t.int64)
        bump[-1] = 999 if bad else 0  # one wrong index (torch's threads race on two)
        return getattr(f, f"max_unpool{n}d")(out, index + bump.reshape(index.shape), 2)

    def q(b):  # [0.25, 0.5, 1.0], the last 1.5 when bad
        return b[0, 0, 0, :3] * 0 + t.tensor([0.25, 0.5, 1.5 if bad else 1.0])

    def bag(b, mode, weights=False, last=False, padding_idx=None):
        # small integers, and means of 1 or 2 of them (padding_idx=0): exact
        indices = (b[0, 0, 0] * 4).abs().long() % 10  # [0, 0, 2, 0, 2, 1, 5, 3]
        offsets = t.tensor([0, 3, 3, 8 if last else 6])
        psw = (b[0, 0, 0] * 4).round() if weights else None
        args = (weight, indices, offsets, False, mode, False, psw, last, padding_idx)
        return t.embedding_bag(*args)

    def nans(b):  # NaN where b < 0
        return t.where(b > 0, b * 1, t.tensor(float("nan")))

    neg = 3 if bad else 0  # weights below 0 when bad
    few = 2.0 if bad else 200.0  # too few source elements when bad

    return [
        ("adaptive_max_pool1d", lambda b: f.adaptive_max_pool1d(b[0] * 1, 3, True)),
        ("adaptive_max_pool2d", lambda b: f.adaptive_max_pool2d(b * 1, (4, 3), True)),
        (
            "adaptive_max_pool3d",
            lambda b: f.adaptive_max_pool3d(b * 1, (2, 4, 5), True),
        ),
        ("adaptive_max_pool2d values", lambda b: f.adaptive_max_pool2d(b * 1, 5)),
        ("max_unpool1d", lambda b: unpool(1, b)),
        ("max_unpool2d", lambda b: unpool(2, b)),
        ("max_unpool3d", lambda b: unpool(3, b)),
        ("isclose", lambda b: t.isclose(b * 1, (b * 1.000001).round(decimals=2))),
        (
            "isclose equal_nan",
            lambda b: nans(b).isclose(nans(b * 1.01), 0.001, 0.01, True),
        ),
        ("quantile", lambda b: t.quantile(b[0, 0] * 1, q(b), dim=1)),
        ("quantile 0-d q", lambda b: t.quantile(b[0, 0] * 1, q(b)[1])),
        (
            "nanquantile",
            lambda b: t.nanquantile(nans(b[0]), q(b), interpolation="lower"),
        ),
        (
            "cov fweights",
            lambda b: t.cov(b[0, 0] * 1, fweights=(b[0, 0, 0] * 4).abs().long() - neg),
        ),
        (
            "cov aweights",
            lambda b: t.cov(b[0, 0] * 1, aweights=(b[0, 0, 0] * 1).abs() - neg),
        ),
        (
            "masked_scatter",
            lambda b: t.zeros(6, 8).masked_scatter(b[0, 0] > 0, t.arange(few)),
        ),
        (
            "masked_scatter_ broadcast",
            lambda b: t.zeros(3, 6, 8).masked_scatter_(b[0, 0] > 0, t.arange(few)),
        ),
        (
            "channels_last",
            lambda b: (b * 1).contiguous(memory_format=t.channels_last) + 1,
        ),
        (
            "index_put bool mask",
            lambda b: (b * 1).index_put((b[:, 0, 0, 0] > 0,), t.tensor(-2.0)),
        ),
        (
            "index_put_ bool mask over two dims",
            lambda b: (b[0, 0] * 1).index_put_((b[0, 0] > 0,), b[0, 0, 0, 0] * 3),
        ),
        ("clone of a transpose", lambda b: (b * 1).transpose(1, 3).clone() + 1),
        ("reshape of a transpose", lambda b: (b * 1).mT.reshape(6, -1) + 1),
        ("embedding_bag sum", lambda b: bag(b, 0)),
        (
            "embedding_bag per_sample_weights",
            lambda b: bag(b, 0, weights=True),
        ),
        ("embedding_bag mean padding_idx", lambda b: bag(b, 1, padding_idx=0)),
        ("embedding_bag max", lambda b: bag(b, 2)),
        (
            "embedding_bag include_last_offset",
            lambda b: bag(b, 0, last=True, padding_idx=1),
        ),
    ]


NAMES = [name for name, _ in _cases(torch, False)]
REFUSED = [
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "quantile",
    "nanquantile",
    "cov fweights",
    "cov aweights",
    "masked_scatter",
    "masked_scatter_ broadcast",
]


def _outputs(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("name", NAMES)
def test_an_op_records_without_a_sync_and_gives_eager_modes_bits(lazily, name):
    base = torch.tensor(X)
    lazy.sync()
    lazy.metrics(reset=True)
    out = _outputs(dict(_cases(torch, False))[name](base))
    assert lazy.metrics().get("syncs", 0) == 0, name
    lazy.set_lazy(False)  # (the fixture restores the mode)
    eager = _outputs(dict(_cases(torch, False))[name](torch.tensor(X)))
    assert len(out) == len(eager)
    for ours, theirs in zip(out, eager, strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


# cov sums in another order than ATen: the last bit may differ (in both modes)
ROUNDED = {"cov fweights", "cov aweights"}


@pytest.mark.parametrize("name", NAMES)
def test_the_values_are_torchs(eagerly, name):
    out = _outputs(dict(_cases(torch, False))[name](torch.tensor(X)))
    expected = _outputs(dict(_cases(pt, False))[name](pt.tensor(X)))
    assert len(out) == len(expected)
    for ours, theirs in zip(out, expected, strict=True):
        assert str(ours.dtype) == str(theirs.dtype)
        if name in ROUNDED:
            np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-6)
        else:
            np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


def _torch_error(name: str) -> Exception:
    with pytest.raises(Exception) as expected:
        dict(_cases(pt, True))[name](pt.tensor(X))
    return expected.value


@pytest.mark.parametrize("name", REFUSED)
def test_a_wrong_value_raises_torchs_error_at_the_sync_naming_the_line(lazily, name):
    expected = _torch_error(name)
    base = torch.tensor(X)
    lazy.sync()
    lazy.metrics(reset=True)
    dict(_cases(torch, True))[name](base)  # recorded: nothing known yet
    assert lazy.metrics().get("syncs", 0) == 0, name
    with pytest.raises(type(expected)) as raised:
        lazy.sync()
    message = str(raised.value)
    assert message.startswith(str(expected)), (message, expected)
    assert re.search(r"recorded at test_recorded_without_sync\.py:\d+", message)
    lazy.sync()  # raised once: the next sync has nothing left to say


@pytest.mark.parametrize("name", REFUSED)
def test_eagerly_a_wrong_value_raises_torchs_error_at_the_op(eagerly, name):
    expected = _torch_error(name)
    with pytest.raises(type(expected)) as raised:
        dict(_cases(torch, True))[name](torch.tensor(X))
    assert str(raised.value) == str(expected)


@pytest.mark.parametrize(
    ("q", "kwargs"),
    [
        (1.5, dict(interpolation="bad")),
        (1.2345678, {}),
        (0.5, dict(interpolation="bad")),
        ("tensor", dict(interpolation="bad")),
        ("2-d", {}),
        ("double", {}),
        ("tensor", dict(dim=4)),
    ],
)
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_checks_its_arguments_in_torchs_order_and_words(
    eagerly, op, q, kwargs
):
    def call(t, dtype):
        x = t.ones(3, dtype=dtype)
        value = {
            "tensor": t.tensor([1.5]),
            "2-d": t.tensor([[0.5]]),
            "double": t.tensor([0.5], dtype=t.float64),
        }.get(q, q)
        return getattr(t, op)(x, value, **kwargs)

    for dtype in ("float32", "int64"):
        with pytest.raises(Exception) as expected:
            call(pt, getattr(pt, dtype))
        with pytest.raises(type(expected.value)) as raised:
            call(torch, getattr(torch, dtype))
        assert str(raised.value) == str(expected.value)


def test_a_float64_quantile_of_a_python_q_is_torchs_bit_for_bit(eagerly):
    x = np.random.default_rng(1).standard_normal(1001)
    for q in (0.1, 0.3, 1 / 3, 0.7777777):
        ours = torch.quantile(torch.tensor(x), q)
        assert ours.item() == pt.quantile(pt.tensor(x), q).item()


@pytest.mark.parametrize(
    "dtype",
    ["float32", "float64", "float16", "bfloat16", "int64", "int8", "uint8", "bool"],
)
def test_isclose_decides_as_torch_at_the_edges_of_its_tolerance(eagerly, dtype):
    rng = np.random.default_rng(2)
    if dtype == "bool":
        a, b = rng.integers(0, 2, (2, 500)).astype(bool)
    elif dtype in ("int64", "int8", "uint8"):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, 500, endpoint=True, dtype=dtype)
        b = np.clip(a.astype(np.int64) + rng.integers(-3, 4, 500), info.min, info.max)
        b = b.astype(dtype)
    else:
        a = rng.standard_normal(500) * 10.0 ** rng.integers(-6, 6, 500)
        b = a * (1 + rng.standard_normal(500) * 10.0 ** rng.integers(-8, -1, 500))
        a[:4], b[:4] = [np.nan, np.inf, 0.0, np.nan], [np.nan, np.inf, -0.0, 1.0]
    for rtol, atol, equal_nan in [
        (1e-5, 1e-8, False),
        (1e-3, 0.0, True),
        (0.0, 2.0, False),
        (0.1, 1e-2, True),
        (0.0, 0.0, True),
    ]:
        theirs = pt.isclose(
            *(pt.tensor(v).to(getattr(pt, dtype)) for v in (a, b)),
            rtol,
            atol,
            equal_nan,
        )
        ours = torch.isclose(
            *(torch.tensor(v).to(getattr(torch, dtype)) for v in (a, b)),
            rtol,
            atol,
            equal_nan,
        )
        np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.isclose(t.ones(2), t.ones(2, dtype=t.float64)),
        lambda t: t.isclose(t.ones(2, dtype=t.int64), t.ones(2)),
        lambda t: t.isclose(t.ones(2), t.ones(2), rtol=-1.0),
        lambda t: t.isclose(t.ones(2), t.ones(2), atol=-0.5),
        lambda t: t.isclose(t.ones(2), t.ones(3)),
    ],
    ids=["float double", "long float", "rtol", "atol", "shapes"],
)
def test_isclose_refuses_its_arguments_at_the_op_as_torch(lazily, call):
    with pytest.raises(Exception) as expected:
        call(pt)
    lazy.sync()
    lazy.metrics(reset=True)
    with pytest.raises(type(expected.value)) as raised:
        call(torch)
    assert str(raised.value) == str(expected.value)
