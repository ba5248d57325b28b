"""Where compat makes tensors, as PyTorch does: on the CPU unless a ``device=``
argument, ``torch.set_default_device`` or ``.to(...)`` says otherwise, and
PyTorch's errors for ops on two devices.

No GPU here: the decisions are unit-tested (devices given as ``torch.device``s),
and the ops' wiring with an accelerator process simulated (JAX's CPU device as
compat's home, the tensors' devices read from a table)."""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
from jaxblitz.compat.tensor import _dtype
from jaxblitz.compat.tensor._tensor_base import TensorBase

CPU, CUDA0, CUDA1 = torch.device("cpu"), torch.device("cuda:0"), torch.device("cuda:1")
SAME = "Expected all tensors to be on the same device"


@pytest.fixture(autouse=True)
def cpu_default():
    torch.set_default_device(None)
    yield
    torch.set_default_device(None)


# -- on this CPU machine, against PyTorch ----------------------------------------


def test_a_new_tensor_prints_as_pytorchs_and_lives_on_the_cpu():
    real = pytest.importorskip("torch")
    x = torch.tensor([5.5, 3])
    assert repr(x) == repr(real.tensor([5.5, 3])) == "tensor([5.5000, 3.0000])"
    assert x.device == CPU
    assert repr(x.device) == repr(real.tensor([5.5, 3]).device)
    assert not x.is_cuda and x.get_device() == -1


def test_the_default_device_is_the_cpu_until_set():
    real = pytest.importorskip("torch")
    assert repr(torch.get_default_device()) == repr(real.get_default_device())
    torch.set_default_device("cpu")
    assert repr(torch.get_default_device()) == "device(type='cpu')"
    torch.set_default_device(None)
    assert torch.get_default_device() == CPU


def test_the_default_device_is_per_thread_as_in_pytorch():
    torch.set_default_device("cuda:1")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_default_device()))
    thread.start()
    thread.join()
    assert seen == [CPU]
    assert torch.get_default_device() == CUDA1


def test_a_device_block_is_the_default_device_inside_it():
    torch.set_default_device("cuda:1")
    with torch.device("cpu"):
        assert torch.get_default_device() == CPU
        assert torch.zeros(2).device == CPU
    assert torch.get_default_device() == CUDA1


def test_a_cuda_default_device_without_a_gpu_raises_pytorchs_error():
    real = pytest.importorskip("torch")
    if real.cuda.is_available() or real.version.cuda is not None:
        pytest.skip("the spec is PyTorch's CPU build")
    errors = []
    for t in (real, torch):
        t.set_default_device("cuda")
        try:
            with pytest.raises(AssertionError) as caught:
                t.get_default_device()
        finally:
            t.set_default_device(None)
        errors.append(str(caught.value).split(" (jaxblitz")[0])
    assert errors[1] == errors[0] == "Torch not compiled with CUDA enabled"
    torch.set_default_device("cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA"):
        torch.zeros(2)


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_tensors_made_from_others_keep_their_device_as_in_pytorch():
    real = pytest.importorskip("torch")

    def devices(t):
        x = t.ones(2, 3)
        return [
            str(d)
            for d in (
                t.zeros_like(x).device,
                t.full_like(x, 2.0).device,
                x.new_ones(2).device,
                x.new_full((2,), 1.0).device,
                x.new_tensor([1.0]).device,
                t.tensor(x).device,
                t.as_tensor(x).device,
                t.from_numpy(np.ones(2)).device,
            )
        ]

    assert devices(torch) == devices(real) == ["cpu"] * 8


def test_moving_to_the_cpu_a_tensor_on_the_cpu_gives_the_tensor_itself():
    real = pytest.importorskip("torch")
    for t in (real, torch):
        x = t.ones(2)
        assert x.to("cpu") is x and x.cpu() is x and x.to(x) is x
        assert x.type() == "torch.FloatTensor"


def test_a_cuda_tensor_asked_for_without_a_gpu_is_refused_as_pytorch_refuses_it():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.zeros(2, device="cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.ones(2).cuda(0)


# -- the decisions, devices given ------------------------------------------------


def test_a_factory_call_uses_its_device_argument_else_the_default_device():
    assert _dtype.factory_device() == CPU
    assert _dtype.factory_device("cuda:1") == CUDA1
    torch.set_default_device("cuda:1")
    assert _dtype.factory_device() == CUDA1
    assert _dtype.factory_device("cpu") == CPU


def test_a_cpu_tensor_is_left_uncommitted_and_only_an_accelerators_is_placed():
    assert _dtype.placement(CPU) is None
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA"):
        _dtype.placement(CUDA0)  # a GPU's device, where JAX has one


def test_an_elementwise_op_on_cuda_and_cpu_raises_pytorchs_error():
    msg = f"{SAME}, but found at least two devices, cuda:0 and cpu!"
    for found in ([(CUDA0, 1), (CPU, 1)], [(CPU, 2), (CUDA0, 2)]):
        with pytest.raises(RuntimeError) as caught:
            _dtype.iterator_device(found)
        assert str(caught.value) == msg  # the first device off the CPU leads


def test_an_elementwise_op_takes_one_cpu_scalar_beside_cuda_as_pytorch_does():
    assert _dtype.iterator_device([(CUDA0, 2), (CPU, 0)]) == CUDA0
    assert _dtype.iterator_device([(CPU, 0), (CUDA0, 1)]) == CUDA0
    assert _dtype.iterator_device([(CPU, 0), (CPU, 2)]) == CPU
    with pytest.raises(RuntimeError) as caught:
        _dtype.iterator_device([(CUDA0, 1), (CPU, 0), (CPU, 0)])
    assert str(caught.value) == "Trying to pass too many CPU scalars to non-CPU kernel!"


def test_two_gpus_are_two_devices():
    with pytest.raises(RuntimeError) as caught:
        _dtype.iterator_device([(CUDA0, 1), (CUDA1, 1)])
    assert (
        str(caught.value)
        == f"{SAME}, but found at least two devices, cuda:0 and cuda:1!"
    )


def test_a_kernels_device_check_names_the_argument_and_the_kernel():
    with pytest.raises(RuntimeError) as caught:
        _dtype.guard_device([("self", CUDA0), ("mat1", CPU), ("mat2", CUDA0)], "addmm")
    assert str(caught.value) == (
        f"{SAME}, but got mat1 is on cpu, different from other tensors on cuda:0 "
        "(when checking argument in method wrapper_CUDA_addmm)"
    )
    with pytest.raises(RuntimeError) as caught:
        _dtype.guard_device([("self", CPU), ("mat2", CUDA0)], "mm")
    assert str(caught.value) == (
        f"{SAME}, but got mat2 is on cuda:0, different from other tensors on cpu "
        "(when checking argument in method wrapper_CUDA_mm)"
    )
    assert _dtype.guard_device([("self", CUDA0), ("mat2", CUDA0)], "mm") == CUDA0


# -- the ops' wiring, an accelerator process simulated ---------------------------


@pytest.fixture
def on_devices(monkeypatch):
    """compat as in a process with a GPU: home is set, and each tensor's device
    is read from the returned table (the CPU for those not in it)."""
    monkeypatch.setattr(_dtype, "home", lambda: jax.devices("cpu")[0])
    table: dict[int, torch.device] = {}
    monkeypatch.setattr(TensorBase, "device", property(lambda t: table.get(id(t), CPU)))

    held = []  # each tensor in the table kept alive: its id is not reused

    def on(t, where):
        held.append(t)
        table[id(t)] = torch.device(where)
        return t

    return on


def test_a_cpu_input_to_a_cuda_linear_layer_raises_pytorchs_error(on_devices):
    x = torch.randn(2, 3)
    w, b = on_devices(torch.randn(4, 3), "cuda:0"), on_devices(torch.randn(4), "cuda:0")
    with pytest.raises(RuntimeError) as caught:
        F.linear(x, w, b)
    assert str(caught.value) == (
        f"{SAME}, but got mat1 is on cpu, different from other tensors on cuda:0 "
        "(when checking argument in method wrapper_CUDA_addmm)"
    )
    with pytest.raises(RuntimeError, match="but got mat2 is on cuda:0, different"):
        F.linear(x, w)


def test_matmuls_on_two_devices_raise_pytorchs_error(on_devices):
    a, b = torch.randn(2, 3), on_devices(torch.randn(3, 4), "cuda:0")
    with pytest.raises(RuntimeError, match=r"wrapper_CUDA_mm\)$"):
        a @ b
    with pytest.raises(RuntimeError, match=r"wrapper_CUDA_bmm\)$"):
        torch.bmm(torch.randn(2, 2, 3), on_devices(torch.randn(2, 3, 4), "cuda:0"))
    with pytest.raises(RuntimeError, match="but got mat2 is on cuda:0"):
        torch.addmm(torch.randn(2, 4), a, b)
    with pytest.raises(RuntimeError, match="found at least two devices"):
        torch.einsum("ij,jk->ik", a, b)


def test_a_cpu_input_to_a_cuda_convolution_raises_pytorchs_error(on_devices):
    x = torch.randn(1, 3, 8, 8)
    w = on_devices(torch.randn(4, 3, 3, 3), "cuda:0")
    with pytest.raises(RuntimeError) as caught:
        F.conv2d(x, w)
    assert str(caught.value) == (
        "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) "
        "should be the same or input should be a MKLDNN tensor and weight is a "
        "dense tensor"
    )
    on_devices(x, "cuda:0")
    with pytest.raises(RuntimeError) as caught:
        F.conv2d(x, w, torch.zeros(4))
    assert str(caught.value) == (
        "Input type (torch.cuda.FloatTensor) and bias type (torch.FloatTensor) "
        "should be the same"
    )


def test_elementwise_ops_on_two_devices_raise_and_a_cpu_scalar_joins(on_devices):
    x, y = on_devices(torch.ones(3), "cuda:0"), torch.ones(3)
    with pytest.raises(RuntimeError) as caught:
        x + y
    assert (
        str(caught.value) == f"{SAME}, but found at least two devices, cuda:0 and cpu!"
    )
    with pytest.raises(RuntimeError, match="found at least two devices"):
        _ = x > y
    assert (x * torch.tensor(2.0)).tolist() == [2.0, 2.0, 2.0]


def test_a_tensor_made_from_a_cuda_tensor_is_asked_for_on_cuda(on_devices):
    x = on_devices(torch.ones(2), "cuda:0")
    for make in (
        torch.zeros_like,
        lambda t: t.new_zeros(2),
        lambda t: torch.tensor(t),
        lambda t: torch.full_like(t, 1.0),
    ):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA"):
            make(x)
    assert torch.zeros_like(x, device="cpu").tolist() == [0.0, 0.0]


def test_copying_between_devices_moves_the_source_to_the_destination(on_devices):
    dest, src = torch.zeros(2), on_devices(torch.ones(2), "cuda:0")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA"):
        on_devices(torch.zeros(2), "cuda:0").copy_(torch.ones(2))  # to the GPU
    dest.copy_(src)  # to the CPU: the source's values, read back
    assert dest.tolist() == [1.0, 1.0]


def test_numpy_refuses_a_tensor_off_the_cpu_in_torchs_words(monkeypatch):
    t = torch.ones(2)
    monkeypatch.setattr(
        type(t), "device", property(lambda self: torch.device("cuda", 0))
    )
    with pytest.raises(
        TypeError, match="can't convert cuda:0 device type tensor to numpy"
    ):
        t.numpy()
    np.testing.assert_array_equal(t.numpy(force=True), [1.0, 1.0])  # a copy
    assert t._s.numpy is None  # the tensor stays where it was


@pytest.mark.parametrize("dtype", [torch.int64, torch.float64])
def test_a_64_bit_tensor_moved_to_an_accelerator_crosses_as_64_bits(monkeypatch, dtype):
    """A GPU's transfer made outside x64 gave an int64 tensor an int32 buffer
    (its next op failed); every move runs with x64 on."""
    from jaxblitz.compat import ops

    seen = []
    put = jax.device_put

    def device_put(x, *args, **kwargs):
        seen.append(jax.config.jax_enable_x64)
        return put(x, *args, **kwargs)

    monkeypatch.setattr(ops, "_moved_to", lambda d: CUDA0)
    monkeypatch.setattr(_dtype, "placement", lambda d: jax.devices()[0])
    monkeypatch.setattr(jax, "device_put", device_put)
    moved = torch.tensor([1, 2, 3], dtype=dtype).to("cuda")
    assert seen and all(seen)
    assert moved.dtype == dtype
    assert (moved + 1).tolist() == [2, 3, 4]
