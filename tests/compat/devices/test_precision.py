"""PyTorch's float32 precision flags in compat: how they interact (against real
PyTorch), the ``jax.lax.Precision`` each matmul-like op and each convolution is
given on a GPU and a TPU (read from the op's lowered program, the platform
forced: no GPU here), and on the CPU the same bits whatever the flags."""

from __future__ import annotations

import contextlib
import re
import warnings

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
from jaxblitz import kernels
from jaxblitz.compat import nn
from jaxblitz.compat.backends import _precision, cudnn

P = jax.lax.Precision


@pytest.fixture(autouse=True)
def default_flags():
    """Every test starts and ends with PyTorch's defaults."""
    torch.set_float32_matmul_precision("highest")
    cudnn.allow_tf32 = True
    yield
    torch.set_float32_matmul_precision("highest")
    cudnn.allow_tf32 = True


def _flags(t) -> tuple:
    return (
        t.backends.cuda.matmul.allow_tf32,
        t.backends.cudnn.allow_tf32,
        t.get_float32_matmul_precision(),
    )


# Each a sequence of settings from the defaults, whose flags are read after each
# step (none mixes the two APIs in the order PyTorch refuses to read back).
SEQUENCES = {
    "defaults": [],
    "high": ["set:high"],
    "medium": ["set:medium"],
    "high then highest": ["set:high", "set:highest"],
    "allow_tf32 on": ["tf32:True"],
    "allow_tf32 on then off": ["tf32:True", "tf32:False"],
    "high then allow_tf32 on": ["set:high", "tf32:True"],
    "cudnn off": ["cudnn:False"],
    "cudnn off then medium": ["cudnn:False", "set:medium"],
}


def _run(t, steps: list[str]) -> list[tuple]:
    seen = [_flags(t)]
    for step in steps:
        what, value = step.split(":")
        if what == "set":
            t.set_float32_matmul_precision(value)
        elif what == "tf32":
            t.backends.cuda.matmul.allow_tf32 = value == "True"
        else:
            t.backends.cudnn.allow_tf32 = value == "True"
        seen.append(_flags(t))
    return seen


def _mutable(real):
    """PyTorch's own tests' way to set its cudnn flags once
    ``torch.testing._internal`` (the differential suite) has frozen them."""
    if not real.backends.flags_frozen():
        return contextlib.nullcontext()
    return getattr(real.backends, "__allow_nonbracketed_mutation")()


@pytest.mark.parametrize("case", SEQUENCES)
def test_the_precision_flags_interact_as_pytorchs(case):
    real = pytest.importorskip("torch")
    with _mutable(real):
        try:
            want = _run(real, SEQUENCES[case])
        finally:
            real.set_float32_matmul_precision("highest")
            real.backends.cudnn.allow_tf32 = True
    assert _run(torch, SEQUENCES[case]) == want


def test_an_unknown_precision_warns_as_pytorch_and_changes_nothing():
    real = pytest.importorskip("torch")
    seen = []
    for t in (real, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.set_float32_matmul_precision("HIGH")
        said = str(caught[0].message).split(" (Triggered internally")[0]
        seen.append((said, t.get_float32_matmul_precision()))
    assert seen[1] == seen[0]
    assert seen[1][1] == "highest"


def test_a_precision_that_is_not_a_string_is_refused_as_pytorch_refuses_it():
    real = pytest.importorskip("torch")
    errors = []
    for t in (real, torch):
        with pytest.raises(RuntimeError) as caught:
            t.set_float32_matmul_precision(3)
        errors.append(str(caught.value))
    assert errors[1] == errors[0]


def test_cuda_matmul_refuses_an_unknown_attribute_as_pytorchs():
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        torch.backends.cuda.matmul.allow_tf33 = True


def test_on_a_gpu_matmuls_are_float32_and_convolutions_tf32_by_default():
    assert _precision.precision("matmul", "gpu") == P.HIGHEST
    assert _precision.precision("conv", "gpu") == P.DEFAULT


def test_on_a_gpu_each_flag_flips_its_own_kind_of_op():
    torch.set_float32_matmul_precision("high")
    assert _precision.precision("matmul", "gpu") == P.DEFAULT
    assert _precision.precision("conv", "gpu") == P.DEFAULT
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    assert _precision.precision("matmul", "gpu") == P.HIGHEST
    assert _precision.precision("conv", "gpu") == P.HIGHEST
    torch.set_float32_matmul_precision("medium")  # TF32 too on a GPU
    assert _precision.precision("matmul", "cuda") == P.DEFAULT
    assert _precision.precision("conv", "gpu") == P.HIGHEST


def test_on_a_tpu_the_matmul_precision_maps_as_proposed_for_xla_devices():
    got = {}
    for level in ("highest", "high", "medium"):
        torch.set_float32_matmul_precision(level)
        got[level] = (
            _precision.precision("matmul", "tpu"),
            _precision.precision("conv", "tpu"),
        )
    assert got == {
        "highest": (P.HIGHEST, P.HIGHEST),
        "high": (P.HIGH, P.HIGH),
        "medium": (P.DEFAULT, P.DEFAULT),
    }


def test_on_the_cpu_no_flag_gives_a_precision():
    torch.set_float32_matmul_precision("medium")
    torch.backends.cudnn.allow_tf32 = False
    assert _precision.precision("matmul", "cpu") is None
    assert _precision.precision("conv", "cpu") is None


# -- the precision in each op's program ------------------------------------------


class _Op(nn.Module):
    """``fn`` of parameters of the given shapes: the op as a module, so the bridge
    (``torch.functional``) gives it as a pure function of arrays to lower."""

    def __init__(self, fn, *shapes, dtype=torch.float32):
        super().__init__()
        self.fn = fn
        rng = np.random.default_rng(0)
        for i, shape in enumerate(shapes):
            value = rng.standard_normal(shape).astype(dtype.np)
            setattr(self, f"p{i}", nn.Parameter(torch.tensor(value)))

    def forward(self):
        return self.fn(*self.parameters())


def _program(module: nn.Module, *, grad: bool = False) -> str:
    params, apply_fn = torch.functional(module)
    fn = jax.grad(lambda p: apply_fn(p).sum()) if grad else apply_fn
    return jax.jit(fn).lower(params).as_text()


def _precisions(text: str) -> set[str]:
    """The operand precisions of every dot_general and convolution in ``text``."""
    dots = re.findall(r"precision = \[(\w+), (\w+)\]", text)
    convs = re.findall(r"#stablehlo<precision (\w+)>", text)
    found = {p for pair in dots for p in pair} | set(convs)
    assert found, "no dot_general or convolution in the program"
    return found


MATMULS = {
    "mm": (torch.mm, (3, 4), (4, 5)),
    "bmm": (torch.bmm, (2, 3, 4), (2, 4, 5)),
    "matmul": (torch.matmul, (2, 3, 4), (4, 5)),
    "@": (lambda a, b: a @ b, (3, 4), (4, 5)),
    "Tensor.mm": (lambda a, b: a.mm(b), (3, 4), (4, 5)),
    "mv": (torch.mv, (3, 4), (4,)),
    "dot": (torch.dot, (4,), (4,)),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b), (3, 5), (3, 4), (4, 5)),
    "addmm beta 0": (
        lambda c, a, b: torch.addmm(c, a, b, beta=0, alpha=2),
        (3, 5),
        (3, 4),
        (4, 5),
    ),
    "linear": (F.linear, (3, 4), (5, 4), (5,)),
    "linear without bias": (F.linear, (3, 4), (5, 4)),
    "linear of a batch": (F.linear, (2, 3, 4), (5, 4), (5,)),
    "einsum": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 5)),
}

CONVS = {
    "conv2d im2col": (
        lambda x, w, b: F.conv2d(x, w, b),
        (2, 3, 8, 8),
        (4, 3, 3, 3),
        (4,),
    ),
    "conv2d padded": (
        lambda x, w: F.conv2d(x, w, padding=1),
        (2, 3, 8, 8),
        (4, 3, 3, 3),
    ),
    "conv2d strided": (
        lambda x, w: F.conv2d(x, w, stride=(2, 1)),
        (2, 3, 8, 8),
        (4, 3, 3, 3),
    ),
    "conv2d grouped": (
        lambda x, w: F.conv2d(x, w, groups=3, dilation=2),
        (2, 3, 9, 9),
        (6, 1, 3, 3),
    ),
    "conv2d unbatched": (lambda x, w: F.conv2d(x, w), (3, 8, 8), (4, 3, 3, 3)),
    "conv_transpose2d": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2),
        (2, 3, 5, 5),
        (3, 4, 3, 3),
    ),
}


@pytest.fixture
def on_a_gpu(monkeypatch):
    """Every op decides its precision as on a GPU (the platform is injected)."""
    monkeypatch.setattr(_precision, "platform_of", lambda *operands: "gpu")


@pytest.mark.parametrize("op", MATMULS)
def test_on_a_gpu_each_matmul_like_op_is_float32_by_default(op, on_a_gpu):
    fn, *shapes = MATMULS[op]
    module = _Op(fn, *shapes)
    assert _precisions(_program(module)) == {"HIGHEST"}
    assert _precisions(_program(module, grad=True)) == {"HIGHEST"}


@pytest.mark.parametrize("op", MATMULS)
def test_on_a_gpu_each_matmul_like_op_allows_tf32_when_the_flag_does(op, on_a_gpu):
    fn, *shapes = MATMULS[op]
    torch.set_float32_matmul_precision("high")
    assert _precisions(_program(_Op(fn, *shapes))) == {"DEFAULT"}
    torch.backends.cuda.matmul.allow_tf32 = False
    assert _precisions(_program(_Op(fn, *shapes))) == {"HIGHEST"}


@pytest.mark.parametrize("op", CONVS)
def test_on_a_gpu_each_convolution_follows_cudnn_allow_tf32(op, on_a_gpu):
    fn, *shapes = CONVS[op]
    module = _Op(fn, *shapes)
    assert _precisions(_program(module)) == {"DEFAULT"}
    torch.set_float32_matmul_precision("highest")  # a matmul flag: no effect here
    torch.backends.cudnn.allow_tf32 = False
    assert _precisions(_program(module)) == {"HIGHEST"}
    assert _precisions(_program(module, grad=True)) == {"HIGHEST"}


def test_on_a_gpu_a_convolution_in_chunks_follows_cudnn_allow_tf32(
    on_a_gpu, monkeypatch
):
    monkeypatch.setattr(kernels, "patch_chunk", lambda batch, image_bytes: 1)
    module = _Op(lambda x, w: F.conv2d(x, w), (2, 3, 8, 8), (4, 3, 3, 3))
    torch.backends.cudnn.allow_tf32 = False
    assert _precisions(_program(module)) == {"HIGHEST"}


def test_on_a_gpu_the_blitz_net_gives_each_layer_its_flag(on_a_gpu):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 6, 5)
            self.fc = nn.Linear(6 * 28 * 28, 10)

        def forward(self, x):
            return self.fc(torch.flatten(F.relu(self.conv(x)), 1))

    params, apply_fn = torch.functional(Net())
    x = np.zeros((2, 3, 32, 32), np.float32)
    text = jax.jit(apply_fn).lower(params, x).as_text()
    assert re.findall(r"precision = \[(\w+), \w+\]", text) == ["DEFAULT", "HIGHEST"]


def test_on_a_tpu_a_matmul_takes_the_mapped_precision(monkeypatch):
    monkeypatch.setattr(_precision, "platform_of", lambda *operands: "tpu")
    torch.set_float32_matmul_precision("high")
    assert _precisions(_program(_Op(torch.mm, (3, 4), (4, 5)))) == {"HIGH"}


def test_on_a_gpu_a_float64_matmul_keeps_xlas_precision(on_a_gpu):
    module = _Op(torch.mm, (3, 4), (4, 5), dtype=torch.float64)
    torch.set_float32_matmul_precision("high")
    assert _precisions(_program(module)) == {"DEFAULT"}  # no precision given
    assert _precision.of("matmul", *module.parameters()) is None


# -- the CPU: the same bits whatever the flags -----------------------------------


def _cpu_results() -> list[np.ndarray]:
    out = []
    for fn, *shapes in [*MATMULS.values(), *CONVS.values()]:
        module = _Op(fn, *shapes)
        y = module()
        y.sum().backward()
        out.append(y.detach().numpy().copy())
        out += [p.grad.numpy().copy() for p in module.parameters()]
    return out


def _same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.tobytes() == y.tobytes()
        for x, y in zip(a, b, strict=True)
    )


def test_on_the_cpu_the_flags_change_no_result_bitwise():
    before = _cpu_results()
    torch.set_float32_matmul_precision("medium")
    torch.backends.cudnn.allow_tf32 = False
    assert _precision.of("matmul", torch.ones(2, 2)) is None
    assert _same_bits(_cpu_results(), before)


def test_on_the_cpu_a_program_carrying_a_gpus_precision_gives_the_same_bits(
    monkeypatch,
):
    before = _cpu_results()
    monkeypatch.setattr(_precision, "platform_of", lambda *operands: "gpu")
    torch.backends.cudnn.allow_tf32 = False  # HIGHEST everywhere
    assert _same_bits(_cpu_results(), before)
    torch.set_float32_matmul_precision("medium")
    torch.backends.cudnn.allow_tf32 = True  # DEFAULT everywhere
    assert _same_bits(_cpu_results(), before)
