"""compat against real PyTorch (skipped where PyTorch is not installed): the same
values, gradients, grad_fn names, optimizer trajectories and printed reprs."""

import numpy as np
import pytest

import jaxblitz.compat as torch

pt = pytest.importorskip("torch")
ptF = pt.nn.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal((4, 4)).astype(np.float32)

EXPRESSIONS = {
    "add": lambda m, x, w: (x + 2) * x,
    "sub_rsub": lambda m, x, w: 2 - x - x * 3,
    "div_pow": lambda m, x, w: x / (x**2 + 1),
    "matmul": lambda m, x, w: x @ w,
    "mm_t": lambda m, x, w: x.mm(w.t()),
    "exp_tanh_sigmoid": lambda m, x, w: x.exp().tanh() + x.sigmoid(),
    "sum_dim": lambda m, x, w: x.sum(1),
    "mean": lambda m, x, w: x.mean(),
    "max_dim": lambda m, x, w: x.max(1)[0],
    "norm": lambda m, x, w: x.norm(),
    "view_permute": lambda m, x, w: x.view(4, 3).permute(1, 0),
    "index": lambda m, x, w: x[1:, ::2],
    "select": lambda m, x, w: x[0],
    "cat_stack": lambda m, x, w: m.cat([x, m.stack([x[0], x[1]])], 0),
    "unsqueeze_squeeze": lambda m, x, w: x.unsqueeze(0).squeeze(),
    "softmax": lambda m, x, w: m.nn.functional.softmax(x, dim=1),
    "log_softmax": lambda m, x, w: m.nn.functional.log_softmax(x, dim=1),
    "relu": lambda m, x, w: m.nn.functional.relu(x),
    "linear": lambda m, x, w: m.nn.functional.linear(x, w, w[0]),
    "mse": lambda m, x, w: m.nn.functional.mse_loss(x, x.detach() * 0.5),
    "cross_entropy": lambda m, x, w: m.nn.functional.cross_entropy(
        x, m.tensor([0, 3, 1])
    ),
    "abs_sqrt": lambda m, x, w: (x.abs() + 1).sqrt(),
    "clone_double": lambda m, x, w: x.clone().double(),
}


def _run(module, name):
    x = module.tensor(X, requires_grad=True)
    w = module.tensor(W, requires_grad=True)
    y = EXPRESSIONS[name](module, x, w)
    g = RNG_G[name][: y.numel()].reshape(tuple(y.shape))
    y.backward(module.tensor(g).to(y.dtype))
    return y, x.grad, w.grad


RNG_G = {k: RNG.standard_normal(64).astype(np.float32) for k in EXPRESSIONS}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_values_gradients_and_grad_fn_names_match_pytorch(name):
    y, gx, gw = _run(torch, name)
    ry, rgx, rgw = _run(pt, name)
    np.testing.assert_allclose(
        y.detach().numpy(), ry.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    assert y.grad_fn.name() == ry.grad_fn.name()
    assert y.dtype.name == str(ry.dtype).removeprefix("torch.")
    for ours, theirs in ((gx, rgx), (gw, rgw)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(
                ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6
            )


# Inputs with ties, zeros, -0.0 and NaN, where a gradient has to pick a rule:
# torch's max/min along a dim send it to the returned index only, |x| and a
# norm have slope 0 at 0.
EDGES = [[1.0, 3.0, 3.0, 0.0], [0.0, -0.0, 0.0, 0.0], [2.0, 2.0, -4.0, float("nan")]]
EDGE_EXPRESSIONS = {
    "max_dim_ties": lambda m, x: x.max(1)[0] + x.max(0, keepdim=True)[0].sum(),
    "min_dim_ties": lambda m, x: m.min(x, dim=-1).values * 2,
    "abs_at_zero": lambda m, x: x.abs() * m.arange(4.0),
    "l1_loss_at_zero": lambda m, x: m.nn.functional.l1_loss(x[:2], m.zeros(2, 4)),
    "norm_of_zeros": lambda m, x: x[:2].norm(dim=1),
    "p_norms_of_zeros": lambda m, x: m.stack(
        [x[:2].norm(p, dim=1) for p in (1, 3, 0.5, float("inf"))]
    ),
    "norm_all_zero": lambda m, x: x[1].norm() + x[1].norm(1),
    # a negative p: any zero entry makes the norm 0, with a zero gradient
    "negative_p_norms": lambda m, x: m.stack(
        [x[0, :3].norm(p) + x[0].norm(p) * 2 for p in (-1, -0.5)]
    ),
}


@pytest.mark.parametrize("name", sorted(EDGE_EXPRESSIONS))
def test_gradients_at_ties_and_zeros_match_pytorch(name):
    results = []
    for module in (torch, pt):
        x = module.tensor(EDGES, requires_grad=True)
        y = EDGE_EXPRESSIONS[name](module, x)
        y.backward(module.ones(y.shape) * 0.5)
        results.append((y.detach().numpy(), x.grad.numpy()))
    (y, gx), (ry, rgx) = results
    np.testing.assert_allclose(y, ry, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx, rgx, rtol=1e-5, atol=1e-6)


REPRS = [
    lambda m: m.ones(2, 2, requires_grad=True),
    lambda m: m.ones(2, 2, requires_grad=True) * 3,
    lambda m: m.tensor([[0.3126, 0.3791, 0.3087], [0.0736, 0.4216, 0.0691]]),
    lambda m: m.tensor([1e-5, 1.0, 12345.0]),
    lambda m: m.tensor([1e9, 1.0]),
    lambda m: m.tensor([-1.5, float("inf"), float("nan")]),
    lambda m: m.arange(12).view(3, 4),
    lambda m: m.arange(2000.0).view(40, 50) / 7,
    lambda m: m.linspace(-1, 1, 40),
    lambda m: m.tensor([True, False]),
    lambda m: m.zeros(2, 3, dtype=m.float64),
    lambda m: m.zeros(0, 3),
    lambda m: m.tensor(3.25),
    lambda m: m.tensor([1, 2], dtype=m.int32),
    lambda m: m.nn.Parameter(m.ones(2)),
    lambda m: m.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1),
    lambda m: m.Size([2, 3]),
    lambda m: m.float32,
    lambda m: m.device("cpu"),
]


@pytest.mark.parametrize("index", range(len(REPRS)))
def test_reprs_match_pytorch(index):
    assert repr(REPRS[index](torch)) == repr(REPRS[index](pt))


def _trajectory(module, make, steps=20):
    nn_, F_ = module.nn, module.nn.functional
    w0 = RNG_W.copy()
    layer = nn_.Linear(4, 3)
    with module.no_grad():
        layer.weight.copy_(module.tensor(w0[:, :4]))
        layer.bias.copy_(module.tensor(w0[:, 4]))
    opt = make(module.optim, layer.parameters())
    x = module.tensor(X[:, :4] if X.shape[1] >= 4 else X)
    target = module.tensor([0, 2, 1])
    out = []
    for step in range(steps):
        opt.zero_grad()
        loss = F_.cross_entropy(layer(x), target)
        loss.backward()
        opt.step()
        if step == 9:
            opt.param_groups[0]["lr"] *= 0.5
        out.append(layer.weight.detach().numpy().copy())
    return np.stack(out)


RNG_W = RNG.standard_normal((3, 5)).astype(np.float32)
OPTIMIZERS = {
    "sgd": lambda o, p: o.SGD(p, lr=0.1),
    "sgd_momentum": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9),
    "sgd_nesterov_wd": lambda o, p: o.SGD(
        p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "adam": lambda o, p: o.Adam(p, lr=0.05),
    "adam_wd": lambda o, p: o.Adam(p, lr=0.05, betas=(0.8, 0.99), weight_decay=0.1),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop_momentum": lambda o, p: o.RMSprop(
        p, lr=0.01, momentum=0.5, weight_decay=0.01
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trajectories_over_20_steps_match_pytorch(name):
    ours = _trajectory(torch, OPTIMIZERS[name])
    theirs = _trajectory(pt, OPTIMIZERS[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_lenet_outputs_and_gradients_match_pytorch():
    def build(module):
        nn_, F_ = module.nn, module.nn.functional

        class Net(nn_.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn_.Conv2d(3, 6, 5)
                self.conv2 = nn_.Conv2d(6, 16, 5)
                self.fc1 = nn_.Linear(400, 120)
                self.fc2 = nn_.Linear(120, 84)
                self.fc3 = nn_.Linear(84, 10)

            def forward(self, x):
                x = F_.max_pool2d(F_.relu(self.conv1(x)), 2)
                x = F_.max_pool2d(F_.relu(self.conv2(x)), 2)
                x = module.flatten(x, 1)
                return self.fc3(F_.relu(self.fc2(F_.relu(self.fc1(x)))))

        return Net()

    ours, theirs = build(torch), build(pt)
    ours.load_state_dict(
        {k: torch.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    )
    images = RNG.standard_normal((4, 3, 32, 32)).astype(np.float32)
    labels = np.array([1, 0, 9, 3])
    losses = []
    for m, net in ((torch, ours), (pt, theirs)):
        loss = m.nn.functional.cross_entropy(net(m.tensor(images)), m.tensor(labels))
        loss.backward()
        losses.append(loss)
    assert losses[0].grad_fn.name() == losses[1].grad_fn.name()
    np.testing.assert_allclose(losses[0].item(), losses[1].item(), rtol=1e-5)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(
            p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )


def test_module_reprs_match_pytorch():
    for build in (
        lambda m: m.nn.Linear(3, 2),
        lambda m: m.nn.Conv2d(3, 6, 5),
        lambda m: m.nn.Sequential(
            m.nn.Linear(2, 2), m.nn.ReLU(), m.nn.Flatten(), m.nn.Dropout()
        ),
        lambda m: m.nn.MaxPool2d(2, 2),
    ):
        assert repr(build(torch)) == repr(build(pt))
