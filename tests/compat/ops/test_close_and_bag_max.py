"""compat against PyTorch for allclose (isclose's rules: dtypes, broadcasting,
integers, tolerance and argument errors) and for embedding_bag's max over NaN,
-inf and ties (the row ATen's kernel keeps, its value and its gradient)."""

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _outcome(lib, call):
    try:
        return call(lib)
    except (RuntimeError, TypeError) as e:
        return type(e), str(e).splitlines()[0]


CLOSE_CALLS = {
    "nan_unequal": lambda T: T.allclose(T.tensor([1.0, NAN]), T.tensor([1.0, NAN])),
    "nan_equal": lambda T: T.allclose(
        T.tensor([1.0, NAN]), T.tensor([1.0, NAN]), equal_nan=True
    ),
    "infinities": lambda T: T.allclose(T.tensor([INF]), T.tensor([-INF])),
    "float_double": lambda T: T.allclose(
        T.tensor([1.0]), T.tensor([1.0], dtype=T.float64)
    ),
    "long_float": lambda T: T.allclose(T.tensor([1]), T.tensor([1.0])),
    "long_int": lambda T: T.allclose(T.tensor([1]), T.tensor([1], dtype=T.int32)),
    "half_bfloat16": lambda T: T.allclose(
        T.tensor([1.0], dtype=T.float16), T.tensor([1.0], dtype=T.bfloat16)
    ),
    "longs_exact": lambda T: T.allclose(
        T.tensor([2**53 + 1]), T.tensor([2**53]), rtol=0, atol=0
    ),
    "longs_as_floats": lambda T: T.allclose(
        T.tensor([2**53 + 1]), T.tensor([2**53]), rtol=1e-20, atol=0
    ),
    "uint8_atol": lambda T: T.allclose(
        T.tensor([2], dtype=T.uint8), T.tensor([1], dtype=T.uint8), atol=0.5
    ),
    "bools": lambda T: T.allclose(
        T.tensor([True, False]), T.tensor([True, True]), atol=1
    ),
    "broadcast": lambda T: T.allclose(T.ones(2, 3), T.ones(3)),
    "broadcast_error": lambda T: T.allclose(T.ones(2, 3), T.ones(2)),
    "empty_error": lambda T: T.allclose(T.ones(0), T.ones(3)),
    "negative_rtol": lambda T: T.allclose(T.ones(1), T.ones(1), rtol=-1),
    "negative_atol": lambda T: T.allclose(T.ones(1), T.ones(1), atol=-1),
    "number_other": lambda T: T.allclose(T.ones(1), 1.0),
    "number_input": lambda T: T.allclose(1.0, T.ones(1)),
    "str_rtol": lambda T: T.allclose(T.ones(1), T.ones(1), rtol="a"),
    "int_equal_nan": lambda T: T.allclose(T.ones(1), T.ones(1), equal_nan=1),
    "half_rounding": lambda T: T.allclose(
        T.tensor([1.0], dtype=T.float16), T.tensor([1.0004], dtype=T.float16)
    ),
    "isclose_str_atol": lambda T: T.isclose(T.ones(1), T.ones(1), atol="a"),
}


@pytest.mark.parametrize("case", sorted(CLOSE_CALLS))
@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
def test_allclose_answers_or_refuses_as_torch(case, mode, request):
    request.getfixturevalue(mode)
    want = _outcome(torch, CLOSE_CALLS[case])
    got = _outcome(compat, CLOSE_CALLS[case])
    assert got == want
    assert type(got) is type(want)


def test_allclose_is_a_method_with_torchs_tolerances():
    x = compat.tensor([1.0])
    assert x.allclose(compat.tensor([1.0001]), rtol=1e-3)
    assert not x.allclose(compat.tensor([1.0001]))


W = [
    [1.0, NAN, -INF, 2.0],
    [NAN, 3.0, -INF, 2.0],
    [0.5, 0.5, -INF, NAN],
    [NAN, NAN, NAN, NAN],
    [1.0, 3.0, 0.5, 2.0],
]
BAGS = [
    ([0, 1, 2], [0]),
    ([1, 0, 2], [0]),
    ([2, 1, 0], [0]),
    ([3, 0], [0]),
    ([0, 3], [0]),
    ([4, 1, 4, 0], [0, 1]),
    ([0, 1, 2, 3, 4], [0, 2, 2]),
]


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize(("indices", "offsets"), BAGS)
def test_embedding_bag_max_keeps_atens_row_value_and_gradient(
    indices, offsets, mode, request
):
    request.getfixturevalue(mode)
    results = []
    for T in (torch, compat):
        w = T.tensor(W, requires_grad=True)
        i, o = T.tensor(indices), T.tensor(offsets)
        out = T.nn.functional.embedding_bag(i, w, o, mode="max")
        out.sum().backward()
        rows = T.embedding_bag(w.detach(), i, o, False, 2)[3]
        results.append([out.detach().numpy(), w.grad.numpy(), rows.numpy()])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag_max_gives_a_tie_wholly_to_its_first_row(padding_idx):
    w = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 0.0]], np.float32)
    grads = []
    for T in (torch, compat):
        weight = T.tensor(w, requires_grad=True)
        out = T.nn.functional.embedding_bag(
            T.tensor([[1, 0, 2], [2, 1, 0]]),
            weight,
            mode="max",
            padding_idx=padding_idx,
        )
        (out * T.tensor([[1.0, 10.0], [100.0, 1000.0]])).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
