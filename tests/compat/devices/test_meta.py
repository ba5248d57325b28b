"""The ``meta`` device, against PyTorch: tensors with a shape, a dtype and
strides but no values; ops on them give PyTorch's shapes and dtypes, reading a
value gives PyTorch's errors; modules move to it and back (``to_empty``,
``load_state_dict(assign=True)``). In both modes: lazily, meta ops record
nothing."""

from __future__ import annotations

import copy
import warnings

import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
from jaxblitz.compat import lazy

real = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def cpu_default():
    torch.set_default_device(None)
    yield
    torch.set_default_device(None)


def _facts(t) -> tuple:
    return (str(t.device), tuple(t.shape), str(t.dtype), t.stride(), t.requires_grad)


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as e:  # the error's type and text are the spec
        return (type(e).__name__, str(e))


FACTORIES = {
    "empty": lambda t: t.empty(2, 3, device="meta"),
    "zeros int": lambda t: t.zeros(4, dtype=t.int64, device="meta"),
    "ones grad": lambda t: t.ones(2, 2, device="meta", requires_grad=True),
    "full": lambda t: t.full((3,), 7.0, device="meta"),
    "rand": lambda t: t.rand(2, 5, device="meta"),
    "randn f64": lambda t: t.randn(3, dtype=t.float64, device="meta"),
    "arange": lambda t: t.arange(5, device="meta"),
    "eye": lambda t: t.eye(3, device="meta"),
    "tensor": lambda t: t.tensor([[1, 2], [3, 4]], device="meta"),
    "scalar": lambda t: t.ones((), device="meta"),
    "zeros_like": lambda t: t.zeros_like(t.ones(2, 3), device="meta"),
    "empty_like of meta": lambda t: t.empty_like(t.empty(4, device="meta")),
    "new_ones": lambda t: t.empty(2, device="meta").new_ones(3, 1),
    "to meta": lambda t: t.arange(6.0).view(2, 3).to("meta"),
    "transposed": lambda t: t.empty(2, 3, device="meta").t(),
    "sliced": lambda t: t.empty(4, 5, device="meta")[1:3],
}


@pytest.mark.parametrize("case", FACTORIES)
def test_a_meta_tensor_has_pytorchs_shape_dtype_strides_and_repr(case):
    ours, theirs = FACTORIES[case](torch), FACTORIES[case](real)
    assert ours.is_meta and theirs.is_meta
    assert _facts(ours) == _facts(theirs)
    assert repr(ours) == repr(theirs)
    assert ours.data_ptr() == theirs.data_ptr()  # 0, or a view's offset


def test_the_device_as_a_context_or_default_makes_meta_tensors():
    with torch.device("meta"):
        inside = torch.zeros(2)
    torch.set_default_device("meta")
    by_default = torch.ones(3, dtype=torch.int32)
    torch.set_default_device(None)
    assert inside.is_meta and by_default.is_meta
    assert repr(by_default) == repr(real.ones(3, dtype=real.int32, device="meta"))
    assert not torch.zeros(2).is_meta


OPS = {
    "add broadcast": lambda t, x, y: x + y[0],
    "int times float": lambda t, x, y: t.ones(3, dtype=t.int64, device="meta") * 2.5,
    "matmul": lambda t, x, y: x @ y.t(),
    "sum dim": lambda t, x, y: x.sum(0),
    "mean keepdim": lambda t, x, y: x.mean(1, keepdim=True),
    "argmax": lambda t, x, y: x.argmax(-1),
    "compare": lambda t, x, y: x > y,
    "view": lambda t, x, y: x.view(6),
    "permute": lambda t, x, y: x.unsqueeze(0).permute(2, 0, 1),
    "cat": lambda t, x, y: t.cat([x, y], 0),
    "stack": lambda t, x, y: t.stack([x, y]),
    "cast": lambda t, x, y: x.to(t.float16),
    "softmax": lambda t, x, y: t.softmax(x, -1),
    "conv2d": lambda t, x, y: t.nn.functional.conv2d(
        t.empty(8, 3, 32, 32, device="meta"), t.empty(6, 3, 5, 5, device="meta")
    ),
    "cross_entropy": lambda t, x, y: t.nn.functional.cross_entropy(
        x, t.zeros(2, dtype=t.int64, device="meta")
    ),
    "meta index": lambda t, x, y: x[:, t.tensor([[0], [2]], device="meta")],
    "add_ in place": lambda t, x, y: x.add_(1),
    "copy_ from cpu": lambda t, x, y: x.copy_(t.ones(2, 3)),
}


@pytest.mark.parametrize("case", OPS)
def test_ops_on_meta_tensors_give_pytorchs_shapes_and_dtypes(case):
    def run(t):
        x, y = t.empty(2, 3, device="meta"), t.empty(2, 3, device="meta")
        return OPS[case](t, x, y)

    ours, theirs = run(torch), run(real)
    assert ours.is_meta
    assert (tuple(ours.shape), str(ours.dtype)) == (
        tuple(theirs.shape),
        str(theirs.dtype),
    )


def test_meta_ops_record_and_run_nothing():
    lazy.sync()
    before = lazy.metrics().get("calls", 0)
    x = torch.empty(64, 1000, device="meta")
    out = torch.nn.Linear(1000, 10).to("meta")(x).relu().sum(1)
    assert tuple(out.shape) == (64,) and out.is_meta
    assert lazy.metrics().get("calls", 0) == before


def test_backward_through_meta_tensors_gives_meta_grads():
    def run(t):
        w = t.ones(3, 2, device="meta", requires_grad=True)
        loss = (w * 3).sum()
        loss.backward()
        (w * 2).sum().backward()  # a second pass accumulates
        return loss, w.grad

    (loss, grad), (their_loss, their_grad) = run(torch), run(real)
    assert repr(loss) == repr(their_loss)  # ... grad_fn=<SumBackward0>
    assert grad.is_meta and repr(grad) == repr(their_grad)


READS = {
    "item": lambda t: t.ones((), device="meta").item(),
    "float": lambda t: float(t.ones((), device="meta")),
    "int": lambda t: int(t.ones((), device="meta")),
    "bool": lambda t: bool(t.ones((), device="meta")),
    "index": lambda t: [1, 2, 3][t.tensor(1, device="meta")],
    "0-d meta index": lambda t: t.empty(3, 2, device="meta")[
        t.tensor(1, device="meta")
    ],
    "tolist": lambda t: t.empty(2, device="meta").tolist(),
    "numpy": lambda t: t.empty(2, device="meta").numpy(),
    "np.asarray": lambda t: __import__("numpy").asarray(t.empty(2, device="meta")),
    "cpu": lambda t: t.empty(2, device="meta").cpu(),
    "to cpu": lambda t: t.empty(2, device="meta").to("cpu"),
    "copy_ to cpu": lambda t: t.ones(2).copy_(t.empty(2, device="meta")),
    "str": lambda t: str(t.empty(2, 3, device="meta")),
    "format": lambda t: f"{t.ones((), device='meta')}",
    "meta + cpu": lambda t: t.empty(2, device="meta") + t.ones(2),
    "cpu + meta": lambda t: t.ones(2) + t.empty(2, device="meta"),
    "meta + cpu scalar": lambda t: repr(t.empty(2, device="meta") + t.tensor(1.0)),
}


@pytest.mark.parametrize("case", READS)
def test_reading_values_or_mixing_devices_answers_as_pytorch(case):
    assert _outcome(lambda: READS[case](torch)) == _outcome(lambda: READS[case](real))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def test_module_to_meta_keeps_parameters_and_their_shapes():
    model = MLP()
    base = copy.deepcopy(model).to("meta")
    assert all(p.is_meta and p.requires_grad for p in base.parameters())
    assert isinstance(base.fc1.weight, torch.nn.Parameter)
    assert [tuple(p.shape) for p in base.parameters()] == [(8, 4), (8,), (2, 8), (2,)]
    assert not any(p.is_meta for p in model.parameters())  # the original untouched
    text = repr(base.fc2.bias)
    assert text == repr(real.nn.Linear(8, 2).to("meta").bias)


def test_a_model_made_on_meta_is_materialised_by_to_empty_and_assign():
    with torch.device("meta"):
        model = MLP()
    assert all(p.is_meta for p in model.parameters())
    model.to_empty(device="cpu")
    # compat's uninitialised memory is zeros (torch's is whatever it held)
    assert all(not p.is_meta and p.requires_grad for p in model.parameters())
    assert model.fc1.weight.abs().sum().item() == 0.0
    trained = MLP()
    with torch.device("meta"):
        fresh = MLP()
    fresh.load_state_dict(trained.state_dict(), assign=True)
    x = torch.arange(8.0).view(2, 4)
    assert torch.equal(fresh(x), trained(x))
    assert isinstance(fresh.fc1.weight, torch.nn.Parameter)
    assert fresh.fc1.weight.requires_grad


def test_loading_into_meta_parameters_without_assign_warns_as_pytorch():
    model = torch.nn.Linear(3, 2, device="meta")
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        model.load_state_dict(torch.nn.Linear(3, 2).state_dict())
    theirs_model = real.nn.Linear(3, 2, device="meta")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        theirs_model.load_state_dict(real.nn.Linear(3, 2).state_dict())
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert model.weight.is_meta and theirs_model.weight.is_meta


def test_shape_inference_runs_a_model_on_meta_input():
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 6, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
    ).to("meta")  # fmt: skip
    out = net(torch.empty(8, 3, 32, 32, device="meta"))
    assert out.is_meta and tuple(out.shape) == (8, 6 * 14 * 14)


def test_skip_init_makes_the_module_on_meta_then_gives_it_storage():
    def run(t):
        norm = t.nn.utils.skip_init(t.nn.BatchNorm1d, 4)
        return [
            (n, str(v.device), tuple(v.shape)) for n, v in norm.state_dict().items()
        ]

    assert run(torch) == run(real)
    layer = torch.nn.utils.skip_init(torch.nn.Linear, 3, 2)
    assert layer.weight.requires_grad and layer.weight.abs().sum().item() == 0.0


def test_making_meta_tensors_and_layers_draws_nothing_from_the_generator():
    def run(t, meta: bool):
        t.manual_seed(0)
        if meta:  # as in torch, none of this moves the generator
            t.rand(3, device="meta")
            t.randn(2, generator=None, device="meta")
            with t.device("meta"):
                t.nn.Linear(3, 2), t.nn.Conv2d(1, 2, 3), t.nn.Embedding(4, 3)
                t.nn.LSTM(2, 3)
                t.empty(5).uniform_()
        return t.rand(3).tolist()

    assert run(real, True) == run(real, False)
    assert run(torch, True) == run(torch, False)
