"""compat's scalar_tensor, range, randint_like, empty_strided, asarray and
frombuffer against PyTorch: values, dtypes, shapes, strides, memory sharing,
warnings and errors."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _same(theirs, ours):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad
    want = theirs.detach().double().numpy()
    got = np.asarray(ours.detach().double().tolist(), np.float64).reshape(want.shape)
    np.testing.assert_array_equal(got, want)


def _both(make):
    return make(torch), make(c)


def _raises_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    first = str(theirs.value).splitlines()[0].split(":")[0]
    assert str(ours.value).startswith(first), (str(ours.value), str(theirs.value))


def _quiet(call):
    def run(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(T)

    return run


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.scalar_tensor(3),
        lambda T: T.scalar_tensor(2.5, dtype=T.float64),
        lambda T: T.scalar_tensor(True),
        lambda T: T.scalar_tensor(7, dtype=T.int32),
        lambda T: T.scalar_tensor(T.tensor(4)),
        lambda T: T.scalar_tensor(1.5, requires_grad=True),
    ],
)
def test_scalar_tensor_matches_torch(call):
    _same(*_both(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.range(1, 4),
        lambda T: T.range(1, 4, 0.5),
        lambda T: T.range(0, 1, 0.1),
        lambda T: T.range(4, 1, -1),
        lambda T: T.range(1, 4, dtype=T.int64),
        lambda T: T.range(-3, 8, 3, dtype=T.int32),
        lambda T: T.range(0.5, 2.7, 0.3, dtype=T.float64),
        lambda T: T.range(0, 2, 0.25, dtype=T.float16),
        lambda T: T.range(2, 2),
        lambda T: T.range(0, 3, requires_grad=True),
    ],
)
def test_range_includes_its_end_as_torch(call):
    _same(*_both(_quiet(call)))


def test_range_warns_as_torch():
    def run(T):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            T.range(0, 1)
        return [(w.category, str(w.message)) for w in seen]

    theirs, ours = _both(run)
    assert ours == theirs


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.range(4, 1),
        lambda T: T.range(1, 4, 0),
        lambda T: T.range(0, float("inf")),
    ],
)
def test_bad_range_arguments_raise_torch_errors(call):
    _raises_as_torch(_quiet(call))


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.randint_like(x, 5),
        lambda T, x: T.randint_like(x, 3, 5),
        lambda T, x: T.randint_like(x.long(), -2, 2),
        lambda T, x: T.randint_like(x, 5, dtype=T.int32),
        lambda T, x: T.randint_like(x.bool(), 2),
        lambda T, x: T.randint_like(x, high=5),
        lambda T, x: T.randint_like(x, 5, requires_grad=True),
    ],
)
def test_randint_like_draws_in_torchs_shape_dtype_and_range(call):
    theirs = call(torch, torch.ones(40, 30))
    ours = call(c, c.ones(40, 30))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad
    got = np.asarray(ours.detach().double().tolist())
    want = theirs.detach().double().numpy()
    assert set(np.unique(got)) == set(np.unique(want))  # every value, 1200 draws


def test_randint_like_repeats_after_manual_seed():
    c.manual_seed(3)
    a = c.randint_like(c.ones(5), 100)
    c.manual_seed(3)
    assert c.randint_like(c.ones(5), 100).tolist() == a.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.randint_like(T.ones(2), 5, 3),
        lambda T: T.randint_like(T.ones(2), 5.5),
        lambda T: T.randint_like(T.ones(2).bool(), 5),
        lambda T: T.randint_like(T.ones(2).to(T.uint8), 300),
        lambda T: T.randint_like(T.ones(2).to(T.uint8), -1, 3),
    ],
)
def test_bad_randint_like_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


@pytest.mark.parametrize(
    ("size", "stride"),
    [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3), (0, 0)), ((), ()), ((0, 4), (4, 1))],
)
def test_empty_strided_has_torchs_shape_strides_and_storage(size, stride):
    theirs, ours = _both(lambda T: T.empty_strided(size, stride, dtype=T.float64))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.dtype == c.float64
    nbytes = theirs.untyped_storage().nbytes()
    assert ours.untyped_storage().nbytes() == nbytes
    if 0 not in stride:  # every element writable, through its layout
        ours.fill_(2.0)
        assert not ours.numel() or set(np.ravel(ours.tolist())) == {2.0}


def test_empty_strided_requires_grad_as_torch():
    t = c.empty_strided((2, 2), (1, 2), requires_grad=True)
    assert t.requires_grad and t.is_leaf


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.empty_strided((2, 3), (1,)),
        lambda T: T.empty_strided((2, -3), (1, 1)),
        lambda T: T.empty_strided((2, 3), (-1, 1)),
    ],
)
def test_bad_empty_strided_arguments_raise_torch_errors(call):
    _raises_as_torch(call)


def test_asarray_of_a_tensor_is_that_tensor_unless_asked_to_copy():
    x = c.arange(4.0)
    assert c.asarray(x) is x
    assert c.asarray(x, dtype=c.float32, copy=False) is x
    y = c.asarray(x, copy=True)
    assert y is not x
    y[0] = 9.0
    assert x[0].item() == 0.0
    assert c.asarray(x, dtype=c.float64).dtype == c.float64


def test_asarray_shares_a_numpy_arrays_memory_as_torch():
    for lib in (torch, c):
        a = np.arange(3.0)
        shared, copied = lib.asarray(a), lib.asarray(a, copy=True)
        cast = lib.asarray(a, dtype=lib.float32)
        a[0] = 7.0
        assert shared.tolist() == [7.0, 1.0, 2.0]
        assert copied.tolist() == cast.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.asarray([1, 2, 3]),
        lambda T: T.asarray([1.0, 2, 3]),
        lambda T: T.asarray(3.5),
        lambda T: T.asarray(True),
        lambda T: T.asarray([True, False]),
        lambda T: T.asarray(np.float32(2)),
        lambda T: T.asarray([1, 2], dtype=T.float16),
        lambda T: T.asarray([1.0, 2], requires_grad=True),
        lambda T: T.asarray(np.arange(3), copy=False),
        lambda T: T.asarray(bytearray(b"abcd"), dtype=T.int8),
        lambda T: T.asarray(array.array("f", [1, 2])),
        lambda T: T.asarray(array.array("d", [1, 2])),
    ],
)
def test_asarray_matches_torch(call):
    _same(*_both(call))


def test_asarray_of_a_tensor_requiring_grad_warns_once_as_torch():
    def run(T):
        x = T.arange(3.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            same = T.asarray(x)
        assert same is x
        assert T.asarray(x, requires_grad=False) is x
        return [str(w.message).split(" (Triggered")[0] for w in seen]

    torch.set_warn_always(True)
    c.set_warn_always(True)
    try:
        theirs, ours = _both(run)
    finally:
        torch.set_warn_always(False)
        c.set_warn_always(False)
    assert ours == theirs


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.asarray(T.arange(3.0), dtype=T.float64, copy=False),
        lambda T: T.asarray(np.arange(3.0), dtype=T.float32, copy=False),
        lambda T: T.asarray([1.0, 2.0], copy=False),
        lambda T: T.asarray([[1, 2], [3]]),
        lambda T: T.asarray([1, 2], requires_grad=True),
        lambda T: T.asarray("abc"),
        lambda T: T.asarray(memoryview(b"ab")),
        lambda T: T.asarray(np.arange(3)[::-1]),
    ],
)
def test_bad_asarray_arguments_raise_torch_errors(call):
    _raises_as_torch(_quiet(call))


def test_frombuffer_shares_a_writable_buffers_memory_both_ways():
    b = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    t = c.frombuffer(b, dtype=c.int32)
    assert t.tolist() == [1, 2] and t.dtype == c.int32
    b[0] = 5
    assert t.tolist() == [5, 2]
    t[1] = 9
    assert list(b) == [5, 0, 0, 0, 9, 0, 0, 0]


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.frombuffer(bytearray(b"\x01\x00\x00\x00\x02\x00"), dtype=T.int16),
        lambda T: T.frombuffer(bytearray(range(8)), dtype=T.int32, count=1, offset=4),
        lambda T: T.frombuffer(bytearray(range(8)), dtype=T.uint8, offset=3),
        lambda T: T.frombuffer(bytearray(range(8)), dtype=T.bool),
        lambda T: T.frombuffer(array.array("i", [1, 2, 3]), dtype=T.int32),
        lambda T: T.frombuffer(bytearray(8), dtype=T.float32, requires_grad=True),
        lambda T: T.frombuffer(b"abcd", dtype=T.uint8),
    ],
)
def test_frombuffer_matches_torch(call):
    _same(*_both(_quiet(call)))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.frombuffer(bytearray(8), dtype=T.int32, count=3),
        lambda T: T.frombuffer(bytearray(8), dtype=T.int32, offset=9),
        lambda T: T.frombuffer(bytearray(8), dtype=T.int32, offset=-1),
        lambda T: T.frombuffer(bytearray(8), dtype=T.int32, offset=1),
        lambda T: T.frombuffer(bytearray(), dtype=T.int32),
        lambda T: T.frombuffer(bytearray(8), dtype=T.int32, count=0),
        lambda T: T.frombuffer([1, 2], dtype=T.int32),
    ],
)
def test_bad_frombuffer_arguments_raise_torch_errors(call):
    _raises_as_torch(call)
