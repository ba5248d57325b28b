"""compat ``torch.nn.utils``: parameters_to_vector / vector_to_parameters, the
BatchNorm fusions, skip_init and the deprecated clip_grad_norm, against real
PyTorch (values, gradients, Parameter types, errors)."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat
RNG = np.random.default_rng(11)


def _net(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))


def _load(m, module, arrays):
    with m.no_grad():
        for p, a in zip(module.parameters(), arrays, strict=True):
            p.copy_(m.tensor(a))


PARAMS = [
    RNG.standard_normal(s).astype(np.float32) for s in [(4, 3), (4,), (2, 4), (2,)]
]


def test_parameters_to_vector_and_back_as_torch():
    def fn(m):
        net = _net(m)
        _load(m, net, PARAMS)
        vec = m.nn.utils.parameters_to_vector(net.parameters())
        vec.sum().backward()  # autograd flows through the view and cat
        grads = [p.grad for p in net.parameters()]
        m.nn.utils.vector_to_parameters(vec * 2, net.parameters())
        return vec, grads, [p.detach().clone() for p in net.parameters()]

    check(fn)


def test_vector_to_parameters_refuses_what_is_not_a_tensor():
    check(lambda m: m.nn.utils.vector_to_parameters([1.0, 2.0], _net(m).parameters()))


def _bn(m, cls, n):
    bn = getattr(m.nn, cls)(n)
    with m.no_grad():
        bn.weight.copy_(m.tensor(RNG_BN[0][:n]))
        bn.bias.copy_(m.tensor(RNG_BN[1][:n]))
        bn.running_mean.copy_(m.tensor(RNG_BN[2][:n]))
        bn.running_var.copy_(m.tensor(RNG_BN[3][:n]))
    return bn.eval()


RNG_BN = [
    RNG.standard_normal(6).astype(np.float32),
    RNG.standard_normal(6).astype(np.float32),
    RNG.standard_normal(6).astype(np.float32),
    RNG.uniform(0.5, 2, 6).astype(np.float32),
]
X = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
CONV_SHAPES = [(4, 3, 3, 3), (3, 4, 3, 3), (4,)]
CONV = [RNG.standard_normal(s).astype(np.float32) for s in CONV_SHAPES]


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval_gives_the_unfused_outputs_as_torch(transpose):
    def fn(m):
        m.manual_seed(0)
        cls = m.nn.ConvTranspose2d if transpose else m.nn.Conv2d
        conv = cls(3, 4, 3, bias=not transpose).eval()
        _load(m, conv, [CONV[int(transpose)]] + [CONV[2]] * (not transpose))
        bn = _bn(m, "BatchNorm2d", 4)
        fused = m.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = m.tensor(X)
        kinds = [type(p).__name__ for p in (fused.weight, fused.bias)]
        return fused(x), bn(conv(x)), kinds, conv.bias is None

    check(fn)


def test_fuse_linear_bn_eval_and_its_checks_as_torch():
    def fn(m):
        m.manual_seed(0)
        linear = m.nn.Linear(3, 4).eval()
        _load(m, linear, PARAMS[:2])
        fused = m.nn.utils.fuse_linear_bn_eval(linear, _bn(m, "BatchNorm1d", 4))
        x = m.tensor(X[:, :, 0, 0])
        return fused(x), fused.weight.requires_grad

    check(fn)
    check(
        lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4))
    )
    check(
        lambda m: m.nn.utils.fuse_linear_bn_eval(
            m.nn.Linear(3, 4).eval(), m.nn.BatchNorm1d(3).eval()
        )
    )


def test_fuse_weights_functions_without_bias_or_affine_as_torch():
    conv_w = CONV[0]

    def fn(m):
        w = m.tensor(conv_w)
        rm, rv = m.tensor(RNG_BN[2][:4]), m.tensor(RNG_BN[3][:4])
        lw = m.tensor(PARAMS[0])
        return (
            m.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, None, None),
            m.nn.utils.fuse_linear_bn_weights(lw, None, rm, rv, 1e-5, rv, rm),
        )

    check(fn)


def test_skip_init_makes_the_module_and_refuses_as_torch():
    def fn(m):
        lin = m.nn.utils.skip_init(m.nn.Linear, 6, 1)
        return [(n, p.shape, p.dtype) for n, p in lin.named_parameters()]

    check(fn)
    check(lambda m: m.nn.utils.skip_init(int, 3))
    check(lambda m: m.nn.utils.skip_init(m.nn.Tanh))


def test_clip_grad_norm_is_clip_grad_norm_with_torchs_future_warning():
    def fn(m):
        net = _net(m)
        _load(m, net, PARAMS)
        net(m.ones(2, 3)).sum().backward()
        with pytest.warns(FutureWarning, match="clip_grad_norm_") as caught:
            norm = m.nn.utils.clip_grad_norm(net.parameters(), 0.5)
        return norm, [p.grad for p in net.parameters()], str(caught[0].message)

    check(fn)
