"""compat against real PyTorch (skipped where PyTorch is not installed): the same
values, gradients, grad_fn names, optimizer trajectories and printed reprs."""

import numpy as np
import pytest

import jaxblitz.compat as torch
from benchmarks.bench_compat import blitz_net

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
    "tile": lambda m, x, w: m.tile(x, (2, 1, 2))[..., 2:6] + x.tile(3)[:, :4],
    "nansum": lambda m, x, w: m.nansum(x, 1) + x.nansum(dim=(0, 1), keepdim=True),
    "diff": lambda m, x, w: m.diff(x, n=2, dim=0, prepend=w[:1], append=w[1:3]),
    "diff_method": lambda m, x, w: x.diff() * 2,
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
    # NaNs count as zero in the sum and take a zero gradient
    "nansum_skips_nan": lambda m, x: m.nansum(x, 1) + x.nansum(),
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
        return blitz_net(module, module.nn, module.nn.functional)

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


# ---------------------------------------------------------------------------
# Tutorial helpers: logspace, nansum/diff/tile edge cases, gradient clipping,
# ConcatDataset
# ---------------------------------------------------------------------------


def _same(ours, theirs):
    """Equal shape, dtype and values (NaN where PyTorch has NaN)."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(
        ours.detach().numpy().astype(float),
        theirs.detach().numpy().astype(float),
        rtol=1e-6,
        equal_nan=True,
    )


LOGSPACES = [
    ((0, 2, 3), {}),
    ((-1, 1.5, 7), {"base": 3.0}),
    ((-2.5, 4.5, 9), {}),
    ((0, 3, 4), {"dtype": "float64"}),
    ((0, 2, 3), {"dtype": "int64"}),
    ((0, 5, 6), {"base": 2, "dtype": "int32"}),
    ((0.5, 1, 1), {"dtype": "int64"}),  # torch: base ** start, then the cast
    ((1, 0, 0), {}),
]


@pytest.mark.parametrize("index", range(len(LOGSPACES)))
def test_logspace_matches_pytorch(index):
    args, kwargs = LOGSPACES[index]
    results = []
    for m in (torch, pt):
        kw = {k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()}
        results.append(m.logspace(*args, **kw))
    _same(*results)


def test_integer_linspace_still_matches_pytorch():
    for args in [(0, 10, 5), (0, 1, 1), (-3, 7, 4), (7, -3, 6)]:
        ours = torch.linspace(*args, dtype=torch.int64)
        _same(ours, pt.linspace(*args, dtype=pt.int64))


def test_nansum_and_diff_dtypes_match_pytorch():
    for build in (
        lambda m: m.nansum(m.tensor([1, 2], dtype=m.int32)),
        lambda m: m.tensor([True, False, True]).nansum(),
        lambda m: m.tensor([1.0, float("nan")]).nansum(dtype=m.float64),
        lambda m: m.diff(m.tensor([True, False, False])),
        lambda m: m.diff(m.tensor([1, 2]), prepend=m.tensor([0.5])),
        lambda m: m.tensor([1.0, 4.0, 9.0]).diff(n=5),
        lambda m: m.tensor([[1, 4], [9, 16]]).diff(n=0),
        lambda m: m.tile(m.tensor(3.0), ()),
    ):
        _same(build(torch), build(pt))


@pytest.mark.parametrize(
    "bad",
    [
        lambda m: m.logspace(0, 1, -1),
        lambda m: m.logspace(m.tensor([0.0, 1.0]), 1, 3),
        lambda m: m.tile(m.ones(2, 3), (-1,)),
        lambda m: m.nansum(m.ones(2), 1),
        lambda m: m.diff(m.tensor(1.0)),
        lambda m: m.diff(m.ones(2), n=-1),
        lambda m: m.diff(m.ones(2), prepend=m.tensor(0.0)),
    ],
)
def test_bad_arguments_raise_pytorchs_errors(bad):
    with pytest.raises(Exception) as ours:
        bad(torch)
    with pytest.raises(Exception) as theirs:
        bad(pt)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def _clipped(m, clip, **kwargs):
    """Parameters with grads from a small loss, then ``clip`` applied to them."""
    params = [
        m.tensor([3.0, -4.0], requires_grad=True),
        m.tensor([[1.0, 2.0], [0.5, -7.0]], requires_grad=True),
        m.tensor([1.0], requires_grad=True),  # no grad: skipped
    ]
    (params[0] ** 2 * 3).sum().backward()
    (params[1] ** 3).sum().backward()
    out = getattr(m.nn.utils, clip)(iter(params[:2]) if kwargs else params, **kwargs)
    return out, [p.grad for p in params[:2]], params[2].grad


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
def test_clip_grad_norm_returns_the_total_norm_and_scales_grads_as_pytorch(
    norm_type,
):
    kwargs = {"max_norm": 5.0, "norm_type": norm_type, "foreach": True}
    (total, grads, none), (rtotal, rgrads, rnone) = (
        _clipped(m, "clip_grad_norm_", **kwargs) for m in (torch, pt)
    )
    _same(total, rtotal)
    assert total.item() > 5.0  # it clipped
    assert none is None and rnone is None
    for g, rg in zip(grads, rgrads, strict=True):
        _same(g, rg)


def test_clip_grad_norm_below_max_norm_leaves_grads_alone():
    total, grads, _ = _clipped(torch, "clip_grad_norm_", max_norm=1e4)
    rtotal, rgrads, _ = _clipped(pt, "clip_grad_norm_", max_norm=1e4)
    _same(total, rtotal)
    np.testing.assert_array_equal(grads[0].numpy(), [18.0, -24.0])
    for g, rg in zip(grads, rgrads, strict=True):
        _same(g, rg)


def test_clip_grad_norm_of_nonfinite_grads_raises_as_pytorch():
    errors = []
    for m in (torch, pt):
        p = m.tensor([1.0, 2.0], requires_grad=True)
        p.grad = m.tensor([float("inf"), 1.0])
        with pytest.raises(RuntimeError) as info:
            m.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
            if m is torch:
                torch.lazy.sync()  # lazily, the check of the norm raises here
        # lazily, torch's words and then where the op was recorded
        errors.append(str(info.value).split(" (found when compat's")[0])
    assert errors[0] == errors[1]
    _same(torch.nn.utils.clip_grad_norm_([], 1.0), pt.nn.utils.clip_grad_norm_([], 1.0))


def test_clip_grad_value_clamps_grads_as_pytorch():
    (out, grads, _), (rout, rgrads, _) = (
        _clipped(m, "clip_grad_value_", clip_value=10) for m in (torch, pt)
    )
    assert out is None and rout is None
    assert float(grads[1].abs().max()) == 10.0
    for g, rg in zip(grads, rgrads, strict=True):
        _same(g, rg)


def test_concat_dataset_indexes_across_datasets_as_pytorch():
    results = []
    for m in (torch, pt):
        data = m.utils.data
        first = data.TensorDataset(m.arange(3), m.arange(3.0))
        second = data.TensorDataset(m.arange(10, 12), m.ones(2))
        both = data.ConcatDataset([first, second])
        assert len(first + both) == 8
        samples = [both[i] for i in (0, 2, 3, 4, -1, -5)]
        batches = list(data.DataLoader(both, batch_size=2))
        results.append((len(both), both.cumulative_sizes, samples, batches))
        with pytest.raises(ValueError, match="should not exceed dataset length"):
            both[-6]
        with pytest.raises(AssertionError, match="should not be an empty iterable"):
            data.ConcatDataset([])
    (n, sizes, samples, batches), (rn, rsizes, rsamples, rbatches) = results
    assert (n, sizes) == (rn, rsizes) == (5, [3, 5])
    for ours, theirs in zip(samples + batches, rsamples + rbatches, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
