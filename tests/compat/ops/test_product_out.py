"""The matrix products' ``out=`` against real PyTorch: the result written into
``out`` (resized when empty), and each kernel's refusal of an ``out`` of another
dtype (the exact-dtype kernels' words, or the casting rule of outer, addr and
kron)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
SHAPES = {"a": (2, 3), "b": (3, 4), "v": (3,), "B": (5, 2, 3), "C": (5, 3, 4)}
ARRAYS = {k: _rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}

CASES = {
    "mm": (lambda t, x, o: t.mm(x["a"], x["b"], out=o), (2, 4)),
    "bmm": (lambda t, x, o: t.bmm(x["B"], x["C"], out=o), (5, 2, 4)),
    "addmm": (lambda t, x, o: t.addmm(t.ones(2, 4), x["a"], x["b"], out=o), (2, 4)),
    "matmul": (lambda t, x, o: t.matmul(x["a"], x["b"], out=o), (2, 4)),
    "mv": (lambda t, x, o: t.mv(x["a"], x["v"], out=o), (2,)),
    "dot": (lambda t, x, o: t.dot(x["v"], x["v"], out=o), ()),
    "vdot": (lambda t, x, o: t.vdot(x["v"], x["v"], out=o), ()),
    "baddbmm": (
        lambda t, x, o: t.baddbmm(t.ones(5, 2, 4), x["B"], x["C"], beta=2, out=o),
        (5, 2, 4),
    ),
    "addbmm": (lambda t, x, o: t.addbmm(t.ones(2, 4), x["B"], x["C"], out=o), (2, 4)),
    "addmv": (lambda t, x, o: t.addmv(t.ones(2), x["a"], x["v"], out=o), (2,)),
    "addr": (lambda t, x, o: t.addr(t.ones(3, 3), x["v"], x["v"], out=o), (3, 3)),
    "outer": (lambda t, x, o: t.outer(x["v"], x["v"], out=o), (3, 3)),
    "kron": (lambda t, x, o: t.kron(x["a"], x["b"], out=o), (6, 12)),
}
OUTS = {
    "same": lambda t, shape: t.empty(shape),
    "empty": lambda t, shape: t.empty(0),
    "float64": lambda t, shape: t.empty(shape, dtype=t.float64),
    "int64": lambda t, shape: t.empty(shape, dtype=t.int64),
}


def _run(lib, name, out_kind):
    fn, shape = CASES[name]
    xs = {k: lib.tensor(v) for k, v in ARRAYS.items()}
    out = OUTS[out_kind](lib, shape)
    try:
        result = fn(lib, xs, out)
    except RuntimeError as e:
        return e
    assert result is out
    return out


@pytest.mark.parametrize("out_kind", list(OUTS))
@pytest.mark.parametrize("name", list(CASES))
def test_product_into_out_is_torchs(name, out_kind):
    want, got = _run(torch, name, out_kind), _run(compat, name, out_kind)
    if isinstance(want, Exception):
        assert isinstance(got, RuntimeError)
        assert str(got) == str(want)
        return
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
