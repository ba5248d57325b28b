"""compat's index sets and structured matrices (unravel_index, tril_indices,
triu_indices, combinations, block_diag, vander) against PyTorch: values,
dtypes, shapes, gradients and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(c)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(np.asarray(b.tolist()), np.asarray(a.tolist()))


def _same_error(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    gist = re.split(r"[:<]", str(theirs.value).splitlines()[0])[0]
    assert str(ours.value).startswith(gist)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.unravel_index(T.tensor([4, 1, 5]), (2, 3)),
        lambda T: T.unravel_index(T.tensor(4), 6),
        lambda T: T.unravel_index(T.tensor([-1, 7]), [2, 3]),
        lambda T: T.unravel_index(T.tensor([[4, 1], [0, 5]]), T.Size([2, 3])),
        lambda T: T.unravel_index(T.tensor([4], dtype=T.int32), (2, 3)),
        lambda T: T.unravel_index(T.tensor([200], dtype=T.uint8), (20, 30)),
        lambda T: T.unravel_index(T.tensor([], dtype=T.long), (2, 3)),
        lambda T: T.unravel_index(T.tensor([2**40]), (2**20, 2**21)),
        lambda T: T.unravel_index(T.tensor([1]), (True, 3)),
        lambda T: T.unravel_index(T.tensor([4]), ()),
    ],
)
def test_unravel_index_matches_torch(call):
    _same(*_both(call))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize(
    ("row", "col", "offset"),
    [(3, 3, 0), (4, 3, 1), (4, 3, -1), (4, 3, 10), (4, 3, -10), (0, 3, 0), (3, 0, 0)],
)
def test_triangle_indices_match_torch(name, row, col, offset):
    _same(*_both(lambda T: getattr(T, name)(row, col, offset)))


def test_triangle_indices_take_an_int32_dtype_and_a_device():
    _same(*_both(lambda T: T.tril_indices(5, 2, 1, dtype=T.int32, device="cpu")))
    _same(*_both(lambda T: T.triu_indices(2, 5, -1, dtype=T.int32)))


@pytest.mark.parametrize(
    ("r", "with_replacement"),
    [(0, False), (1, True), (2, False), (2, True), (3, False), (3, True), (5, False)],
)
def test_combinations_match_torch(r, with_replacement):
    _same(
        *_both(lambda T: T.combinations(T.tensor([1.0, 2, 3, 4]), r, with_replacement))
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.combinations(T.tensor([1, 2, 3])),
        lambda T: T.combinations(T.tensor([True, False])),
        lambda T: T.combinations(T.tensor([])),
        lambda T: T.combinations(T.tensor([]), 0),
    ],
)
def test_combinations_keep_the_dtype_and_handle_empty_input(call):
    _same(*_both(call))


@pytest.mark.parametrize(("r", "with_replacement"), [(2, False), (3, True)])
def test_combinations_gradients_match_torch(r, with_replacement):
    def grad(T):
        x = T.tensor([0.5, 2.0, -1.5, 3.0], requires_grad=True)
        y = T.combinations(x, r, with_replacement=with_replacement)
        assert type(y.grad_fn).__name__ == "StackBackward0"
        (y * T.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return x.grad

    _same(*_both(grad))


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.block_diag(
            T.tensor([[1, 2], [3, 4]]),
            T.tensor([5.0]),
            T.tensor(6),
            T.tensor([[7.0], [8.0]]),
        ),
        lambda T: T.block_diag(),
        lambda T: T.block_diag(T.ones(2, 3)),
        lambda T: T.block_diag(T.ones(0, 2), T.ones(2, 0)),
        lambda T: T.block_diag(T.tensor([True]), T.tensor([[False]])),
        lambda T: T.block_diag(T.tensor([True]), T.tensor([[2]])),
        lambda T: T.block_diag(T.ones(1, dtype=T.float64), T.ones(1)),
        lambda T: T.block_diag(T.ones(1), T.tensor(2.0, dtype=T.float64)),
        lambda T: T.block_diag(T.ones(1, dtype=T.int8), T.tensor(300)),
    ],
)
def test_block_diag_matches_torch(call):
    _same(*_both(call))


def test_block_diag_gradients_match_torch_in_each_inputs_dtype():
    def grads(T):
        a = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = T.tensor([5.0], dtype=T.float64, requires_grad=True)
        s = T.tensor(6.0, requires_grad=True)
        y = T.block_diag(a, b, s, T.tensor([[7], [8]]))
        assert type(y.grad_fn).__name__ == "BlockDiagBackward0"
        (
            y * T.arange(float(y.numel()), dtype=T.float64).reshape(y.shape)
        ).sum().backward()
        return a.grad, b.grad, s.grad

    _same(*_both(grads))


def _vanders(T, dtype):
    x = np.random.default_rng(0).standard_normal(20) * 3
    return T.vander(T.tensor(x.tolist(), dtype=getattr(T, dtype)), N=12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_vander_matches_torch_bit_for_bit(dtype):
    _same(*_both(lambda T: _vanders(T, dtype)))


def test_vander_matches_torch_in_float64_to_cumprods_rounding():
    # compat's cumprod multiplies in another order than torch's sequential loop:
    # float64 powers may differ in the last bit (float32's are made in float64)
    theirs, ours = _both(lambda T: _vanders(T, "float64"))
    np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=1e-15)


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.vander(T.tensor([1, 2, 3], dtype=T.int8)),
        lambda T: T.vander(T.tensor([0.5, 2.0, -3.0]), increasing=True),
        lambda T: T.vander(T.tensor([100], dtype=T.int8), N=4),
        lambda T: T.vander(T.tensor([True, False])),
        lambda T: T.vander(T.tensor([1.0, 2, 3]), N=0),
        lambda T: T.vander(T.tensor([1.0, 2, 3]), N=1),
        lambda T: T.vander(T.tensor([])),
        lambda T: T.vander(T.tensor([]), N=3),
    ],
)
def test_vander_matches_torch_on_integers_and_small_sizes(call):
    _same(*_both(call))


@pytest.mark.parametrize("increasing", [False, True])
def test_vander_backward_raises_as_torchs_does(increasing):
    # torch's vander overwrites, in place, the input its cumprod saved
    for T in (torch, c):
        x = T.tensor([0.5, 2.0, -1.5], requires_grad=True)
        y = T.vander(x, N=4, increasing=increasing)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        assert not T.vander(x, N=1).requires_grad


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.unravel_index(T.tensor([4.0]), (2, 3)),
        lambda T: T.unravel_index(T.tensor([True]), (2, 3)),
        lambda T: T.unravel_index(4, (2, 3)),
        lambda T: T.unravel_index(T.tensor([4]), (2, -3)),
        lambda T: T.unravel_index(T.tensor([4]), (2, 3.0)),
        lambda T: T.unravel_index(T.tensor([4]), "ab"),
        lambda T: T.unravel_index(T.tensor([4]), T.tensor([2, 3])),
        lambda T: T.unravel_index(T.tensor([4]), (0, 3)),
        lambda T: T.tril_indices(-1, 3),
        lambda T: T.triu_indices(1, -3),
        lambda T: T.tril_indices(3, 3, dtype=T.float32),
        lambda T: T.triu_indices(3, 3, dtype=T.int16),
        lambda T: T.tril_indices(3.0, 3),
        lambda T: T.triu_indices(3, 3, 1.0),
        lambda T: T.tril_indices(3, 3, requires_grad=True),
        lambda T: T.combinations(T.ones(4), -1),
        lambda T: T.combinations(T.ones(2, 2)),
        lambda T: T.combinations(T.tensor(1.0)),
        lambda T: T.combinations(T.ones(4), 2.0),
        lambda T: T.block_diag(T.ones(1, 1, 1)),
        lambda T: T.block_diag([T.ones(1)]),
        lambda T: T.block_diag(T.ones(1), 2),
        lambda T: T.vander(T.ones(2, 2)),
        lambda T: T.vander(T.tensor(1.0)),
        lambda T: T.vander(T.ones(3), N=-1),
        lambda T: T.vander(T.ones(3), N=2.0),
    ],
)
def test_bad_arguments_raise_torch_errors(call):
    _same_error(call)
