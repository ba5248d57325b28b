"""compat's grid and join functions (meshgrid, cartesian_prod, atleast_nd,
hstack/vstack/dstack/column_stack) against PyTorch: values, shapes, strides,
gradients, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(torch), fn(c)


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_array_equal(np.asarray(b.tolist()), np.asarray(a.tolist()))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid_matches_torch_values_and_strides(indexing, n):
    sizes = [3, 2, 4][:n]

    def grids(T):
        tensors = [T.arange(float(k)) * (i + 1) for i, k in enumerate(sizes)]
        return T.meshgrid(*tensors, indexing=indexing)

    theirs, ours = _both(grids)
    assert len(ours) == len(theirs) == n
    for a, b in zip(theirs, ours, strict=True):
        _same(a, b)
        assert b.stride() == a.stride()


def test_meshgrid_takes_a_list_and_a_zero_dim_tensor():
    theirs, ours = _both(
        lambda T: T.meshgrid([T.tensor(2), T.arange(3)], indexing="ij")
    )
    for a, b in zip(theirs, ours, strict=True):
        _same(a, b)


def test_meshgrid_without_indexing_warns_as_torch_and_indexes_ij():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x, y = c.meshgrid(c.arange(3.0), c.arange(2.0))
    assert [str(w.message) for w in seen] == [
        "torch.meshgrid: in an upcoming release, it will be required to pass the "
        "indexing argument."
    ]
    assert tuple(x.shape) == (3, 2) and x[:, 0].tolist() == [0.0, 1.0, 2.0]
    assert y[0].tolist() == [0.0, 1.0]


def test_meshgrid_gradients_sum_over_the_grid():
    def grads(T):
        a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = T.tensor([4.0, 5.0], requires_grad=True)
        x, y = T.meshgrid(a, b, indexing="xy")
        (x * y * T.arange(6.0).view(2, 3)).sum().backward()
        return a.grad, b.grad

    theirs, ours = _both(grads)
    for a, b in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(b.tolist(), a.tolist())


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.meshgrid(T.ones(2, 2), indexing="ij"),
        lambda T: T.meshgrid(indexing="ij"),
        lambda T: T.meshgrid(T.arange(2), T.arange(2.0), indexing="ij"),
        lambda T: T.meshgrid(T.arange(2), indexing="yx"),
        lambda T: T.cartesian_prod(T.ones(2, 2)),
        lambda T: T.hstack(T.ones(2)),
        lambda T: T.vstack([]),
        lambda T: T.dstack([T.ones(2), T.ones(3)]),
    ],
)
def test_bad_grid_and_join_arguments_raise_torch_errors(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(c)
    first = str(theirs.value).splitlines()[0].split(":")[0]
    assert str(ours.value).startswith(first)


def test_cartesian_prod_lists_every_combination_in_order():
    theirs, ours = _both(
        lambda T: T.cartesian_prod(T.tensor([1, 2]), T.tensor([3, 4]), T.tensor([5]))
    )
    _same(theirs, ours)
    single = c.tensor([1, 2, 3])
    assert c.cartesian_prod(single) is single


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast_nd_adds_torchs_unit_dims(name, shape):
    theirs, ours = _both(lambda T: getattr(T, name)(T.ones(shape)))
    _same(theirs, ours)
    pair = getattr(c, name)(c.ones(shape), c.zeros(shape))
    assert isinstance(pair, tuple) and len(pair) == 2
    assert tuple(pair[1].shape) == tuple(ours.shape)


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack",
                                  "column_stack"])  # fmt: skip
@pytest.mark.parametrize(
    "shapes", [[(), ()], [(3,), (3,)], [(2, 3), (2, 3)], [(3,), (3,), (3,)]]
)
def test_stacks_join_as_torch_does(name, shapes):
    def joined(T):
        parts = [
            T.arange(float(np.prod(s))).reshape(s) + i for i, s in enumerate(shapes)
        ]
        return getattr(T, name)(parts)

    theirs, ours = _both(joined)
    _same(theirs, ours)


def test_column_stack_joins_vectors_and_matrices_with_promotion():
    theirs, ours = _both(
        lambda T: T.column_stack([T.arange(3), T.ones(3, 2, dtype=T.float64)])
    )
    _same(theirs, ours)
