"""Python's ``float``, ``int`` and ``bool`` given where torch takes a dtype, against
real PyTorch: its parser reads them as double, long and bool (``float`` is a
double whatever the default dtype), ``Tensor.to`` takes them too, and
``Tensor.type`` refuses them."""

from __future__ import annotations

import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

CALLS = {
    "zeros": lambda lib, t: lib.zeros(2, dtype=t),
    "tensor": lambda lib, t: lib.tensor([1, 0], dtype=t),
    "new_ones": lambda lib, t: lib.zeros(2).new_ones(2, dtype=t),
    "to": lambda lib, t: lib.zeros(2).to(t),
    "to dtype=": lambda lib, t: lib.zeros(2).to(dtype=t),
    "to device, type": lambda lib, t: lib.zeros(2).to("cpu", t),
    "full": lambda lib, t: lib.full((2,), 1, dtype=t),
}


@pytest.mark.parametrize("kind", [float, int, bool], ids=lambda t: t.__name__)
@pytest.mark.parametrize("call", CALLS)
def test_a_python_type_as_dtype_is_torchs_dtype(call, kind):
    want = CALLS[call](torch, kind)
    got = CALLS[call](compat, kind)
    assert str(got.dtype) == str(want.dtype)
    assert got.tolist() == want.tolist()


def test_float_is_a_double_whatever_the_default_dtype():
    compat.set_default_dtype(compat.float64)
    try:
        assert compat.zeros(2, dtype=float).dtype is compat.float64
    finally:
        compat.set_default_dtype(compat.float32)
    assert compat.zeros(2, dtype=float).dtype is compat.float64


@pytest.mark.parametrize("kind", [float, int, bool], ids=lambda t: t.__name__)
def test_type_refuses_a_python_type_as_torch(kind):
    with pytest.raises(ValueError) as want:
        torch.zeros(2).type(kind)
    with pytest.raises(ValueError) as got:
        compat.zeros(2).type(kind)
    assert str(got.value) == str(want.value)
