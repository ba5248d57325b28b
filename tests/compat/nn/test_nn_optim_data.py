"""compat nn, optim, utils.data, save/load, the functional bridge, DataParallel."""

import collections
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz import models
from jaxblitz.compat import nn, optim
from jaxblitz.compat.utils.data import DataLoader, TensorDataset
from tests.compat.blitz_net import Net


def test_module_registers_parameters_with_torch_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names[:3] == ["conv1.weight", "conv1.bias", "conv2.weight"]
    assert sum(p.numel() for p in net.parameters()) == 62006
    assert list(net.state_dict()) == names
    assert len(list(net.children())) == 6 and len(list(net.modules())) == 7


def test_module_repr_is_torchs():
    assert repr(nn.Linear(4, 2)) == "Linear(in_features=4, out_features=2, bias=True)"
    assert "(conv1): Conv2d(3, 6, kernel_size=(5, 5), stride=(1, 1))" in repr(Net())
    assert repr(nn.MaxPool2d(2, 2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )


def test_compat_forward_equals_the_cores_lenet():
    net = Net()
    x = torch.randn(2, 3, 32, 32)
    params, apply_fn = torch.functional(net)
    core = models.lenet(params, x._data)
    np.testing.assert_allclose(net(x).detach().numpy(), core, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(apply_fn)(params, x._data), core, atol=1e-6)


def test_params_round_trip_through_the_bridge():
    net, other = Net(), Net()
    params, _ = torch.functional(net)
    other.load_params(params)
    assert all(
        torch.equal(a, b)
        for a, b in zip(net.parameters(), other.parameters(), strict=True)
    )


def test_training_loop_reduces_the_loss():
    torch.manual_seed(0)
    net = Net()
    opt = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.2


def test_buffers_train_eval_and_load_state_dict_errors():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))
            self.fc = nn.Linear(2, 2)

    m = WithBuffer()
    assert "count" in m.state_dict() and not m.eval().training
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "co'):
        m.load_state_dict({k: v for k, v in m.state_dict().items() if k != "count"})


def test_save_load_round_trip_of_a_state_dict(tmp_path):
    net = Net()
    path = tmp_path / "net.pth"
    torch.save(net.state_dict(), path)
    assert path.read_bytes()[:4] == b"PK\x03\x04"  # torch.save's zip archive
    loaded = torch.load(path)
    assert list(loaded) == list(net.state_dict())
    torch.save(torch.arange(3), tmp_path / "t.pt")
    assert torch.load(tmp_path / "t.pt").tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="weights_only=True"):
        torch.save({"fn": print}, tmp_path / "bad.pt")


def test_optimizer_arguments_are_checked_with_torchs_wording():
    p = [nn.Parameter(torch.ones(2))]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.5"):
        optim.Adam(p, betas=(1.5, 0.9))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)


def test_zero_grad_sets_grads_to_none_and_lr_changes_take_effect():
    p = nn.Parameter(torch.ones(1))
    opt = optim.SGD([p], lr=1.0)
    (p * 2).sum().backward()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    assert p.item() == 0.0
    opt.zero_grad()
    assert p.grad is None


def test_dataloader_batches_shuffles_and_drops_last():
    ds = TensorDataset(torch.arange(10.0).view(10, 1), torch.arange(10))
    batches = list(DataLoader(ds, batch_size=4, num_workers=2))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert batches[0][1].dtype is torch.int64
    loader = DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
    assert len(loader) == 2 and len(list(loader)) == 2
    seen = sorted(
        v
        for x, _ in DataLoader(ds, batch_size=3, shuffle=True)
        for v in x.view(-1).tolist()
    )
    assert seen == list(map(float, range(10)))


Point = collections.namedtuple("Point", "x y")

# Samples as users' Datasets return them; each is collated (or, with
# batch_size=None, converted) by compat and by torch and the results compared.
SAMPLES = {
    "numpy_scalars": [(np.float32(i), np.int32(i), np.bool_(i % 2)) for i in range(3)],
    "numpy_arrays": [(np.full(2, i, np.float64), np.uint8(i)) for i in range(3)],
    "python_numbers": [(float(i), i, i > 0, str(i)) for i in range(3)],
    "namedtuples": [Point(np.float32(i), i) for i in range(3)],
    "dicts": [{"x": np.ones(2, np.float32) * i, "y": (i, float(i))} for i in range(3)],
    "unequal_arrays": [np.ones(2), np.ones(3)],
}


def _described(value):
    if hasattr(value, "dtype") and hasattr(value, "tolist"):
        return (type(value).__name__, str(value.dtype), value.tolist())
    if isinstance(value, dict):
        return {k: _described(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_described(v) for v in value])
    return value


def _loaded(m, samples, batch_size):
    try:
        return _described(list(m.utils.data.DataLoader(samples, batch_size=batch_size)))
    except Exception as e:  # noqa: BLE001 -- compared like a value
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("batch_size", [2, None])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_dataloader_collates_and_converts_samples_as_torch(name, batch_size):
    pt = pytest.importorskip("torch")
    theirs = _loaded(pt, SAMPLES[name], batch_size)
    ours = _loaded(torch, SAMPLES[name], batch_size)
    assert str(ours).replace("torch.", "") == str(theirs).replace("torch.", "")


def test_data_parallel_equals_the_unwrapped_module_on_four_devices():
    code = textwrap.dedent("""
        import numpy as np
        import jax
        import jaxblitz.compat as torch
        from jaxblitz.compat import nn
        assert len(jax.devices()) == 4
        torch.manual_seed(0)
        model = nn.Linear(5, 2)
        x = torch.randn(8, 5)
        out = nn.DataParallel(model)(x)
        assert len(out._data.sharding.device_set) == 4
        np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(),
                                   rtol=1e-6)
        out.sum().backward()
        grad = model.weight.grad.numpy().copy()
        model.zero_grad()
        model(x).sum().backward()
        np.testing.assert_allclose(grad, model.weight.grad.numpy(), rtol=1e-6)
        # An uneven batch (10 rows over 4 devices) is padded to 3 rows each.
        x = torch.randn(10, 5, requires_grad=True)
        out = nn.DataParallel(model)(x)
        assert tuple(out.shape) == (10, 2)
        np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        (out * out).sum().backward()
        grad = x.grad.numpy().copy()
        x.grad = None
        (model(x) ** 2).sum().backward()
        np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-5, atol=1e-6)
        print("ok")
    """)
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]
