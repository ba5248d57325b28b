"""What scripts print and infer without thinking about it, against torch:
``f"{loss}"`` of a 0-d tensor, a ``grad_fn=`` suffix's wrap, slices of a
``torch.Size``, and ``torch.tensor`` of NumPy scalars (an environment's rewards)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _formatted(lib):
    x = lib.tensor(0.123456789)
    y = lib.tensor(2.5, requires_grad=True) * 2
    out = [f"{x}", f"{x:.3f}", f"{y}", f"{y:.2f}", f"{lib.tensor(3)}"]
    out += [f"{lib.tensor(True)}", f"{lib.tensor([1.5])}", format(x)]
    out += [
        f"{lib.tensor(7, dtype=lib.uint8)}",
        f"{lib.tensor(1.5, dtype=lib.float16)}",
    ]
    out.append(f"{lib.nn.Parameter(lib.tensor(1.5))}")
    return out


def test_a_zero_dim_tensor_formats_as_its_python_number():
    assert _formatted(compat) == _formatted(torch)
    assert _formatted(compat)[0] == "0.12345679104328156"


@pytest.mark.parametrize(
    "make", [lambda lib: lib.tensor([1.5]), lambda lib: lib.nn.Parameter(lib.ones(()))]
)
def test_a_format_spec_for_a_tensor_with_dims_or_a_parameter_is_refused(make):
    with pytest.raises(TypeError) as theirs:
        f"{make(torch):.2f}"
    with pytest.raises(TypeError) as ours:
        f"{make(compat):.2f}"
    assert str(ours.value) == str(theirs.value)


def _reprs(lib):
    w = lib.ones(5, requires_grad=True)
    out = []
    for n in range(1, 9):
        t = (lib.arange(n, dtype=lib.float32) * 1.1234 - 2) * w[:1]
        out += [repr(t), repr(t.double()), repr((t,))]
    out.append(repr(lib.arange(12.0).view(3, 4) * w[:4] / 3))
    return out


def test_a_suffix_wraps_at_the_line_width_counting_the_prefix():
    ours, theirs = _reprs(compat), _reprs(torch)
    assert ours == theirs
    assert "-1.0909],\n       grad_fn=" in repr(
        compat.tensor([[-0.019, 1.1727, 1.2687, 0.1808, -1.0909]], requires_grad=True)[
            0
        ]
    )


def _sizes(lib):
    s = lib.zeros(1, 3, 7, 5).shape
    out = [s[2:], s[::-1], s[9:], s + (4,), (4,) + s, s * 2, 2 * s, s[1], s + ()]
    return [(repr(v), type(v).__name__) for v in out]


def test_slices_sums_and_repeats_of_a_size_are_sizes():
    assert _sizes(compat) == _sizes(torch)
    for bad in (lambda s: s + [4], lambda s: s + (4.5,), lambda s: (4.5,) + s):
        with pytest.raises(TypeError) as theirs:
            bad(torch.Size([1, 2]))
        with pytest.raises(TypeError) as ours:
            bad(compat.Size([1, 2]))
        assert str(ours.value) == str(theirs.value)


DATA = [
    [np.float64(1.5), np.float64(2.5)],
    [np.float64(1.5), 2],
    [np.float32(1.5), 2.5],
    [2.5, np.float32(1.5)],
    [np.float16(1.5)],
    [np.float16(1.5), 1],
    [np.float16(1), 2.5],
    [np.int32(1), 2],
    [np.int32(1)],
    [np.int64(1), 2.0],
    [[np.uint8(1), np.int8(2)]],
    [np.bool_(True), False],
    [True, 1],
    [[1, 2], [3, 4]],
    [],
]


@pytest.mark.parametrize("data", DATA, ids=repr)
def test_tensor_promotes_its_elements_dtypes_as_torch_does(data):
    ours, theirs = compat.tensor(data), torch.tensor(data)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.tolist() == theirs.tolist()


def test_a_list_of_tensors_keeps_the_wider_dtype():
    def make(lib):
        return lib.tensor([lib.tensor(1.5, dtype=lib.float64), 2]).dtype

    assert str(make(compat)) == str(make(torch)) == "torch.float64"
