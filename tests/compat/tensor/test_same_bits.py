"""compat: the same computation on the same values gives the same bits, however
the values were made, moved or read (PyTorch's own guarantee on one device), in
eager and lazy mode alike, and lazily as eagerly.

The sweep: a Blitz Net's weights made by one path each, then a training step as
the Blitz takes it; its output, gradients and parameters after an
``optim.SGD(lr=0.001, momentum=0.9)`` step (and after a second, where the path
moves the optimizer's state between them) equal, to the bit, those of
``torch.manual_seed(0); Net()`` trained eagerly. Each path was checked against
real PyTorch first: there too it leaves the bits as they were. Not swept: a
weight laid out column-major, ``p.data = q.t().contiguous().t()``, which changes
PyTorch's bits as well (a layout is part of a tensor, as its strides say), and
pickling a tensor or ``torch.save`` of a whole module, which compat refuses.
"""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy, nn, optim
from tests.compat.blitz_net import Net

_IMAGES = np.random.default_rng(1).standard_normal((4, 3, 32, 32), dtype=np.float32)
_LABELS = np.array([1, 3, 5, 7])


def _net() -> Net:
    torch.manual_seed(0)
    return Net()


def _input():
    return torch.tensor(_IMAGES)


def _read(how):
    def path(_tmp):
        net = _net()
        for p in net.parameters():
            how(p)
        return net

    return path


def _load_state_dict(_tmp):
    net = Net()
    net.load_state_dict(_net().state_dict())
    return net


def _saved_and_loaded(tmp):
    torch.save(_net().state_dict(), tmp / "net.pth")
    net = Net()
    net.load_state_dict(torch.load(tmp / "net.pth"))
    return net


def _copied_under_no_grad(_tmp):
    net, source = Net(), _net()
    with torch.no_grad():
        for p, q in zip(net.parameters(), source.parameters(), strict=True):
            p.copy_(q)
    return net


PATHS = {
    "numpy": _read(lambda p: p.detach().numpy()),
    "tolist": _read(lambda p: p.tolist()),
    "print": _read(repr),
    "init": lambda _tmp: _net(),
    "copy_ under no_grad": _copied_under_no_grad,
    "load_state_dict": _load_state_dict,
    "torch.save and torch.load": _saved_and_loaded,
    "deepcopy": lambda _tmp: copy.deepcopy(_net()),
}


@pytest.mark.parametrize("path", list(PATHS))
def test_a_blitz_nets_output_does_not_depend_on_how_its_weights_were_made(
    path, tmp_path
):
    x = _input()
    reference = _net()(x).detach().numpy().copy()
    net = PATHS[path](tmp_path)
    np.testing.assert_array_equal(net(x).detach().numpy(), reference)


def test_a_product_with_a_transpose_is_the_same_before_and_after_reading_it():
    torch.manual_seed(0)
    x, w = torch.randn(2, 400), torch.randn(120, 400)
    before = (x @ w.t()).numpy().copy()
    w.numpy()
    np.testing.assert_array_equal((x @ w.t()).numpy(), before)
    w.t().tolist()  # the transposed view read, its value cached
    np.testing.assert_array_equal((x @ w.t()).numpy(), before)


def test_a_linear_layer_is_the_same_whatever_storage_its_weight_lies_in():
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 400), torch.randn(120, 400), torch.randn(120)
    before = nn.functional.linear(x, w, b).numpy().copy()
    flat = torch.cat([torch.zeros(7), w.reshape(-1)])  # at an offset in a vector
    wide = torch.zeros(120, 409)  # rows of a wider matrix (a leading dimension)
    wide[:, 5:405] = w
    for weight in (flat[7:].view(120, 400), wide[:, 5:405]):
        assert weight.storage_offset() > 0
        after = nn.functional.linear(x, weight, b).numpy()
        np.testing.assert_array_equal(after, before)


# -- the sweep: output, gradients and parameters after SGD steps -----------------


def _batch():
    return torch.tensor(_IMAGES), torch.tensor(_LABELS)


def _train(
    net, batch=_batch, after_backward=None, between_steps=None, set_to_none=True
) -> dict:
    """A Blitz step of ``net`` on one batch: its output and gradients and the
    parameters after it, by name. ``after_backward(net)`` runs between the
    backward and the step; with ``between_steps(optimizer, net)``, which gives
    the optimizer to go on with, a second step follows, its parameters added."""
    images, labels = batch()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    optimizer.zero_grad(set_to_none=set_to_none)
    output = net(images)
    criterion(output, labels).backward()
    if after_backward is not None:
        after_backward(net)
    named = list(net.named_parameters())
    got = {"output": output.detach().numpy().copy()}
    got |= {f"{k}.grad": p.grad.numpy().copy() for k, p in named}
    optimizer.step()
    got |= {f"{k} after a step": p.detach().numpy().copy() for k, p in named}
    if between_steps is not None:
        optimizer = between_steps(optimizer, net)
        lazy.sync()  # (its own program: the second step's is the reference's)
        optimizer.zero_grad(set_to_none=set_to_none)
        criterion(net(images), labels).backward()
        optimizer.step()
        got |= {f"{k} after two steps": p.detach().numpy().copy() for k, p in named}
    return got


@pytest.fixture(scope="module")
def reference() -> dict:
    """``torch.manual_seed(0); Net()`` trained eagerly: the bits every path and
    mode must give."""
    was = lazy.is_lazy()
    lazy.set_lazy(False)
    try:
        return _train(_net(), between_steps=lambda optimizer, _net: optimizer)
    finally:
        lazy.set_lazy(was)


@pytest.fixture(params=["eager", "lazy"])
def mode(request):
    was = lazy.is_lazy()
    lazy.set_lazy(request.param == "lazy")
    yield request.param
    lazy.set_lazy(was)


def _assert_same_bits(got: dict, reference: dict) -> None:
    assert list(got) == list(reference)[: len(got)]
    differ = [k for k in got if not np.array_equal(got[k], reference[k])]
    assert not differ, f"not the reference's bits: {differ}"


def _from(make):
    """A Net whose parameters are ``make(q)`` of the reference's, set under
    ``no_grad`` with ``copy_``."""

    def path(_tmp):
        net, source = Net(), _net()
        with torch.no_grad():
            for p, q in zip(net.parameters(), source.parameters(), strict=True):
                p.copy_(make(q))
        return net

    return path


def _data_from(make):
    """A Net whose parameters' ``.data`` is ``make(q)`` of the reference's."""

    def path(_tmp):
        net, source = Net(), _net()
        for p, q in zip(net.parameters(), source.parameters(), strict=True):
            p.data = make(q)
        return net

    return path


def _each(how):
    """The reference Net after ``how(net)`` (a read, a mode switch ...)."""

    def path(_tmp):
        net = _net()
        how(net)
        return net

    return path


def _loaded(make_state, **options):
    def path(tmp):
        net = Net()
        net.load_state_dict(make_state(tmp), **options)
        return net

    return path


def _columns_of_a_wider_buffer(q):
    if q.dim() != 2:
        return q.detach().clone()
    buffer = torch.zeros(q.shape[0], q.shape[1] + 7)
    with torch.no_grad():
        buffer[:, 3 : 3 + q.shape[1]] = q
    return buffer[:, 3 : 3 + q.shape[1]]


def _vector_to_parameters(_tmp):
    net = Net()
    vector = nn.utils.parameters_to_vector(_net().parameters())
    nn.utils.vector_to_parameters(vector, net.parameters())
    return net


def _saved_to_bytes(tmp):
    buffer = io.BytesIO()
    torch.save(_net().state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def _reset_after_seeding(_tmp):
    net = Net()
    torch.manual_seed(0)
    for layer in net.children():
        if hasattr(layer, "reset_parameters"):
            layer.reset_parameters()
    return net


def _requires_grad_off_and_on(net):
    for p in net.parameters():
        p.requires_grad_(False)
    for p in net.parameters():
        p.requires_grad_(True)


def _read_every_way(net):
    for _, p in net.named_parameters():
        p.detach().numpy()
        p.data.numpy()
        float(p.detach().sum())
        p.detach().reshape(-1)[:1].item()
        p.detach()[0].tolist()
        p.detach().t().numpy() if p.dim() == 2 else None
    for value in net.state_dict().values():
        value.tolist()
    repr(net)
    str(list(net.parameters()))


def _ran_under_no_grad(net):
    with torch.no_grad():
        net(torch.tensor(_IMAGES)).numpy()


def _with_grads_then_deepcopied(_tmp):
    net = _net()
    for p in net.parameters():
        p.grad = torch.zeros_like(p)
    return copy.deepcopy(net)


def _data_copy(_tmp):
    net, source = Net(), _net()
    for p, q in zip(net.parameters(), source.parameters(), strict=True):
        p.data.copy_(q)
    return net


def _state_of(net_path):
    return lambda tmp: net_path(tmp).state_dict()


_reference_state = _state_of(lambda _tmp: _net())

SWEEP = {
    "copy_ under no_grad": _from(lambda q: q),
    "clone": _from(lambda q: q.clone()),
    "detach().clone()": _from(lambda q: q.detach().clone()),
    "float64 and back": _from(lambda q: q.to(torch.float64).to(torch.float32)),
    "cpu()": _from(lambda q: q.cpu()),
    "contiguous()": _from(lambda q: q.contiguous()),
    "empty_like then copy_": _from(lambda q: torch.empty_like(q).copy_(q)),
    "from_numpy of a copy": _from(
        lambda q: torch.from_numpy(q.detach().numpy().copy())
    ),
    "tensor of tolist": _from(lambda q: torch.tensor(q.tolist())),
    "as_tensor": _from(lambda q: torch.as_tensor(q.detach().numpy())),
    "new_tensor": _from(lambda q: q.new_tensor(q.detach().numpy())),
    "transposed, contiguous, transposed back": _from(
        lambda q: q.detach().transpose(0, -1).contiguous().transpose(0, -1)
    ),
    "zero_ then add_": _from(lambda q: torch.zeros_like(q).add_(q.detach())),
    "data = clone": _data_from(lambda q: q.data.clone()),
    "data = from_numpy": _data_from(
        lambda q: torch.from_numpy(q.detach().numpy().copy())
    ),
    "data = tensor of tolist": _data_from(lambda q: torch.tensor(q.tolist())),
    "data = columns of a wider buffer": _data_from(_columns_of_a_wider_buffer),
    "data.copy_": _data_copy,
    "vector_to_parameters": _vector_to_parameters,
    "load_state_dict strict=False": _loaded(_reference_state, strict=False),
    "load_state_dict assign=True": _loaded(_reference_state, assign=True),
    "load_state_dict of from_numpy, assign=True": _loaded(
        lambda tmp: {
            k: torch.from_numpy(v.numpy().copy())
            for k, v in _reference_state(tmp).items()
        },
        assign=True,
    ),
    "load_state_dict keep_vars=True": _loaded(
        lambda _tmp: _net().state_dict(keep_vars=True)
    ),
    "load_state_dict of a copy.copy": _loaded(
        lambda tmp: copy.copy(_reference_state(tmp))
    ),
    "load_state_dict of a deepcopy": _loaded(
        lambda tmp: copy.deepcopy(_reference_state(tmp))
    ),
    "torch.save to bytes and torch.load": _loaded(_saved_to_bytes),
    "deepcopy of a net with grads": _with_grads_then_deepcopied,
    "manual_seed then reset_parameters": _reset_after_seeding,
    "requires_grad_ off and on": _each(_requires_grad_off_and_on),
    "net.requires_grad_ off and on": _each(
        lambda net: net.requires_grad_(False).requires_grad_(True)
    ),
    "read every way": _each(_read_every_way),
    "to cpu": _each(lambda net: net.to("cpu")),
    "double then float": _each(lambda net: net.double().float()),
    "train and eval toggled": _each(lambda net: net.eval().train().eval().train()),
    "run under no_grad first": _each(_ran_under_no_grad),
}


@pytest.mark.parametrize("path", list(SWEEP))
def test_a_blitz_step_gives_the_same_bits_however_the_weights_were_made(
    path, mode, reference, tmp_path
):
    net = SWEEP[path](tmp_path)
    # Lazily, the path's own work runs as a program of its own here, so the
    # step's programs are the reference's, compiled once for the sweep; the
    # path's work run inside the step's program is the next test's.
    lazy.sync()
    _assert_same_bits(_train(net), reference)


@pytest.mark.parametrize("path", ["copy_ under no_grad", "vector_to_parameters"])
def test_a_paths_pending_work_run_lazily_with_the_step_gives_the_same_bits(
    path, reference, tmp_path
):
    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        got = _train(SWEEP[path](tmp_path))
    finally:
        lazy.set_lazy(was)
    _assert_same_bits(got, reference)


def _read_grads(net):
    for p in net.parameters():
        p.grad.numpy()
        p.grad.tolist()
    repr(net.fc3.weight.grad)


def _with_stale_grads(net):
    """Grads of ones, which ``zero_grad(set_to_none=False)`` zeroes in place and
    the next backward adds to."""
    for p in net.parameters():
        p.grad = torch.ones_like(p)


def _state_dict_round_trip(optimizer, net):
    state = copy.deepcopy(optimizer.state_dict())
    again = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    again.load_state_dict(state)
    return again


def _state_dict_saved_and_loaded(optimizer, net):
    buffer = io.BytesIO()
    torch.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    again = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    again.load_state_dict(torch.load(buffer, weights_only=True))
    return again


def _momentum_buffers_read(optimizer, _net):
    for state in optimizer.state_dict()["state"].values():
        state["momentum_buffer"].numpy()
        repr(state["momentum_buffer"])
    return optimizer


def _from_a_data_loader():
    dataset = torch.utils.data.TensorDataset(*_batch())
    return next(iter(torch.utils.data.DataLoader(dataset, batch_size=len(_LABELS))))


def _a_slice_of_a_larger_batch():
    images = torch.tensor(np.concatenate([np.zeros_like(_IMAGES), _IMAGES]))
    return images[len(_IMAGES) :], torch.tensor(_LABELS)


def _stacked():
    images = torch.stack([torch.from_numpy(image) for image in _IMAGES.copy()])
    return images, torch.tensor(_LABELS.tolist())


def _read_first():
    images, labels = _batch()
    images.numpy()
    labels.tolist()
    return images, labels


STEP_SWEEP = {
    "grads read between backward and step": {"after_backward": _read_grads},
    "grads zeroed, not set to None": {"set_to_none": False, "zeroed": True},
    "optimizer state_dict round trip": {"between_steps": _state_dict_round_trip},
    "optimizer state saved and loaded": {"between_steps": _state_dict_saved_and_loaded},
    "momentum buffers read": {"between_steps": _momentum_buffers_read},
    "batch from a DataLoader": {"batch": _from_a_data_loader},
    "batch as a slice of a larger one": {"batch": _a_slice_of_a_larger_batch},
    "batch stacked from NumPy": {"batch": _stacked},
    "batch read before the step": {"batch": _read_first},
}


@pytest.mark.parametrize("path", list(STEP_SWEEP))
def test_a_blitz_step_gives_the_same_bits_however_its_values_were_read_or_moved(
    path, mode, reference
):
    options = dict(STEP_SWEEP[path])
    net = _net()
    if options.pop("zeroed", False):
        _with_stale_grads(net)
    _assert_same_bits(_train(net, **options), reference)


def test_nn_init_writes_the_bits_a_copy_of_the_same_values_writes(mode):
    def made(write):
        net = _net()
        with torch.no_grad():
            for layer in (net.fc1, net.fc2, net.fc3):
                write(layer)
        lazy.sync()  # (the writes' own program: the step's is the sweep's)
        return _train(net)

    def by_init(layer):
        nn.init.eye_(layer.weight)
        nn.init.constant_(layer.bias, 0.25)

    def by_copy(layer):
        layer.weight.copy_(torch.from_numpy(np.eye(*layer.weight.shape, dtype="f")))
        layer.bias.copy_(torch.full(layer.bias.shape, 0.25))

    _assert_same_bits(made(by_init), made(by_copy))
