"""compat's in-place ``name_`` methods and ``x op= y`` operators against real
PyTorch: the same values, the dtype kept, and the same error type where torch
refuses to write the result back (a float result into an integer tensor)."""

import numpy as np
import pytest

import jaxblitz.compat as compat
from jaxblitz.compat.ops.inplace import ELEMENTWISE

torch = pytest.importorskip("torch")

A = np.array([[0.25, 0.5, 0.75], [0.1, 0.6, 0.9]], dtype=np.float32)
B = np.array([[1.5, 2.0, 3.0], [2.5, 1.25, 4.0]], dtype=np.float32)
C = np.array([[0.5, 1.0, 2.0], [3.0, 0.5, 1.5]], dtype=np.float32)
IA = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
J = np.array([[1, 3, 2], [2, 1, 3]], dtype=np.int64)

# extra arguments per op (a key of ARRAYS, or a number)
ARGS = {
    "lerp": ("B", 0.25),
    "addcmul": ("B", "C"),
    "addcdiv": ("B", "C"),
    "clamp": (0.3, 0.7),
    "clip": (0.3, 0.7),
    "clamp_min": (0.3,),
    "clamp_max": (0.7,),
    "cumsum": (1,),
    "cumprod": (1,),
}
ARRAYS = {"B": B, "C": C}
BINARY = set(
    [
        "add",
        "sub",
        "subtract",
        "mul",
        "multiply",
        "div",
        "divide",
        "true_divide",
        "floor_divide",
        "fmod",
        "remainder",
        "pow",
        "logical_and",
        "logical_or",
        "logical_xor",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "eq",
        "ne",
        "not_equal",
        "lt",
        "less",
        "le",
        "less_equal",
        "gt",
        "greater",
        "ge",
        "greater_equal",
    ]
)
INTEGER_ONLY = {n for n in ELEMENTWISE if n.startswith("bitwise")}


def _args(lib, name, ints):
    if name in BINARY:
        return (lib.tensor(J if ints else B),)
    args = ARGS.get(name, ())
    if name == "addmm":
        return (lib.tensor(A[:, :2].copy()), lib.tensor(B[:2].copy()))
    return tuple(lib.tensor(ARRAYS[a]) if isinstance(a, str) else a for a in args)


def _run(lib, name, ints):
    x = lib.tensor(IA.copy() if ints else A.copy())
    if name == "addmm":
        x = lib.tensor(np.ones((2, 3), np.float32))
    try:
        out = getattr(x, name + "_")(*_args(lib, name, ints))
    except Exception as e:  # noqa: BLE001 -- the error type is compared
        return type(e)
    assert out is x
    return x


@pytest.mark.parametrize("ints", [False, True], ids=["float32", "int64"])
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_inplace_method_matches_torch(name, ints):
    if name in INTEGER_ONLY and not ints:
        pytest.skip("torch's bitwise ops take integers")
    if name == "addmm" and ints:
        pytest.skip("one float case is enough")
    want, got = _run(torch, name, ints), _run(compat, name, ints)
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, (want, NotImplementedError))
        return
    assert not isinstance(got, type), f"compat raised {got}"
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-6)


OPERATORS = {
    "__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__",
    "__itruediv__": "__truediv__", "__ifloordiv__": "__floordiv__",
    "__imod__": "__mod__", "__ipow__": "__pow__", "__iand__": "__and__",
    "__ior__": "__or__", "__ixor__": "__xor__", "__ilshift__": "__lshift__",
    "__irshift__": "__rshift__",
}  # fmt: skip


@pytest.mark.parametrize("op", OPERATORS)
def test_augmented_assignment_matches_torch(op):
    results = []
    for lib in (torch, compat):
        x = lib.tensor(IA.copy())
        try:
            out = getattr(x, op)(lib.tensor(J))
            assert out is x
            results.append(x.numpy() if lib is torch else np.asarray(x))
        except Exception as e:  # noqa: BLE001
            results.append(type(e))
    want, got = results
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want)
    else:
        np.testing.assert_array_equal(got, want)
