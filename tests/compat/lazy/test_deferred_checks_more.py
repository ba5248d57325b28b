"""More ops whose result's shape does not depend on the values, and which read
no values at the op: histogram and histc without a range (the edges come from
the values inside the program), searchsorted's sorter, embedding_bag's offsets,
and linear algebra's "not positive-definite" and "singular" errors (the ``_ex``
functions' ``check_errors`` among them). Lazily the
check is recorded with the work and raises torch's error at the next sync
point, naming the user's line; eagerly it raises at the op."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy

pt = pytest.importorskip("torch")


def _cases(t, bad: bool):
    """(name, op) pairs on library ``t`` (torch or compat), each taking values
    computed from ``base`` (pending, lazily); ``bad``: values torch refuses."""
    f = t.nn.functional
    inf, nan = (math.inf, math.nan) if bad else (1.0, 1.0)
    weight = t.arange(30.0).reshape(10, 3)
    bag = t.nn.EmbeddingBag(10, 3, mode="sum")

    def values(b, last):  # [1., 3., last]
        return b.float() * t.tensor([1.0, 1.0, last])

    def diagonal(b, sign):  # diag([1, 3, 5]), the middle one * sign
        return t.diag(b.float() * t.tensor([1.0, sign, 1.0]))

    def batch(b, sign):  # two matrices, the second with the sign
        return t.stack([diagonal(b, 1.0), diagonal(b, sign)])

    negative = -1.0 if bad else 1.0
    zero = 0.0 if bad else 1.0
    return [
        ("histogram inf", lambda b: t.histogram(values(b, inf), 4)),
        ("histogram nan", lambda b: t.histogram(values(b, nan), 4)),
        ("histogramdd", lambda b: t.histogramdd(values(b, inf).reshape(3, 1), [3])),
        ("histc inf", lambda b: t.histc(values(b, inf), 4)),
        ("histc nan", lambda b: t.histc(values(b, nan), 4)),
        (
            "searchsorted sorter",
            lambda b: t.searchsorted(
                t.tensor([3.0, 1.0, 2.0]),
                t.tensor([2.5]),
                sorter=(b - 1) // 2 + (5 if bad else 0),
            ),
        ),
        (
            "embedding_bag offsets[0]",
            lambda b: f.embedding_bag(t.arange(6), weight, b - (0 if bad else 1)),
        ),
        (
            "embedding_bag offsets[-1]",
            lambda b: f.embedding_bag(
                t.arange(6), weight, b - 1 + t.tensor([0, 0, 3 if bad else 0])
            ),
        ),
        (
            "EmbeddingBag",
            lambda b: bag(t.arange(6), b - (0 if bad else 1)),
        ),
        ("cholesky", lambda b: t.cholesky(diagonal(b, negative))),
        ("linalg.cholesky", lambda b: t.linalg.cholesky(diagonal(b, negative))),
        ("linalg.cholesky batch", lambda b: t.linalg.cholesky(batch(b, negative))),
        ("inverse", lambda b: t.inverse(diagonal(b, zero))),
        ("linalg.inv", lambda b: t.linalg.inv(diagonal(b, zero))),
        ("linalg.inv batch", lambda b: t.linalg.inv(batch(b, zero))),
        ("linalg.solve", lambda b: t.linalg.solve(diagonal(b, zero), b.float())),
        ("matrix_power -1", lambda b: t.linalg.matrix_power(diagonal(b, zero), -1)),
        (
            "linalg.inv_ex check_errors",
            lambda b: t.linalg.inv_ex(batch(b, zero), check_errors=True),
        ),
        (
            "linalg.cholesky_ex check_errors",
            lambda b: t.linalg.cholesky_ex(batch(b, negative), check_errors=True),
        ),
        (
            "linalg.solve_ex check_errors",
            lambda b: t.linalg.solve_ex(
                diagonal(b, zero), b.float(), check_errors=True
            ),
        ),
        ("linalg.lu_factor", lambda b: t.linalg.lu_factor(batch(b, zero))),
        (
            "linalg.lu_factor_ex check_errors",
            lambda b: t.linalg.lu_factor_ex(diagonal(b, zero), check_errors=True),
        ),
        ("linalg.tensorinv", lambda b: t.linalg.tensorinv(diagonal(b, zero), ind=1)),
    ]


NAMES = [name for name, _ in _cases(torch, False)]


def _base(t):
    return t.tensor([1, 3, 5])


def _torch_error(name: str) -> Exception:
    with pytest.raises(Exception) as expected:
        dict(_cases(pt, True))[name](_base(pt))
    return expected.value


def _same_type(ours: Exception, theirs: Exception) -> None:
    """The same type: a builtin one, or torch's own by module and name."""
    mine, torchs = type(ours), type(theirs)
    assert (mine.__module__, mine.__name__) == (torchs.__module__, torchs.__name__)


@pytest.mark.parametrize("name", NAMES)
def test_an_op_on_pending_values_runs_no_work_early(lazily, name):
    op = dict(_cases(torch, False))[name]
    base = _base(torch)
    lazy.sync()
    lazy.metrics(reset=True)
    for _ in range(3):
        op(base)
    assert lazy.metrics().get("syncs", 0) == 0, name
    lazy.sync()  # and the values were fine: nothing raised


@pytest.mark.parametrize("name", NAMES)
def test_a_wrong_value_raises_torchs_error_at_the_sync_naming_the_line(lazily, name):
    expected = _torch_error(name)
    op = dict(_cases(torch, True))[name]
    base = _base(torch)
    lazy.sync()
    lazy.metrics(reset=True)
    op(base)  # recorded: nothing known yet
    assert lazy.metrics().get("syncs", 0) == 0, name
    with pytest.raises(Exception) as raised:
        lazy.sync()
    _same_type(raised.value, expected)
    message = str(raised.value)
    assert str(expected) in message, (message, expected)
    assert re.search(r"recorded at test_deferred_checks_more\.py:\d+", message)
    lazy.sync()  # raised once: the next sync has nothing left to say


@pytest.mark.parametrize("name", NAMES)
def test_eagerly_a_wrong_value_raises_torchs_error_at_the_op(eagerly, name):
    expected = _torch_error(name)
    with pytest.raises(Exception) as raised:
        dict(_cases(torch, True))[name](_base(torch))
    _same_type(raised.value, expected)
    assert str(raised.value) == str(expected)


def test_the_last_bag_refusal_waits_for_the_sync_too(lazily):
    """compat refuses a last offset short of the indices' end where torch's
    kernels disagree on the last bag (a mean): lazily, at the sync point."""
    base = torch.tensor([1, 3, 4])
    lazy.sync()
    lazy.metrics(reset=True)
    offsets = base - 1  # [0, 2, 3]: the indices run to 6
    torch.nn.functional.embedding_bag(
        torch.arange(6), torch.ones(10, 3), offsets, include_last_offset=True
    )
    assert lazy.metrics().get("syncs", 0) == 0
    with pytest.raises(NotImplementedError, match="include_last_offset=True"):
        lazy.sync()


def _histograms(t, a: np.ndarray, bins: int):
    x = t.tensor(a)
    h = t.histogram(x, bins)
    dd = t.histogramdd(x.reshape(-1, 2), [bins, 3])
    return [h.hist, h.bin_edges, t.histc(x, bins), dd.hist, *dd.bin_edges]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_histograms_of_the_values_range_equal_torchs_bit_for_bit(mode, dtype):
    rng = np.random.default_rng(3)
    was = lazy.is_lazy()
    lazy.set_lazy(mode == "lazy")
    try:
        for bins in (1, 7, 30):
            a = (rng.standard_normal(40) * 100).astype(dtype)
            a[:4] = np.linspace(a.min(), a.max(), 4)  # values on the edges too
            for ours, theirs in zip(
                _histograms(torch, a, bins), _histograms(pt, a, bins), strict=True
            ):
                assert ours.dtype.itemsize == theirs.dtype.itemsize
                np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())
    finally:
        lazy.set_lazy(was)


@pytest.mark.parametrize(
    "values",
    [[3.0, 3.0, 3.0], [], [2.0], [-1.5, 4.0]],
    ids=["all equal", "empty", "one", "two"],
)
def test_histc_and_histogram_edge_cases_equal_torchs(eagerly, values):
    for t_lazy in (False, True):
        lazy.set_lazy(t_lazy)
        x, y = torch.tensor(values) * 1, pt.tensor(values)
        for ours, theirs in (
            (torch.histc(x, 4), pt.histc(y, 4)),
            (torch.histc(x, 4, 2, 2), pt.histc(y, 4, 2, 2)),
            (torch.histogram(x, 4).bin_edges, pt.histogram(y, 4).bin_edges),
            (torch.histogram(x, 4).hist, pt.histogram(y, 4).hist),
        ):
            np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


@pytest.mark.parametrize(
    "values",
    [
        [math.nan],
        [-math.nan],
        [1.0, math.nan],
        [math.nan, -math.nan],
        [-math.inf],
        [math.inf, math.inf],
        [2.0, math.inf],
    ],
)
@pytest.mark.parametrize("op", ["histc", "histogram"])
def test_a_range_that_is_not_finite_names_nan_as_torch_does(eagerly, op, values):
    with pytest.raises(RuntimeError) as expected:
        getattr(pt, op)(pt.tensor(values), 3)
    with pytest.raises(RuntimeError) as raised:
        getattr(torch, op)(torch.tensor(values), 3)
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize(
    "kwargs",
    [dict(bins=0), dict(bins=-2, min=2, max=1), dict(min=2, max=1)],
)
def test_histc_argument_errors_are_torchs(eagerly, kwargs):
    with pytest.raises(RuntimeError) as expected:
        pt.histc(pt.tensor([1.0, 2.0]), **kwargs)
    with pytest.raises(RuntimeError) as raised:
        torch.histc(torch.tensor([1.0, 2.0]), **kwargs)
    assert str(raised.value) == str(expected.value)
