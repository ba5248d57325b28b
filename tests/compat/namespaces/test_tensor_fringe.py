"""The fringe of torch.Tensor's methods answers as torch does for a CPU float
tensor: other devices' queries, deprecated and removed methods, dim_order; the
quantized, complex and sparse ones are refused by name (or with torch's own
error where torch has one for a dense tensor)."""

import warnings

import numpy as np
import pytest

import jaxblitz.compat as ct
from jaxblitz.compat._not_offered import NotOffered

pt = pytest.importorskip("torch")


def _both(shape=(2, 3)):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return ct.tensor(data), pt.tensor(data)


def _answer(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except Exception as e:  # noqa: BLE001 -- the error is the answer
            value = (type(e).__name__, str(e))
    if hasattr(value, "tolist"):
        value = (tuple(value.shape), value.tolist())
    return value, [str(w.message) for w in caught]


DEVICES = ("xpu", "mps", "xla", "ipu", "maia", "mtia", "vulkan")
ANSWERS = {
    "devices": lambda x: [
        getattr(x, f"is_{d}")
        for d in ["xpu", "mps", "xla", "ipu", "maia", "mtia", "vulkan"]
    ],
    "is_sparse_csr": lambda x: x.is_sparse_csr,
    "is_distributed": lambda x: x.is_distributed(),
    "ipu": lambda x: x.ipu(),
    "xpu": lambda x: x.xpu(),
    "mtia": lambda x: x.mtia(),
    "record_stream": lambda x: x.record_stream(None),
    "const_data_ptr": lambda x: x.const_data_ptr() == x.data_ptr(),
    "is_set_to self": lambda x: x.is_set_to(x),
    "is_set_to view": lambda x: x.is_set_to(x.view(2, 3)),
    "is_set_to t": lambda x: x.is_set_to(x.t()),
    "is_set_to slice": lambda x: x.is_set_to(x[1:]),
    "is_set_to clone": lambda x: x.is_set_to(x.clone()),
    "resize": lambda x: x.resize(3, 2),
    "resize bad": lambda x: x.resize(4, 2),
    "resize_as": lambda x: x.resize_as(x.t()),
    "resize of t": lambda x: x.t().resize(6),
    "volatile": lambda x: x.volatile,
    "reinforce": lambda x: x.reinforce(1.0),
    "name": lambda x: x.name,
    "grad_dtype": lambda x: str(x.grad_dtype),
    "grad_dtype non-leaf": lambda x: x.requires_grad_()[0].grad_dtype,
    "module_load": lambda x: x.module_load(x * 2),
    "module_load assign": lambda x: x.module_load(x * 3, assign=True),
    "dequantize": lambda x: x.dequantize() is x,
    "smm": lambda x: x.smm(x.t()),
    "sspaddmm": lambda x: x.sspaddmm(x, x.t()),
    "dim_order": lambda x: x.dim_order(),
    "dim_order t": lambda x: x.t().dim_order(),
    "dim_order bad": lambda x: x.dim_order(ambiguity_check=3),
}


@pytest.mark.parametrize("what", ANSWERS)
def test_each_answers_as_torchs(what):
    ours, theirs = _both()
    assert _answer(lambda: ANSWERS[what](ours)) == _answer(
        lambda: ANSWERS[what](theirs)
    )


@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((2, 3, 4, 5), (0, 2, 3, 1)),
        ((2, 3, 4, 5), (3, 2, 1, 0)),
        ((1, 3, 1, 5), (0, 2, 3, 1)),
        ((2, 2, 2), (1, 0, 2)),
        ((4, 1), (1, 0)),
    ],
)
def test_dim_order_sorts_and_checks_ambiguity_as_torchs(shape, perm):
    ours, theirs = _both(shape)
    for check in (False, True, "formats"):
        answers = []
        for x, mod in ((ours.permute(*perm), ct), (theirs.permute(*perm), pt)):
            arg = check if check != "formats" else [mod.channels_last]
            answers.append(
                _answer(lambda x=x, arg=arg: x.dim_order(ambiguity_check=arg))
            )
        assert answers[0] == answers[1]


def test_resize_has_a_gradient_back_to_the_old_shape():
    x = ct.ones(2, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(3, 2)
    (y * ct.arange(6.0).view(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("q_scale", "quantized tensors"),
        ("int_repr", "quantized tensors"),
        ("qscheme", "quantized tensors"),
        ("cfloat", "complex dtypes"),
        ("chalf", "complex dtypes"),
        ("stft", "complex dtypes"),
        ("istft", "complex dtypes"),
        ("sparse_mask", "sparse tensors"),
        ("sparse_resize_", "sparse tensors"),
        ("to_padded_tensor", "nested"),
        ("storage_type", "typed storages"),
        ("set_", "another storage"),
        ("index", "first-class dimensions"),
    ],
)
def test_the_quantized_complex_and_sparse_ones_are_refused_by_name(name, why):
    x = ct.ones(2, 3)
    assert hasattr(pt.Tensor, name)
    with pytest.raises(NotOffered, match=f"Tensor.{name} is not supported.*{why}"):
        getattr(x, name)(x)


def test_record_stream_takes_a_stream():
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        ct.ones(1).record_stream(None)
