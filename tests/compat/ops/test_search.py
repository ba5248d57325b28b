"""compat's searching, membership and histogram functions (searchsorted,
bucketize, isin, histogram, histogramdd) against PyTorch: values, dtypes,
shapes, named tuples, errors and what backward does."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _both(fn):
    return fn(torch), fn(c)


def _same(a, b):
    """The same structure, dtypes, shapes and values (NaN equal to NaN)."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_array_equal(np.asarray(b.tolist()), np.asarray(a.tolist()))


def _same_error(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    gist = re.split(r"[:<]", str(theirs.value).splitlines()[0])[0]
    assert str(ours.value).startswith(gist)


# -- searchsorted, bucketize ----------------------------------------------------


def _seq(T):
    return T.tensor([1.0, 3, 5, 7, 9])


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0, 6, 9, 0, 10])),
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0, 6, 9]), right=True),
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0, 6, 9]), side="right"),
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0]), side="left", right=False),
        lambda T: T.searchsorted(_seq(T), T.tensor([[3.0, 4], [8, 1]]), out_int32=True),
        lambda T: T.searchsorted(_seq(T), T.tensor(4.0)),
        lambda T: T.searchsorted(_seq(T), 4),
        lambda T: T.searchsorted(T.tensor([1, 3, 5]), 4.5),
        lambda T: T.searchsorted(T.tensor([1, 3, 5]), True),
        lambda T: T.searchsorted(T.tensor([1, 2, 3], dtype=T.int8), 1000),
        lambda T: T.searchsorted(T.tensor([1, 3, 5]), T.tensor([2.5, 3.0])),
        lambda T: T.searchsorted(T.tensor([2**40, 2**40 + 1]), T.tensor([2.0**40])),
        lambda T: T.searchsorted(
            T.tensor([0.1, 0.2], dtype=T.float64), T.tensor([0.1])
        ),
        lambda T: T.searchsorted(
            T.tensor([1, 2, 3], dtype=T.int8), T.tensor([2], dtype=T.uint8)
        ),
        lambda T: T.searchsorted(
            T.tensor([1.0, 2, 3], dtype=T.float16), T.tensor([2.0], dtype=T.float16)
        ),
        lambda T: T.searchsorted(
            T.tensor([[1.0, 3, 5], [2, 4, 6]]), T.tensor([[3.0, 3], [3, 7]])
        ),
        lambda T: T.searchsorted(
            T.tensor([[1.0, 3, 5], [2, 4, 6]]), T.tensor([[3.0, 3], [3, 7]]), right=True
        ),
        lambda T: T.searchsorted(
            T.arange(24.0).reshape(2, 3, 4), T.arange(12.0).reshape(2, 3, 2) * 2
        ),
        lambda T: T.searchsorted(T.tensor([]), T.tensor([3.0])),
        lambda T: T.searchsorted(T.zeros(2, 0), T.zeros(2, 3)),
        lambda T: T.searchsorted(_seq(T), T.tensor([])),
        lambda T: T.searchsorted(T.tensor([1.0, 2, NAN]), T.tensor([NAN, 1.5, 3, INF])),
        lambda T: T.searchsorted(
            T.tensor([1.0, NAN, 2, 3, 4]), T.tensor([0.5, 1.5, 2.5, 4.5]), right=True
        ),
        lambda T: T.searchsorted(
            T.tensor([5.0, 1, 3, 2, 9, 0]), T.tensor([0.5, 1.5, 2.5, 3.5, 4.5])
        ),
        lambda T: T.searchsorted(
            T.tensor([5.0, 1, 3]), T.tensor([2.0, 4, 6]), sorter=T.tensor([1, 2, 0])
        ),
        lambda T: T.searchsorted(
            T.tensor([5.0, 1, 3]),
            T.tensor([1.0, 3, 5]),
            sorter=T.tensor([1, 2, 0]),
            right=True,
        ),
        lambda T: T.searchsorted(
            T.tensor([[5.0, 1, 3], [0, 2, 1]]),
            T.tensor([[2.0, 4], [1, 1.5]]),
            sorter=T.tensor([[1, 2, 0], [0, 2, 1]]),
        ),
    ],
)
def test_searchsorted_matches_torch(call):
    _same(*_both(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.bucketize(
            T.tensor([[0.0, 1, 2], [3, 5, 6]]), T.tensor([1.0, 3, 5])
        ),
        lambda T: T.bucketize(
            T.tensor([[0.0, 1, 2], [3, 5, 6]]), T.tensor([1.0, 3, 5]), right=True
        ),
        lambda T: T.bucketize(
            T.tensor([0.0, 1, 2]), T.tensor([1.0, 3, 5]), out_int32=True
        ),
        lambda T: T.bucketize(2, T.tensor([1.0, 3, 5])),
        lambda T: T.bucketize(2.5, T.tensor([1, 2, 3])),
        lambda T: T.bucketize(T.tensor(2.0), T.tensor([1.0, 3, 5])),
        lambda T: T.bucketize(T.tensor([True]), T.tensor([0, 1])),
        lambda T: T.bucketize(T.tensor([2], dtype=T.int8), T.tensor([1.0, 3, 5])),
        lambda T: T.bucketize(T.tensor([2.0]), T.tensor([])),
        lambda T: T.bucketize(T.tensor([NAN, 1.0]), T.tensor([1.0, NAN])),
    ],
)
def test_bucketize_matches_torch(call):
    _same(*_both(call))


def test_searchsorted_and_bucketize_write_out_resizing_it():
    for name in ("searchsorted", "bucketize"):
        theirs, ours = (T.empty(0, dtype=T.long) for T in (torch, c))
        for T, out in ((torch, theirs), (c, ours)):
            args = (_seq(T), T.tensor([2.0, 7]))
            got = getattr(T, name)(
                *(args if name == "searchsorted" else args[::-1]), out=out
            )
            assert got is out
        _same(theirs, ours)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0]), side="left", right=True),
        lambda T: T.searchsorted(_seq(T), T.tensor([3.0]), side="middle"),
        lambda T: T.searchsorted(T.tensor([False, True]), T.tensor([True])),
        lambda T: T.searchsorted(
            T.tensor([[1.0, 3, 5], [2, 4, 6]]), T.tensor([[3.0, 3]])
        ),
        lambda T: T.searchsorted(T.tensor([[1.0, 3, 5], [2, 4, 6]]), T.tensor([3.0])),
        lambda T: T.searchsorted(T.ones(2, 2), 1),
        lambda T: T.searchsorted(T.tensor(1.0), T.tensor([3.0])),
        lambda T: T.searchsorted(
            _seq(T), T.tensor([2.0]), sorter=T.tensor([1, 2, 0, 3, 4], dtype=T.int32)
        ),
        lambda T: T.searchsorted(_seq(T), T.tensor([2.0]), sorter=T.tensor([1, 2])),
        lambda T: T.searchsorted(
            _seq(T), T.tensor([2.0]), sorter=T.tensor([1, 2, 0, 3, 5])
        ),
        lambda T: T.searchsorted(
            _seq(T), T.tensor([2.0]), sorter=T.tensor([1, 2, 0, 3, -1])
        ),
        lambda T: T.searchsorted(
            _seq(T), T.tensor([2.0]), out=T.empty(1, dtype=T.int32)
        ),
        lambda T: T.searchsorted([1, 2, 3], T.tensor([2.0])),
        lambda T: T.searchsorted(_seq(T), [2.0, 3.0]),
        lambda T: T.bucketize(T.tensor([2.0]), T.ones(2, 2)),
        lambda T: T.bucketize(T.tensor([2.0]), T.tensor(1.0)),
        lambda T: T.bucketize(T.tensor([True]), T.tensor([False, True])),
        lambda T: T.bucketize(T.tensor([2.0]), T.tensor([1.0]), out=T.empty(1)),
        lambda T: T.bucketize(T.tensor([2.0]), [1.0, 3.0]),
    ],
)
def test_bad_search_arguments_raise_torch_errors(call):
    _same_error(call)


# -- isin ---------------------------------------------------------------------

_MANY = list(range(7, 20))  # enough test elements for torch to sort


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.isin(T.tensor([[1, 2], [3, 4]]), T.tensor([2, 3])),
        lambda T: T.isin(T.tensor([[1, 2], [3, 4]]), T.tensor([2, 3]), invert=True),
        lambda T: T.isin(T.tensor([1, 2, 2, 4]), T.tensor([2, 2]), assume_unique=True),
        lambda T: T.isin(T.tensor([1, 2, 2, 4, 5, 5]), T.tensor([2, 2, *_MANY])),
        lambda T: T.isin(
            T.tensor([1, 2, 2, 4, 5, 5]), T.tensor([2, 2, *_MANY]), assume_unique=True
        ),
        lambda T: T.isin(
            T.tensor([1, 2, 2, 4, 5, 5]),
            T.tensor([2, 2, *_MANY]),
            assume_unique=True,
            invert=True,
        ),
        lambda T: T.isin(
            T.tensor([NAN, 2, NAN, -0.0, 5]),
            T.tensor([NAN, 2, 0.0, *_MANY]),
            assume_unique=True,
        ),
        lambda T: T.isin(
            T.tensor([NAN, 2, NAN, -0.0, 5]), T.tensor([NAN, 2, 0.0, *_MANY])
        ),
        lambda T: T.isin(T.tensor([NAN, 1.0]), T.tensor([NAN, 1.0])),
        lambda T: T.isin(2, T.tensor([2, 3])),
        lambda T: T.isin(2.5, T.tensor([2, 3])),
        lambda T: T.isin(300, T.tensor([44], dtype=T.uint8)),
        lambda T: T.isin(T.tensor([2, 3]), 2),
        lambda T: T.isin(T.tensor([2, 3]), 2.5),
        lambda T: T.isin(T.tensor([1.0, NAN]), NAN, invert=True),
        lambda T: T.isin(T.tensor([2, -24], dtype=T.int8), 1000),
        lambda T: T.isin(T.tensor([2, -24], dtype=T.int8), T.tensor([1000])),
        lambda T: T.isin(T.tensor([0.1], dtype=T.float16), T.tensor([0.1])),
        lambda T: T.isin(T.tensor([0.1], dtype=T.float16), 0.1),
        lambda T: T.isin(T.tensor([2.5, 3.0]), T.tensor([3])),
        lambda T: T.isin(T.tensor([]), T.tensor([1.0])),
        lambda T: T.isin(T.tensor([1.0]), T.tensor([]), invert=True),
        lambda T: T.isin(T.tensor(1.0), T.tensor([1.0])),
        lambda T: T.isin(T.tensor([1.0]), T.tensor(1.0)),
    ],
)
def test_isin_matches_torch(call):
    _same(*_both(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.isin(T.tensor([True, False]), T.tensor([True])),
        lambda T: T.isin(T.tensor([1]), T.tensor([True])),
        lambda T: T.isin(T.tensor([1]), True),
        lambda T: T.isin(True, T.tensor([1])),
        lambda T: T.isin(2, 3),
        lambda T: T.isin(T.tensor([1]), [1]),
    ],
)
def test_bad_isin_arguments_raise_torch_errors(call):
    _same_error(call)


def test_searchsorted_and_isin_agree_with_torch_on_random_data():
    rng = np.random.default_rng(0)
    for trial in range(3):  # (fixed sizes: one program each)
        a = np.round(rng.standard_normal(40) * 4) / 2  # repeated values
        s = np.sort(a) if trial else a  # unsorted: torch's own search path
        v = np.round(rng.standard_normal(20) * 4) / 2
        for right in (False, True):

            def search(T, s=s, v=v, right=right):
                return T.searchsorted(T.tensor(s), T.tensor(v), right=right)

            _same(*_both(search))
        for unique in (False, True):

            def member(T, a=a, v=v, unique=unique):
                return T.isin(T.tensor(v), T.tensor(a), assume_unique=unique)

            _same(*_both(member))


# -- histogram, histogramdd ---------------------------------------------------


def _x(T):
    return T.tensor([1.0, 2, 1, 2.5, 4])


def _w(T):
    return T.tensor([1.0, 2, 3, 4, 5])


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.histogram(_x(T), 4),
        lambda T: T.histogram(_x(T), 4, range=(0.0, 3.0)),
        lambda T: T.histogram(_x(T), 4, range=[0, 3]),
        lambda T: T.histogram(_x(T), 4, weight=_w(T)),
        lambda T: T.histogram(_x(T), 4, density=True),
        lambda T: T.histogram(_x(T), 4, weight=_w(T), density=True),
        lambda T: T.histogram(_x(T), T.tensor([0.0, 1.5, 2, 5])),
        lambda T: T.histogram(_x(T), T.tensor([0.0, 1.5, 2, 5]), density=True),
        lambda T: T.histogram(_x(T), T.tensor([0.0, 3, 2, 5])),
        lambda T: T.histogram(_x(T), T.tensor([0.0, 2, 2, 5])),
        lambda T: T.histogram(_x(T).double(), 3, weight=_w(T).double(), density=True),
        lambda T: T.histogram(T.tensor([]), 3),
        lambda T: T.histogram(T.tensor([]), 3, density=True),
        lambda T: T.histogram(T.tensor(2.0), 3),
        lambda T: T.histogram(T.tensor([[1.0, 2], [3, 4]]), 3),
        lambda T: T.histogram(T.tensor([2.0, 2]), 3),
        lambda T: T.histogram(T.tensor([2.0, NAN, INF]), 3, range=(0.0, 4.0)),
        lambda T: T.histogram(_x(T), 3, range=(1.0, 1.0)),
        lambda T: T.histogram(T.arange(6.0), 2, weight=T.ones(2, 3)),
        lambda T: T.histogram(
            T.tensor([0.3, 0.6, 0.1, 0.7, 0.2]), 10, range=(0.1, 0.7)
        ),
        lambda T: T.histogram(T.tensor([0.1, 0.2, 0.3, 0.7, 0.9, 1.0, 0.0]), 10),
        lambda T: _x(T).histogram(3),
    ],
)
def test_histogram_matches_torch(call):
    _same(*_both(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.histogramdd(
            T.tensor([[0.0, 1], [1, 0], [2, 0], [2, 2]]),
            bins=[3, 3],
            weight=T.tensor([1.0, 2, 4, 8]),
        ),
        lambda T: T.histogramdd(T.tensor([[0.0, 1], [1, 0], [2, 0], [2, 2]]), bins=2),
        lambda T: T.histogramdd(
            T.tensor([[0.0, 1], [1, 0], [2, 0], [2, 2]]), bins=(2, 3)
        ),
        lambda T: T.histogramdd(
            T.tensor([[0.0, 1], [1, 0], [2, 0], [2, 2]]),
            bins=[2, 2],
            range=[0.0, 1, 0, 1],
            density=True,
        ),
        lambda T: T.histogramdd(
            T.tensor([[0.0, 1], [1, 0], [2, 0]]),
            bins=[T.tensor([0.0, 1, 3]), T.tensor([0.0, 0.5, 2.5])],
        ),
        lambda T: T.histogramdd(T.arange(12.0).reshape(2, 3, 2) ** 1.5, bins=[2, 3]),
        lambda T: T.histogramdd(T.tensor([[1.0, 2.0]]), bins=2, weight=T.tensor(2.0)),
        lambda T: T.histogramdd(T.zeros(0, 2), bins=2),
        lambda T: T.histogramdd(
            T.tensor([[0.1, 0.7], [0.3, 0.2]], dtype=T.float64),
            bins=[3, 2],
            density=True,
        ),
    ],
)
def test_histogramdd_matches_torch(call):
    _same(*_both(call))


def test_histogram_returns_torchs_named_tuple():
    ours = c.histogram(c.tensor([1.0, 2, 3]), 2)
    theirs = torch.histogram(torch.tensor([1.0, 2, 3]), 2)
    assert isinstance(ours, tuple) and len(ours) == 2
    assert type(ours).__module__ == "torch.return_types"
    assert type(ours).__name__ == type(theirs).__name__ == "histogram"
    assert repr(ours) == repr(theirs)
    hist, edges = ours
    assert hist is ours.hist and edges is ours.bin_edges
    dd = c.histogramdd(c.tensor([[1.0, 2]]), bins=2)
    assert type(dd).__name__ == "histogramdd" and isinstance(dd.bin_edges, tuple)


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda T, x: T.histogram(x, 3), "histogram"),
        (lambda T, x: T.histogram(x.detach(), 3, weight=x), "histogram"),
        (lambda T, x: T.histogramdd(x.view(-1, 1), 2), "_histogramdd_from_bin_cts"),
    ],
)
def test_histogram_outputs_require_grad_but_have_no_derivative(call, op):
    for T in (torch, c):
        hist, *edges = call(T, T.tensor([1.0, 2, 3], requires_grad=True))
        assert hist.requires_grad and type(hist.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not"):
            hist.sum().backward()
        with T.no_grad():
            assert not call(T, T.tensor([1.0, 2], requires_grad=True))[0].requires_grad


def test_histogram_agrees_with_torch_on_random_data():
    rng = np.random.default_rng(1)
    for trial in range(4):  # (fixed sizes: one program each)
        a = rng.standard_normal(100).astype(np.float32)
        a = np.round(a * 4) / 4 if trial % 2 else a  # values on the edges
        kwargs = {"range": (float(a.min()) - 0.1, 0.3)} if trial > 1 else {}

        def histogram(T, a=a, kwargs=kwargs):
            return T.histogram(T.tensor(a), 13, **kwargs)

        _same(*_both(histogram))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.histogram(_x(T), 0),
        lambda T: T.histogram(_x(T), -1),
        lambda T: T.histogram(_x(T), T.tensor([0.0])),
        lambda T: T.histogram(_x(T), T.tensor([])),
        lambda T: T.histogram(_x(T), T.tensor([[0.0, 2]])),
        lambda T: T.histogram(_x(T), T.tensor([0, 2, 5])),
        lambda T: T.histogram(_x(T), T.tensor([0.0, 1]), range=(0.0, 1.0)),
        lambda T: T.histogram(_x(T), 3.0),
        lambda T: T.histogram(_x(T), [0.0, 1.0]),
        lambda T: T.histogram(T.tensor([1, 2]), 2),
        lambda T: T.histogram(T.tensor([1, 2]), 2, range=(0.0, 1.0)),
        lambda T: T.histogram(_x(T).half(), 3),
        lambda T: T.histogram(T.tensor([2.0, NAN]), 3),
        lambda T: T.histogram(T.tensor([2.0, INF]), 3),
        lambda T: T.histogram(_x(T), 3, range=(3.0, 1.0)),
        lambda T: T.histogram(_x(T), 3, range=(0.123456789, 0.1)),
        lambda T: T.histogram(_x(T), 3, range=(NAN, 1.0)),
        lambda T: T.histogram(_x(T), 3, range=(1.0, 2.0, 3.0)),
        lambda T: T.histogram(_x(T), 3, weight=T.ones(4)),
        lambda T: T.histogram(_x(T), 3, weight=T.ones(5, dtype=T.float64)),
        lambda T: T.histogramdd(T.tensor([[0.0, 1.0]]), bins=[2, 3, 4]),
        lambda T: T.histogramdd(T.tensor([[NAN, 1.0]]), bins=[2, 3, 4]),
        lambda T: T.histogramdd(T.tensor([[0.0, 1.0]]), bins=[0, 2]),
        lambda T: T.histogramdd(T.tensor([[0.0, 1.0]]), bins=2, range=[0.0, 1.0]),
        lambda T: T.histogramdd(T.tensor([[0.0, 1.0]]), bins=[T.tensor([0.0, 1.0])]),
        lambda T: T.histogramdd(T.tensor([1.0, 2.0]), bins=2),
        lambda T: T.histogramdd(T.tensor(1.0), bins=2),
        lambda T: T.histogramdd(T.tensor([[0.0, 1.0]]), bins=2, weight=T.ones(3)),
        lambda T: T.histogramdd(T.tensor([[1, 2]]), bins=2),
    ],
)
def test_bad_histogram_arguments_raise_torch_errors(call):
    _same_error(call)
