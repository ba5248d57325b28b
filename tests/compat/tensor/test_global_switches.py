"""compat's small torch.* functions against PyTorch: is_inference,
typename, set_warn_always / is_warn_always_enabled, is_storage,
set_flush_denormal and the deprecated set_default_tensor_type."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")


def test_tensors_made_in_inference_mode_are_inference_tensors_as_torch():
    def run(T):
        x = T.ones(2)
        with T.inference_mode():
            made, computed, view = T.ones(2), x * 2, x[0]
            with T.inference_mode(False):
                outside = T.ones(2)
        kinds = (made, computed, view, outside, x, made[1:])
        return [t.is_inference() for t in kinds] + [T.is_inference(made)]

    assert run(c) == run(torch) == [True, True, False, False, False, True, True]


def test_is_inference_wants_a_tensor():
    with pytest.raises(TypeError) as theirs:
        torch.is_inference(3)
    with pytest.raises(TypeError) as ours:
        c.is_inference(3)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.ones(2),
        lambda T: T.ones(2, dtype=T.int64),
        lambda T: T.ones(2, dtype=T.uint8),
        lambda T: 3,
        lambda T: "a",
        lambda T: np.ones(1),
        lambda T: T.nn.Parameter(T.ones(2)),
        lambda T: int,
    ],
)
def test_typename_matches_torch(make):
    assert c.typename(make(c)) == torch.typename(make(torch))


def test_typename_of_a_module_names_compats_class():
    assert c.typename(c.nn.Linear(1, 1)).endswith(".Linear")


def test_set_warn_always_switches_as_torch():
    assert c.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    c.set_warn_always(True)
    try:
        assert c.is_warn_always_enabled() is True
    finally:
        c.set_warn_always(False)
    for bad in (1, "a"):
        with pytest.raises(RuntimeError) as theirs:
            torch.set_warn_always(bad)
        with pytest.raises(RuntimeError) as ours:
            c.set_warn_always(bad)
        assert str(ours.value) == str(theirs.value)


def test_is_storage_matches_torch():
    for lib in (torch, c):
        x = lib.ones(2)
        assert lib.is_storage(x.untyped_storage()) is True
        assert lib.is_storage(x) is False
        assert lib.is_storage([1]) is False


def test_set_flush_denormal_answers_what_compat_does():
    # XLA's CPU programs flush denormals to zero: the mode is always on
    assert c.set_flush_denormal(True) is True
    assert (c.tensor([1e-40]) * 1.0).item() == 0.0
    assert c.set_flush_denormal(False) is False
    with pytest.raises(TypeError):
        c.set_flush_denormal(1)


@pytest.mark.parametrize(
    "kind",
    [
        lambda T: T.DoubleTensor,
        lambda T: "torch.DoubleTensor",
        lambda T: T.HalfTensor,
        lambda T: "torch.BFloat16Tensor",
        lambda T: T.FloatTensor,
    ],
)
def test_set_default_tensor_type_sets_the_default_dtype_and_warns_as_torch(kind):
    def run(T):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            T.set_warn_always(True)  # the warning is torch's TORCH_WARN_ONCE
            try:
                T.set_default_tensor_type(kind(T))
                made = (T.get_default_dtype(), T.tensor([1.5]).dtype)
            finally:
                T.set_default_dtype(T.float32)
                T.set_warn_always(False)
        return [str(d) for d in made], [
            str(w.message).split(" (Triggered")[0] for w in seen
        ]

    assert run(c) == run(torch)


@pytest.mark.parametrize(
    "kind",
    [
        lambda T: T.LongTensor,
        lambda T: "torch.LongTensor",
        lambda T: T.float64,
        lambda T: "foo",
        lambda T: "torch.NoSuchTensor",
    ],
)
def test_bad_default_tensor_types_raise_torch_errors(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            torch.set_default_tensor_type(kind(torch))
        with pytest.raises(theirs.type) as ours:
            c.set_default_tensor_type(kind(c))
    assert str(ours.value) == str(theirs.value)
    assert c.get_default_dtype() == c.float32


def test_a_cuda_default_tensor_type_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="set_default_device"):
        c.set_default_tensor_type("torch.cuda.FloatTensor")
