"""compat: the same computation on the same values gives the same bits, however
the values were made or read (PyTorch's own guarantee on one device)."""

import copy

import numpy as np
import pytest

import jaxblitz.compat as torch
from tests.compat.blitz_net import Net


def _net() -> Net:
    torch.manual_seed(0)
    return Net()


def _input():
    return torch.tensor(
        np.random.default_rng(1).standard_normal((2, 3, 32, 32), dtype=np.float32)
    )


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
