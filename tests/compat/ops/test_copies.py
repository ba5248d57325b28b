"""compat's ``*_copy`` functions (view_copy, permute_copy, select_copy, ...)
against PyTorch: values, shapes, contiguous fresh memory, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

CALLS = {
    "view_copy": lambda T, x: T.view_copy(x.transpose(0, 1), [-1, 4]),
    "permute_copy": lambda T, x: T.permute_copy(x, (2, 0, 1)),
    "expand_copy": lambda T, x: T.expand_copy(x[:, :1], size=[-1, 5, -1]),
    "t_copy": lambda T, x: T.t_copy(x[0]),
    "transpose_copy": lambda T, x: T.transpose_copy(x, 0, 2),
    "unsqueeze_copy": lambda T, x: T.unsqueeze_copy(x, -1),
    "squeeze_copy": lambda T, x: T.squeeze_copy(x[:, :1], (0, 1)),
    "select_copy": lambda T, x: T.select_copy(x, 1, -1),
    "slice_copy": lambda T, x: T.slice_copy(x, 2, -3, None, 2),
    "split_copy": lambda T, x: T.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda T, x: T.split_with_sizes_copy(x, [1, 2], dim=1),
    "unbind_copy": lambda T, x: T.unbind_copy(x, 1),
    "unfold_copy": lambda T, x: T.unfold_copy(x, -1, 2, 1),
    "diagonal_copy": lambda T, x: T.diagonal_copy(x, 1, dim1=1, dim2=2),
    "alias_copy": lambda T, x: T.alias_copy(x),
    "as_strided_copy": lambda T, x: T.as_strided_copy(x, (2, 2), (1, 2), 1),
}


def _run(T, call):
    x = T.tensor(X.tolist(), requires_grad=True)
    out = call(T, x)
    outs = out if isinstance(out, tuple) else (out,)
    sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
    return x, outs


@pytest.mark.parametrize("name", list(CALLS))
def test_copy_matches_torch_values_strides_and_gradient(name):
    tx, theirs = _run(torch, CALLS[name])
    cx, ours = _run(c, CALLS[name])
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours, strict=True):
        assert tuple(b.shape) == tuple(a.shape)
        assert b.stride() == a.stride() and b.is_contiguous()
        np.testing.assert_allclose(b.tolist(), a.tolist())
        assert b.grad_fn.name() == a.grad_fn.name()
    np.testing.assert_allclose(cx.grad.tolist(), tx.grad.tolist())


def test_copy_shares_no_memory_with_its_input():
    x = c.arange(6.0).view(2, 3)
    y = c.permute_copy(x, (1, 0))
    y[0, 0] = 100.0
    assert x[0, 0].item() == 0.0
    z = c.alias_copy(x)
    z.add_(1)
    assert x.sum().item() == 15.0


def test_view_copy_of_a_dtype_reinterprets_bits():
    theirs = torch.view_copy(torch.tensor([1.0, -2.0]), torch.int32)
    ours = c.view_copy(c.tensor([1.0, -2.0]), c.int32)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.tolist() == theirs.tolist()


def test_detach_copy_is_a_detached_copy_and_refuses_a_grad_input():
    x = c.ones(2)
    assert c.detach_copy(x).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="detach_copy"):
        c.detach_copy(c.ones(2, requires_grad=True))
    with c.no_grad():
        assert not c.detach_copy(c.ones(2, requires_grad=True)).requires_grad


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.view_copy(x, (5,)),
        lambda T, x: T.t_copy(x),
        lambda T, x: T.select_copy(x, 0, 5),
        lambda T, x: T.slice_copy(x, 2, 1, 3, 0),
        lambda T, x: T.split_copy(x, 0),
        lambda T, x: T.split_copy(x, [1, 2], 1),
        lambda T, x: T.permute_copy(x, 2, 0, 1),
        lambda T, x: T.values_copy(x),
        lambda T, x: T.indices_copy(x),
        lambda T, x: T.crow_indices_copy(x),
        lambda T, x: T.ccol_indices_copy(x),
    ],
)
def test_copy_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(X.tolist()))
    with pytest.raises(type(theirs.value)) as ours:
        call(c, c.tensor(X.tolist()))
    if type(theirs.value) is not TypeError:
        assert str(ours.value) == str(theirs.value)
