"""torch.einsum's whole notation: ellipses, the sublist format, whitespace, and
torch's errors; values and gradients against torch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

CASES = [
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]),
    ("b...d,b...d->b...", [(2, 1, 5, 3), (2, 4, 1, 3)]),
    ("...j,j...->...", [(2, 3), (3, 2)]),
    ("i...->...", [(2, 3, 4)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_einsum_with_ellipses_and_spaces_as_torchs(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for lib in (torch, compat):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(equation, *xs)
        (
            out
            * lib.tensor(np.arange(out.numel(), dtype=np.float32)).reshape(out.shape)
        ).sum().backward()
        results.append([out.detach().numpy(), *(x.grad.numpy() for x in xs)])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_sublist_format_as_torchs():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    for args in (([0, 1, 2], [2, 3], [0, 1, 3]), ([Ellipsis, 2], [2, 3])):
        want = torch.einsum(torch.tensor(a), args[0], torch.tensor(b), *args[1:])
        got = compat.einsum(compat.tensor(a), args[0], compat.tensor(b), *args[1:])
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_einsum_errors_are_torchs():
    x, y = compat.ones(2, 3), compat.ones(3, 4)
    for bad in ("ij..,jk", "i.j,jk"):
        with pytest.raises(RuntimeError, match="not part of any ellipsis"):
            compat.einsum(bad, x, y)
    with pytest.raises(ValueError, match=r"valid range \[0, 52\)"):
        compat.einsum(x, [0, 60], y, [60, 2])


DTYPE_CASES = [
    ("ij,kl->ijkl", ["float32", "float64"]),  # nothing summed: a promoting mul
    ("ij,ij->ij", ["float16", "bool"]),
    ("ij,j->ij", ["float64", "float32"]),
    ("ij,jk,kl->ijkl", ["int32", "float32", "float64"]),
    ("ij,jk", ["float32", "float64"]),  # a contraction: bmm, one dtype only
    ("ij,ij->", ["float32", "float64"]),
    ("ij,jk", ["float32", "bool"]),
    ("ij,jk", ["bool", "float32"]),
    ("ij,jk", ["bool", "bool"]),
    ("ij,jk", ["int32", "int32"]),
    ("ij->", ["int32"]),  # one operand: a sum, bool and ints give int64
    ("ij->i", ["bool"]),
    ("ii->i", ["bool"]),
    ("ij->ji", ["int32"]),
]


@pytest.mark.parametrize(("equation", "dtypes"), DTYPE_CASES)
def test_einsum_mixed_dtypes_promote_or_refuse_as_torchs(equation, dtypes):
    terms = equation.split("->")[0].split(",")
    arrays = [
        np.arange(1, 2 ** len(t) + 1).reshape((2,) * len(t)).astype(d)
        for t, d in zip(terms, dtypes, strict=True)
    ]
    try:
        want = torch.einsum(equation, *(torch.tensor(a) for a in arrays))
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as got:
            compat.einsum(equation, *(compat.tensor(a) for a in arrays))
        assert str(got.value) == str(e)
        return
    got = compat.einsum(equation, *(compat.tensor(a) for a in arrays))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
