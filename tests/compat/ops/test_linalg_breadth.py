"""compat's torch.linalg past the OpInfo samples, against PyTorch: the ``_ex``
functions on matrices that fail (LAPACK's ``info`` and what it leaves behind),
``cond`` in every norm on singular matrices, ``matrix_rank``'s tolerances,
``multi_dot``'s order, ``lu_solve``'s and ``solve``'s left/adjoint forms, and
the argument errors, with torch's types and texts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3))
B = RNG.standard_normal((2, 3, 2))
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
NOT_PD = np.array([[4.0, 2.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 5.0]])


def _to(T, value):
    if isinstance(value, np.ndarray):
        return T.tensor(value.tolist(), dtype=T.float64 if value.ndim else None)
    if isinstance(value, list):
        return [_to(T, v) for v in value]
    return value


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert type(ours).__name__ == type(theirs).__name__
        fields = type(theirs).__match_args__  # a structseq's field names
        assert [getattr(ours, f) for f in fields] == list(ours)
        for o, t in zip(ours, theirs, strict=True):
            _same(o, t)
        return
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-9
    )


VALUES = {
    "inv_ex singular": (
        lambda T, a: T.linalg.inv_ex(a),
        [np.stack([A[0, :2, :2], SINGULAR])],
    ),
    "solve_ex singular": (
        lambda T, a, b: T.linalg.solve_ex(a, b),
        [SINGULAR, np.ones(2)],
    ),
    "cholesky_ex not positive-definite": (
        lambda T, a: T.linalg.cholesky_ex(a),
        [np.stack([NOT_PD, -np.eye(3), A[0] @ A[0].T + np.eye(3)])],
    ),
    "cholesky_ex upper": (
        lambda T, a: T.linalg.cholesky_ex(a, upper=True),
        [np.stack([NOT_PD, A[1] @ A[1].T + np.eye(3)])],
    ),
    "lu_factor_ex singular": (lambda T, a: T.linalg.lu_factor_ex(a), [SINGULAR]),
    "lu wide": (lambda T, a: T.linalg.lu(a), [RNG.standard_normal((2, 3, 5))]),
    "cond 1 singular": (lambda T, a: T.linalg.cond(a, 1), [SINGULAR]),
    "cond -2 singular": (lambda T, a: T.linalg.cond(a, -2), [SINGULAR]),
    "cond -2": (lambda T, a: T.linalg.cond(a, -2), [A]),
    "cond nuc": (lambda T, a: T.linalg.cond(a, "nuc"), [A]),
    "cond empty": (lambda T, a: T.linalg.cond(a, 1), [np.zeros((2, 0, 0))]),
    "cond rectangular": (lambda T, a: T.linalg.cond(a), [B]),
    "matrix_rank atol tensor": (
        lambda T, a: T.linalg.matrix_rank(a, atol=T.tensor([0.5, 100.0])),
        [A],
    ),
    "matrix_rank atol rtol": (
        lambda T, a: T.linalg.matrix_rank(a, atol=0.5, rtol=0.3),
        [A],
    ),
    "matrix_rank tol": (lambda T, a: T.linalg.matrix_rank(a, 1.0, True), [A + A.mT]),
    "matrix_rank empty": (lambda T, a: T.linalg.matrix_rank(a), [np.zeros((2, 0, 3))]),
    "multi_dot chain": (
        lambda T, *m: T.linalg.multi_dot(m),
        [RNG.standard_normal(s) for s in ((4,), (4, 9), (9, 2), (2, 7), (7, 3), (3,))],
    ),
    "vander int": (
        lambda T: T.linalg.vander(T.tensor([1, 2, 3], dtype=T.int32), N=4),
        [],
    ),
    "diagonal": (lambda T, a: T.linalg.diagonal(a, offset=1, dim1=0, dim2=2), [A]),
    "matmul": (lambda T, a, b: T.linalg.matmul(a, b), [A, B]),
    "householder_product": (
        lambda T, a: T.linalg.householder_product(*T.geqrf(a)),
        [RNG.standard_normal((2, 4, 3))],
    ),
}

# each of these differentiable: values and the gradient of a weighted sum
GRADS = {
    "lu_solve": (lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b), [A, B]),
    "lu_solve adjoint": (
        lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b, adjoint=True),
        [A, B],
    ),
    "lu_solve left=False": (
        lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b.mT, left=False),
        [A, B],
    ),
    "lu_solve left=False adjoint": (
        lambda T, a, b: T.linalg.lu_solve(
            *T.linalg.lu_factor(a), b.mT, left=False, adjoint=True
        ),
        [A, B],
    ),
    "solve left=False": (lambda T, a, b: T.linalg.solve(a, b.mT, left=False), [A, B]),
    "solve_ex left=False": (
        lambda T, a, b: T.linalg.solve_ex(a, b.mT, left=False).result,
        [A, B],
    ),
    "solve_triangular left=False unit": (
        lambda T, a, b: T.linalg.solve_triangular(
            a, b.mT, upper=False, left=False, unitriangular=True
        ),
        [A, B],
    ),
    "solve_triangular broadcast": (
        lambda T, a, b: T.linalg.solve_triangular(a[:1], b, upper=True),
        [A, B],
    ),
    "lu": (lambda T, a: T.linalg.lu(a), [RNG.standard_normal((2, 4, 3))]),
    "cond nuc": (lambda T, a: T.linalg.cond(a, "nuc"), [A]),
    "cond -2": (lambda T, a: T.linalg.cond(a, -2), [A]),
    "multi_dot": (lambda T, a, b: T.linalg.multi_dot([a[0], a[1], b[0]]), [A, B]),
    "vander": (lambda T, a: T.linalg.vander(a[0, 0]), [A]),
    "tensorinv": (
        lambda T, a: T.linalg.tensorinv(a, ind=1),
        [RNG.standard_normal((6, 2, 3))],
    ),
    "tensorsolve dims": (
        lambda T, a, b: T.linalg.tensorsolve(a, b, dims=(0,)),
        [RNG.standard_normal((6, 2, 3)), RNG.standard_normal((2, 3))],
    ),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_dtypes_and_result_types_are_torchs(name):
    fn, arrays = VALUES[name]
    _same(fn(c, *_to(c, arrays)), fn(torch, *_to(torch, arrays)))


def _run(T, fn, arrays):
    xs = [_to(T, a).requires_grad_(True) for a in arrays]
    out = fn(T, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum(
        (o * (i + 1) * T.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
        for i, o in enumerate(outs)
        if o.requires_grad
    )
    loss.backward()
    return out, [x.grad for x in xs]


@pytest.mark.parametrize("name", sorted(GRADS))
def test_values_and_gradients_are_torchs(name):
    fn, arrays = GRADS[name]
    ours, our_grads = _run(c, fn, arrays)
    theirs, their_grads = _run(torch, fn, arrays)
    _same(ours, theirs)
    for o, t in zip(our_grads, their_grads, strict=True):
        _same(o, t)


@pytest.mark.parametrize("p", ["fro", 1, -math.inf])
def test_conds_gradient_through_the_inverse_is_the_norms_product_one(p):
    # torch's own backward fails here (its masked_fill_ of the saved inverse):
    # compat differentiates the same product, norm(A) * norm(inverse(A))
    theirs = _to(torch, A).requires_grad_(True)
    norm = torch.linalg.matrix_norm
    (norm(theirs, p) * norm(torch.linalg.inv(theirs), p)).sum().backward()
    ours = _to(c, A).requires_grad_(True)
    value = c.linalg.cond(ours, p)
    value.sum().backward()
    _same(value, torch.linalg.cond(_to(torch, A), p))
    _same(ours.grad, theirs.grad)


BAD = {
    "multi_dot none": lambda T: T.linalg.multi_dot([]),
    "multi_dot a tensor": lambda T: T.linalg.multi_dot(T.ones(2, 2)),
    "multi_dot 3-D first": lambda T: T.linalg.multi_dot([T.ones(2, 2, 2), T.ones(2)]),
    "multi_dot 3-D middle": lambda T: T.linalg.multi_dot(
        [T.ones(2), T.ones(2, 2, 1), T.ones(2)]
    ),
    "multi_dot dtypes": lambda T: T.linalg.multi_dot(
        [T.ones(2, 2), T.ones(2, 2, dtype=T.int64)]
    ),
    "multi_dot shapes": lambda T: T.linalg.multi_dot(
        [T.ones(3), T.ones(3, 3), T.ones(2)]
    ),
    "matrix_rank 1-D": lambda T: T.linalg.matrix_rank(T.ones(3)),
    "matrix_rank int": lambda T: T.linalg.matrix_rank(T.ones(3, 3, dtype=T.int64)),
    "matrix_rank hermitian wide": lambda T: T.linalg.matrix_rank(
        T.ones(3, 4), hermitian=True
    ),
    "solve_triangular B 1-D": lambda T: T.linalg.solve_triangular(
        T.eye(3), T.ones(3), upper=True
    ),
    "solve_triangular shapes": lambda T: T.linalg.solve_triangular(
        T.eye(3), T.ones(3, 2), upper=True, left=False
    ),
    "solve_triangular int": lambda T: T.linalg.solve_triangular(
        T.eye(3, dtype=T.int64), T.ones(3, 2, dtype=T.int64), upper=True
    ),
    "vander N": lambda T: T.linalg.vander(T.ones(3), N=1),
    "vander bool": lambda T: T.linalg.vander(T.ones(3, dtype=T.bool)),
    "vander half": lambda T: T.linalg.vander(T.ones(3, dtype=T.float16)),
    "cond 1-D": lambda T: T.linalg.cond(T.ones(3)),
    "cond ord 3": lambda T: T.linalg.cond(T.eye(3), 3),
    "cond ord bad": lambda T: T.linalg.cond(T.eye(3), "bad"),
    "cond fro wide": lambda T: T.linalg.cond(T.ones(3, 4), "fro"),
    "cond 1.0 wide": lambda T: T.linalg.cond(T.ones(3, 4), 1.0),
    "cond inf wide": lambda T: T.linalg.cond(T.ones(3, 4), math.inf),
    "cond int": lambda T: T.linalg.cond(T.eye(3, dtype=T.int64), 1),
    "inv_ex half": lambda T: T.linalg.inv_ex(T.eye(3, dtype=T.float16)),
    "inv_ex check_errors": lambda T: T.linalg.inv_ex(
        T.stack([T.eye(2), T.zeros(2, 2)]), check_errors=True
    ),
    "cholesky_ex half": lambda T: T.linalg.cholesky_ex(T.eye(3, dtype=T.float16)),
    "cholesky_ex check_errors": lambda T: T.linalg.cholesky_ex(
        -T.eye(3), check_errors=True
    ),
    "solve_ex check_errors": lambda T: T.linalg.solve_ex(
        T.zeros(2, 2), T.ones(2), check_errors=True
    ),
    "solve shapes": lambda T: T.linalg.solve(T.eye(3), T.ones(4, 3)),
    "solve left=False vector": lambda T: T.linalg.solve(
        T.eye(3), T.ones(3), left=False
    ),
    "lu_factor singular": lambda T: T.linalg.lu_factor(T.zeros(2, 2)),
    "lu_factor_ex check_errors": lambda T: T.linalg.lu_factor_ex(
        T.stack([T.eye(2), T.zeros(2, 2)]), check_errors=True
    ),
    "lu_factor 1-D": lambda T: T.linalg.lu_factor(T.ones(3)),
    "lu_factor int": lambda T: T.linalg.lu_factor(T.ones(3, 3, dtype=T.int64)),
    "lu_factor no pivoting": lambda T: T.linalg.lu_factor(T.eye(3), pivot=False),
    "lu 1-D": lambda T: T.linalg.lu(T.ones(3)),
    "lu half": lambda T: T.linalg.lu(T.eye(3, dtype=T.float16)),
    "lu_solve pivots dtype": lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(3, dtype=T.int64), T.ones(3, 1)
    ),
    "lu_solve pivots count": lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(2, dtype=T.int32), T.ones(3, 1)
    ),
    "lu_solve pivots batch": lambda T: T.linalg.lu_solve(
        T.eye(3).expand(2, 3, 3), T.ones(3, dtype=T.int32), T.ones(3, 1)
    ),
    "lu_solve dtypes": lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(3, dtype=T.int32), T.ones(3, 1, dtype=T.float64)
    ),
    "lu_solve shapes": lambda T: T.linalg.lu_solve(
        T.eye(3), T.ones(3, dtype=T.int32), T.ones(3, 2), left=False
    ),
    "tensorinv ind": lambda T: T.linalg.tensorinv(T.ones(2, 2), ind=0),
    "tensorinv shape": lambda T: T.linalg.tensorinv(T.ones(2, 2, 4), ind=1),
    "tensorinv singular": lambda T: T.linalg.tensorinv(T.zeros(2, 2, 4), ind=2),
    "tensorsolve shape": lambda T: T.linalg.tensorsolve(T.ones(2, 3, 5), T.ones(2, 3)),
    "tensorsolve singular": lambda T: T.linalg.tensorsolve(
        T.zeros(2, 3, 6), T.ones(2, 3)
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_torchs_error(name):
    with pytest.raises(Exception) as theirs:
        BAD[name](torch)
    with pytest.raises(Exception) as ours:
        BAD[name](c)
        c.lazy.sync()  # a value's error comes at the sync point, lazily
    assert type(ours.value).__name__ == type(theirs.value).__name__
    base = next(k for k in type(theirs.value).__mro__ if k.__module__ == "builtins")
    assert isinstance(ours.value, base)
    first_line = str(theirs.value).splitlines()[0]
    assert str(ours.value).splitlines()[0].startswith(first_line)
