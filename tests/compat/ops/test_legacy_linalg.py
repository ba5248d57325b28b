"""compat's pre-``torch.linalg`` functions (lu, lu_unpack, lu_solve,
triangular_solve, geqrf, orgqr, ormqr, nuclear_norm, frobenius_norm) and the
ones torch 2.x removed, against PyTorch: values, dtypes, gradients, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)).astype(np.float32)
B = RNG.standard_normal((2, 3, 2)).astype(np.float32)
W = RNG.standard_normal((2, 4, 3)).astype(np.float32)
QR, TAU = (t.numpy() for t in torch.geqrf(torch.from_numpy(W)))
C_LEFT = RNG.standard_normal((2, 4, 2)).astype(np.float32)
C_RIGHT = RNG.standard_normal((2, 2, 4)).astype(np.float32)


def _run(T, call, *arrays):
    xs = [T.tensor(a.tolist(), requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = call(T, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * (i + 1)).sum() for i, o in enumerate(outs) if o.requires_grad)
    loss.backward()
    return outs, [x.grad for x in xs]


CASES = {
    "lu": (lambda T, a: T.lu(a), A),
    "lu_wide": (lambda T, w: T.lu(w.mT), W),
    "lu_infos": (lambda T, a: T.lu(a, get_infos=True), A),
    "lu_method": (lambda T, a: a.lu(), A),
    "lu_unpack": (lambda T, w: T.lu_unpack(*T.lu(w)), W),
    "lu_unpack_no_pivots": (lambda T, a: T.lu_unpack(*T.lu(a), True, False), A),
    "lu_solve": (lambda T, b, a: T.lu_solve(b, *T.lu(a)), B, A),
    "lu_solve_broadcast": (lambda T, b, a: b.lu_solve(*T.lu(a[0])), B, A),
    "triangular_solve": (lambda T, b, a: T.triangular_solve(b, a), B, A),
    "triangular_solve_lower_t_unit": (
        lambda T, b, a: b.triangular_solve(a, False, True, True),
        B,
        A,
    ),
    "triangular_solve_broadcast": (lambda T, b, a: T.triangular_solve(b[0], a), B, A),
    "orgqr": (lambda T, a, tau: T.orgqr(a, tau), QR, TAU),
    "orgqr_fewer_reflectors": (lambda T, a, tau: a.orgqr(tau[:, :2]), QR, TAU),
    "ormqr_left": (lambda T, a, tau, m: T.ormqr(a, tau, m), QR, TAU, C_LEFT),
    "ormqr_left_transposed": (
        lambda T, a, tau, m: a.ormqr(tau, m, transpose=True),
        QR,
        TAU,
        C_LEFT,
    ),
    "ormqr_right": (lambda T, a, tau, m: T.ormqr(a, tau, m, False), QR, TAU, C_RIGHT),
    "ormqr_right_transposed": (
        lambda T, a, tau, m: T.ormqr(a, tau, m, False, True),
        QR,
        TAU,
        C_RIGHT,
    ),
    "nuclear_norm": (lambda T, w: T.nuclear_norm(w, True), W),
    "nuclear_norm_dim": (lambda T, w: T.nuclear_norm(w, (0, 2)), W),
    "frobenius_norm": (lambda T, w: T.frobenius_norm(w, (0, 2), keepdim=True), W),
}


@pytest.mark.parametrize("case", list(CASES))
def test_legacy_linalg_matches_torch_values_and_gradients(case):
    call, *arrays = CASES[case]
    theirs, their_grads = _run(torch, call, *arrays)
    ours, our_grads = _run(c, call, *arrays)
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours, strict=True):
        assert tuple(b.shape) == tuple(a.shape)
        assert str(b.dtype) == str(a.dtype)
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)
    for a, b in zip(their_grads, our_grads, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-3, atol=1e-4)


def test_lu_infos_name_the_first_zero_pivot_and_fields_are_named():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    theirs = torch.lu(torch.tensor(singular), get_infos=True)
    ours = c.lu(c.tensor(singular), get_infos=True)
    assert ours.info.item() == theirs.info.item() == 2
    assert str(ours.pivots.dtype) == "torch.int32"
    sol = c.triangular_solve(c.ones(2, 1), c.eye(2))
    assert sol.cloned_coefficient.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_geqrf_matches_torch_and_its_backward_raises_as_torchs():
    theirs = torch.geqrf(torch.tensor(W.tolist()))
    ours = c.geqrf(c.tensor(W.tolist()))
    for a, b in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)
    x = c.tensor(W.tolist(), requires_grad=True)
    a, _ = c.geqrf(x)
    assert a.requires_grad
    with pytest.raises(NotImplementedError, match="derivative for 'geqrf'"):
        a.sum().backward()


@pytest.mark.parametrize(
    "call",
    [
        lambda T, a: T.lstsq(a, a),
        lambda T, a: T.solve(a, a),
        lambda T, a: T.eig(a),
        lambda T, a: T.symeig(a, eigenvectors=True),
        lambda T, a: T.matrix_rank(a),
        lambda T, a: a.lstsq(a),
        lambda T, a: a.solve(a),
        lambda T, a: a.eig(),
        lambda T, a: a.symeig(),
        lambda T, a: T.lu(a, pivot=False),
        lambda T, a: T.lu(a[0, 0]),
        lambda T, a: T.lu(a.long()),
        lambda T, a: T.lu_unpack(a, T.ones(3, dtype=T.long)),
        lambda T, a: T.lu_solve(a[0, 0], *T.lu(a)),
        lambda T, a: T.triangular_solve(a, a.int()),
        lambda T, a: T.triangular_solve(a[0, 0], a),
        lambda T, a: T.triangular_solve(a[:, :2], a),
        lambda T, a: T.geqrf(a[0, 0]),
        lambda T, a: T.orgqr(a.mT[:, :2], a[:, 0]),
        lambda T, a: T.ormqr(a, a[:, 0], a[:, :2]),
        lambda T, a: T.frobenius_norm(a, (0, 1, 2)),
    ],
)
def test_legacy_linalg_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(torch, torch.tensor(A.tolist()))
        with pytest.raises(type(theirs.value)) as ours:
            call(c, c.tensor(A.tolist()))
    assert str(ours.value) == str(theirs.value)
