"""compat's reductions, scans and linear algebra against PyTorch: what the
OpInfo samples leave out (value-dependent errors, tie rules, return types,
options)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _both(array):
    return torch.tensor(array), compat.tensor(array)


def _close(t, c, atol=1e-5):
    np.testing.assert_allclose(
        np.asarray(c.detach().numpy()), t.detach().numpy(), atol=atol
    )


def _raises_like(fn_t, fn_c):
    with pytest.raises(Exception) as expected:
        fn_t()
    with pytest.raises(Exception) as got:
        fn_c()
        compat.sync()  # lazily, an error that depends on values is raised here
    assert type(got.value).__name__ == type(expected.value).__name__
    # lazily, the message goes on to name the line that recorded the op
    found = str(got.value).split(" (found when compat's pending work ran")[0]
    assert found == str(expected.value)


def test_singular_and_not_positive_definite_errors():
    z, cz = _both(np.stack([np.eye(3), np.zeros((3, 3))]))
    eye, ceye = _both(np.stack([np.eye(3), -np.eye(3)]))
    _raises_like(lambda: torch.inverse(z), lambda: compat.inverse(cz))
    _raises_like(lambda: torch.linalg.inv(z[1]), lambda: compat.linalg.inv(cz[1]))
    _raises_like(
        lambda: torch.linalg.cholesky(eye), lambda: compat.linalg.cholesky(ceye)
    )
    _raises_like(
        lambda: torch.linalg.solve(z[1], z[1]),
        lambda: compat.linalg.solve(cz[1], cz[1]),
    )
    assert issubclass(compat.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, a: t.det(a[:2]),
        lambda t, a: t.det(a.long()),
        lambda t, a: t.trace(a.unsqueeze(0)),
        lambda t, a: t.rot90(a, 1, [0, 0]),
        lambda t, a: t.quantile(a, 1.5),
        lambda t, a: t.quantile(a, 0.5, interpolation="foo"),
        lambda t, a: t.logcumsumexp(a.long(), 0),
        lambda t, a: t.linalg.cross(a[:, :2], a[:, :2]),
    ],
)
def test_errors_match_torch(call):
    a, ca = _both(np.arange(9.0).reshape(3, 3))
    _raises_like(lambda: call(torch, a), lambda: call(compat, ca))


def test_determinants_of_singular_and_negative_matrices():
    for m in (np.zeros((3, 3)), -np.eye(3), np.diag([1.0, 2.0, 3.0])):
        a, ca = _both(m)
        _close(torch.logdet(a), compat.logdet(ca))
        sign, logabs = torch.linalg.slogdet(a)
        got = compat.linalg.slogdet(ca)
        _close(sign, got.sign)
        _close(logabs, got.logabsdet)


def test_cummax_cummin_ties_and_nan():
    nan = float("nan")
    x = np.array([1.0, 3.0, 3.0, nan, 2.0, nan, 5.0])
    a, ca = _both(x)
    for name in ("cummax", "cummin"):
        t, c = getattr(torch, name)(a, 0), getattr(compat, name)(ca, 0)
        np.testing.assert_array_equal(c.indices.numpy(), t.indices.numpy())
        np.testing.assert_array_equal(c.values.numpy(), t.values.numpy())
    b, cb = _both(np.array([True, True, False, True]))
    np.testing.assert_array_equal(
        compat.cummax(cb, 0).indices.numpy(), torch.cummax(b, 0).indices.numpy()
    )


def test_nanmedian_and_nanquantile():
    nan = float("nan")
    x = np.array([[nan, nan, nan], [1.0, nan, 4.0], [3.0, 1.0, 2.0]])
    a, ca = _both(x)
    t, c = torch.nanmedian(a, 1), compat.nanmedian(ca, 1)
    np.testing.assert_array_equal(c.indices.numpy(), t.indices.numpy())
    _close(t.values, c.values)
    q = [0.0, 0.3, 0.5, 1.0]
    for mode in ("midpoint", "nearest"):
        t = torch.nanquantile(
            a, torch.tensor(q, dtype=a.dtype), 1, True, interpolation=mode
        )
        c = compat.nanquantile(
            ca, compat.tensor(q, dtype=ca.dtype), 1, True, interpolation=mode
        )
        assert tuple(c.shape) == tuple(t.shape)
        _close(t, c)
    _close(torch.quantile(a, 0.5), compat.quantile(ca, 0.5))


def test_return_types_and_options():
    x = np.random.default_rng(0).standard_normal((4, 3))
    a, ca = _both(x)
    mm = compat.aminmax(ca, dim=0, keepdim=True)
    assert type(mm).__name__ == "aminmax" and tuple(mm.max.shape) == (1, 3)
    t = torch.svd(a, some=False)
    c = compat.svd(ca, some=False)
    assert [tuple(v.shape) for v in c] == [tuple(v.shape) for v in t]
    _close(t.S, c.S)
    c = compat.svd(ca, compute_uv=False)
    assert float(c.U.abs().sum()) == 0 and tuple(c.V.shape) == (3, 3)
    q = compat.linalg.qr(ca, mode="r")
    assert tuple(q.Q.shape) == (0,) and tuple(q.R.shape) == (3, 3)
    u = compat.linalg.cholesky(ca.mT @ ca, upper=True)
    _close(torch.linalg.cholesky(a.mT @ a, upper=True), u)
    w = np.array([1, 2, 1, 3])
    _close(
        torch.cov(a.T, fweights=torch.tensor(w), aweights=torch.tensor(w / 3.0)),
        compat.cov(ca.T, fweights=compat.tensor(w), aweights=compat.tensor(w / 3.0)),
    )
    _close(torch.linalg.matrix_norm(a, 2), compat.linalg.matrix_norm(ca, 2))
    _close(torch.linalg.norm(a, -1), compat.linalg.norm(ca, -1))
    _close(torch.diag_embed(a, -1, 0, 2), compat.diag_embed(ca, -1, 0, 2))


def test_gradients_through_decompositions():
    x = np.random.default_rng(1).standard_normal((3, 3))
    spd = x @ x.T + np.eye(3)

    def grad(lib, fn):
        t = lib.tensor(spd, requires_grad=True)
        fn(lib, t).backward()
        return t.grad

    cases = [
        lambda t, a: t.logdet(a),
        lambda t, a: (t.linalg.qr(a).Q * t.linalg.qr(a).R.sum()).sum(),
        lambda t, a: t.matrix_power(a, -3).sum(),
        lambda t, a: t.logcumsumexp(a, 1).sum(),
    ]
    for fn in cases:
        _close(grad(torch, fn), grad(compat, fn), atol=1e-6)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_and_differentiates_as_torch(uplo):
    a = np.array([[2.0, 1.0, -0.5], [5.0, 3.0, 0.25], [1.5, -2.0, 1.0]], np.float32)
    results = []
    for lib in (torch, compat):
        A = lib.tensor(a, requires_grad=True)
        values, vectors = lib.linalg.eigh(A, UPLO=uplo)
        # the eigenvectors' signs are LAPACK's choice: their abs, as torch's
        # OpInfo compares them
        (values.sum() * 2 + vectors.abs().mul(lib.arange(3.0)).sum()).backward()
        vals = lib.linalg.eigvalsh(A, UPLO=uplo)
        results.append((values, vals, vectors @ vectors.mT, A.grad, values.grad_fn))
    (t_vals, t_h, t_vv, t_grad, t_fn), (c_vals, c_h, c_vv, c_grad, c_fn) = results
    for t, c in ((t_vals, c_vals), (t_h, c_h), (t_vv, c_vv), (t_grad, c_grad)):
        _close(t, c)
    assert type(c_fn).__name__ == type(t_fn).__name__ == "LinalgEighBackward0"
    assert repr(compat.linalg.eigh(compat.eye(2))).startswith(
        "torch.return_types.linalg_eigh(\neigenvalues=tensor([1., 1.])"
    )


def test_eigvalsh_of_a_batch_in_double_keeps_its_dtype():
    a = np.random.default_rng(2).standard_normal((2, 4, 4))
    t, c = _both(a)
    _close(torch.linalg.eigvalsh(t), compat.linalg.eigvalsh(c), atol=1e-10)
    assert compat.linalg.eigvalsh(c).dtype == compat.float64


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"),
        lambda lib: lib.linalg.eigvalsh(lib.ones(2, 3)),
        lambda lib: lib.linalg.eigvalsh(lib.ones(3)),
        lambda lib: lib.linalg.eigvalsh(lib.ones(2, 2, dtype=lib.long)),
        lambda lib: lib.linalg.eigvalsh(lib.ones(2, 2, dtype=lib.float16)),
    ],
    ids=["uplo", "not square", "vector", "long", "half"],
)
def test_eigh_errors_are_torchs(call):
    _raises_like(lambda: call(torch), lambda: call(compat))
