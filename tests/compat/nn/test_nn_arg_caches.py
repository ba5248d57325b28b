"""conv2d's and max_pool2d's cached argument checks: a plan made for one call
must never answer another that differs in a shape, a dtype, an argument's value
or only in its type (``True`` or ``1.0`` for ``1``, a tensor for an int), nor
hide an error. Each sequence runs in order in one process, so the first call of
a group makes the plan the next ones would wrongly reuse if the key missed
something; every call must give what compat gives with no plan cached (its
errors for a wrongly typed argument are its own words, not torch's) and, for
the calls marked so, what torch gives. The hot paths that read a tensor's shape
and dtype once (``linear``, ``cross_entropy``, ``nll_loss``) keep torch's errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check, outcome
from tests.compat.programs.test_notes import same

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(7)


def _t(torch, *shape, dtype="float32"):  # the same values for torch and compat
    values = np.random.default_rng(len(shape)).standard_normal(shape)
    return torch.tensor(values.astype(dtype))


X = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def _conv(x=X, w=W, b=B, **kwargs):
    def fn(torch):
        bias = None if b is None else torch.tensor(b)
        return torch.nn.functional.conv2d(
            torch.tensor(x), torch.tensor(w), bias, **kwargs
        )

    return fn


# (case, compared with torch too): compat words a wrongly typed argument its own
# way (torch: "received an invalid combination of arguments"), and a zero
# dilation or mixed dtypes as an older ATen did.
CONV_SEQUENCE = [
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1), True),
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1), True),
    (_conv(stride=(True, 1), padding=(0, 0), dilation=(1, 1), groups=1), False),
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1.0, 1), groups=1), False),
    (_conv(stride=1.0), False),
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=True), False),
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1.0), False),
    (_conv(stride=[1, 1], padding=[0, 0], dilation=[1, 1]), True),
    (_conv(), True),  # a plan for the defaults, then other values, dtypes, shapes
    (_conv(stride=(2, 2)), True),
    (_conv(stride=(0, 1)), True),
    (_conv(padding=(1, 0)), True),
    (_conv(padding=(-1, 0)), True),
    (_conv(padding="same"), True),
    (_conv(padding="valid"), True),
    (_conv(padding="full"), True),
    (_conv(padding="same", stride=2), True),
    (_conv(dilation=(2, 1)), True),
    (_conv(dilation=(0, 1)), False),  # compat: ATen's older words
    (_conv(groups=3), True),
    (_conv(groups=0), True),
    (_conv(x=np.concatenate([X, X], 1), groups=2), True),
    (_conv(x=np.concatenate([X, X], 1)), True),
    (_conv(b=None), True),
    (_conv(b=B[:3]), True),
    (_conv(b=B.astype(np.float64)), False),
    (_conv(x=X.astype(np.float64)), False),
    (_conv(w=W.astype(np.float64)), False),
    (
        _conv(x=X.astype(np.float64), w=W.astype(np.float64), b=B.astype(np.float64)),
        True,
    ),
    (_conv(x=X[:, :2]), True),
    (_conv(x=X[:, :, :2, :2]), True),
    (_conv(x=X[:0]), True),
    (_conv(x=X[0]), True),  # unbatched: a batch of one
    (_conv(x=X[0, 0]), True),
    (_conv(x=X, w=W[:, :, :2]), True),
    (_conv(x=X[:1]), True),
    (_conv(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1), True),
]


def _run_as_uncached(sequence, monkeypatch, module):
    """Each case's compat outcome with the plans on (in order) equals its outcome
    with none ever keyed (the checks run in full), and torch's where marked."""
    cached = [outcome(case, ct) for case, _ in sequence]
    with monkeypatch.context() as m:
        m.setattr(module, "_static", lambda value: False)
        m.setattr(module, "_PLANS", {})
        for (case, vs_torch), ours in zip(sequence, cached, strict=True):
            assert same(ours, outcome(case, ct)), ours
            if vs_torch:
                assert same(ours, outcome(case, pt)), ours


def test_conv2d_plans_answer_only_their_own_arguments(monkeypatch):
    from jaxblitz.compat.nn import conv

    monkeypatch.setattr(conv, "_PLANS", {})
    _run_as_uncached(CONV_SEQUENCE, monkeypatch, conv)


def test_conv2d_with_a_tensor_argument_is_read_each_call_as_torch():
    # A 0-d tensor stride is an int to both; it never keys a plan (its value can
    # change in place), so a changed value is read again.
    def case(torch, value):
        stride = torch.tensor(value)
        return torch.nn.functional.conv2d(
            torch.tensor(X), torch.tensor(W), torch.tensor(B), stride=stride
        )

    for value in (1, 2, 1, 0):
        check(lambda torch, v=value: case(torch, v))


def test_conv2d_checks_once_per_shape_dtype_and_arguments(monkeypatch):
    from jaxblitz.compat.nn import conv

    made = []
    plan = conv._conv2d_plan
    monkeypatch.setattr(conv, "_PLANS", {})
    monkeypatch.setattr(conv, "_conv2d_plan", lambda *a: made.append(a) or plan(*a))
    F = ct.nn.functional
    x, w, b = ct.tensor(X), ct.tensor(W), ct.tensor(B)
    for _ in range(3):
        F.conv2d(x, w, b, (1, 1), (0, 0), (1, 1), 1)
    assert len(made) == 1
    F.conv2d(x, w, b, [1, 1], [0, 0], [1, 1], 1)  # never keyed: checked again
    F.conv2d(x.double(), w.double(), b.double(), (1, 1), (0, 0), (1, 1), 1)
    assert len(made) == 3


H = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)


def _pool(x=H, *args, indices=False, **kwargs):
    def fn(torch):
        out = torch.nn.functional.max_pool2d(
            torch.tensor(x, requires_grad=True), *args, **kwargs
        )
        if indices:
            return out
        out.sum().backward()
        return out

    return fn


POOL_SEQUENCE = [
    (_pool(H, 2, 2), True),  # makes a plan
    (_pool(H, 2, 2), True),  # reuses it
    (_pool(H, 2, 2, return_indices=True, indices=True), True),
    (_pool(H, 2.0, 2), False),
    (_pool(H, (True, 2), 2), False),
    (_pool(H, 2, None), True),
    (_pool(H, 2, ()), True),
    (_pool(H, 2, [2, 2]), True),
    (_pool(H, (2, 2, 2), 2), True),
    (_pool(H, 2, 0), True),
    (_pool(H, 2, 2, 1), True),
    (_pool(H, 2, 2, 2), True),
    (_pool(H, 2, 2, 0, 0), True),
    (_pool(H, 2, 2, 0, 1, True), True),
    (_pool(H, 2, 2, 0, 1, 1), False),
    (_pool(H[:, :, :5, :5], 2, 2), True),
    (_pool(H[:, :, :5, :5], 2, 2, 0, 1, True), True),
    (_pool(H[:, :, :1], 2, 2), True),
    (_pool(H[:, :0], 2, 2), True),
    (_pool(H[0], 2, 2), True),
    (_pool(H[0, 0], 2, 2), True),
    (_pool(H, 3, 1), True),
    (_pool(H, 2, 2), True),  # the first again
]


def test_max_pool2d_plans_answer_only_their_own_arguments(monkeypatch):
    from jaxblitz.compat.nn import max_pooling

    monkeypatch.setattr(max_pooling, "_PLANS", {})
    _run_as_uncached(POOL_SEQUENCE, monkeypatch, max_pooling)


def _linear(x_shape, w_shape, b_shape=None, x_dtype="float32", b_dtype="float32"):
    def fn(torch):
        x = _t(torch, *x_shape, dtype=x_dtype)
        w = _t(torch, *w_shape)
        b = None if b_shape is None else _t(torch, *b_shape, dtype=b_dtype)
        return torch.nn.functional.linear(x, w, b)

    return fn


@pytest.mark.parametrize(
    "case",
    [
        _linear((2, 3), (4, 3), (4,)),
        _linear((2, 3), (4, 3)),
        _linear((), (4, 3), (4,)),
        _linear((2, 3), (4, 5), (4,)),
        _linear((2, 0), (4, 5)),
        _linear((2, 3), (4, 3), (4,), x_dtype="float64"),
        _linear((2, 3), (4, 3), (4,), b_dtype="float64"),
        _linear((5, 2, 3), (4, 3), (4,)),
        # a weight of another rank: torch's input.matmul(weight.t()) or a refusal
        _linear((2, 3), (3,)),
        _linear((2, 3), (3,), (2,)),
        _linear((3,), (3,)),
        _linear((5, 2, 3), (3,)),
        _linear((2, 3), (4,)),
        _linear((2, 3), (2, 4, 3)),
        _linear((2, 3), ()),
        _linear((2, 3), (), ()),
        _linear((), ()),
    ],
)
def test_linear_checks_match_torch(case):
    check(case)


def _loss(name, x_shape, x_dtype="float32", target=(2, 0), t_dtype="int64", **kw):
    def fn(torch):
        x = _t(torch, *x_shape, dtype=x_dtype)
        t = torch.tensor(np.array(target, dtype=t_dtype))
        return getattr(torch.nn.functional, name)(x, t, **kw)

    return fn


@pytest.mark.parametrize(
    "case",
    [
        _loss("cross_entropy", (2, 3)),
        _loss("cross_entropy", (), target=2),
        _loss("cross_entropy", (3,), target=2),
        _loss("cross_entropy", (2, 3), x_dtype="int64"),
        _loss("cross_entropy", (2, 3), t_dtype="int32"),
        _loss("cross_entropy", (2, 3), target=(2, 3)),
        _loss("cross_entropy", (2, 3), label_smoothing=1.5),
        _loss("cross_entropy", (2, 3), target=(0.5, 0.5), t_dtype="float32"),
        _loss("cross_entropy", (3, 3), target=(2, 0)),
        _loss("nll_loss", (2, 3)),
        _loss("nll_loss", (2, 3), x_dtype="int64"),
        _loss("nll_loss", (), target=2),
        _loss("nll_loss", (3,), target=(2,)),
        _loss("nll_loss", (2, 3, 4), target=((0, 1, 2, 0), (1, 1, 1, 1))),
        _loss("nll_loss", (2, 3), target=(5, 0)),
        _loss("nll_loss", (2, 3), target=(1, -1)),
        _loss("nll_loss", (2, 3), target=(1, 3)),
        _loss("cross_entropy", (2, 3), target=(-100, 1)),
        _loss("cross_entropy", (2, 3), target=(1, 0), t_dtype="uint8"),
        _loss("cross_entropy", (2, 3), target=(1, 7), ignore_index=7),
        _loss("cross_entropy", (70, 3), target=np.arange(70) % 3),
        _loss("cross_entropy", (70, 3), target=np.arange(70) % 4),
    ],
)
def test_cross_entropy_and_nll_checks_match_torch(case):
    check(case)
