"""torch.autocast on the CPU against PyTorch's: the dtypes each listed op gives
(matmuls and convolutions in bfloat16, losses in float32, joins promoted), the
region's state, its weight cache, custom_fwd/custom_bwd and a training step, in
both execution modes."""

import warnings

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


@pytest.fixture(params=["eager", "lazy"])
def mode(request):
    was = ct.lazy.is_lazy()
    ct.lazy.set_lazy(request.param == "lazy")
    yield request.param
    ct.lazy.set_lazy(was)


def _values(t):
    return np.asarray(t.detach().float().numpy())


def _filled(torch, module):
    """``module`` with the same weights in compat and PyTorch."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.7 + i)
                .sin()
                .view(p.shape)
            )
    return module


def _inputs(torch, shapes, dtype_names):
    rng = np.random.default_rng(0)
    return [
        torch.tensor(rng.standard_normal(s).astype(np.float32)).to(getattr(torch, name))
        for s, name in zip(shapes, dtype_names, strict=True)
    ]


# (op, input shapes, input dtypes): each run under autocast("cpu", bfloat16)
OPS = {
    "linear": (lambda t, F, a, b, c: F.linear(a, b, c), [(4, 3), (5, 3), (5,)]),
    "matmul": (lambda t, F, a, b: a @ b, [(2, 4, 3), (3, 5)]),
    "mm": (lambda t, F, a, b: t.mm(a, b), [(4, 3), (3, 5)]),
    "bmm": (lambda t, F, a, b: a.bmm(b), [(2, 4, 3), (2, 3, 5)]),
    "addmm": (lambda t, F, a, b, c: t.addmm(a, b, c), [(4, 5), (4, 3), (3, 5)]),
    "baddbmm": (
        lambda t, F, a, b, c: t.baddbmm(a, b, c),
        [(2, 4, 5), (2, 4, 3), (2, 3, 5)],
    ),
    "conv2d": (
        lambda t, F, a, b, c: F.conv2d(a, b, c, padding=1),
        [(1, 2, 5, 5), (3, 2, 3, 3), (3,)],
    ),
    "conv1d": (lambda t, F, a, b: F.conv1d(a, b), [(1, 2, 6), (3, 2, 2)]),
    "conv_transpose2d": (
        lambda t, F, a, b: F.conv_transpose2d(a, b),
        [(1, 2, 4, 4), (2, 3, 2, 2)],
    ),
    "prelu": (lambda t, F, a, b: F.prelu(a, b), [(2, 3), (1,)]),
    "sdpa": (
        lambda t, F, a, b, c: F.scaled_dot_product_attention(a, b, c),
        [(2, 3, 4)] * 3,
    ),
    "einsum_contracting": (
        lambda t, F, a, b: t.einsum("ij,jk->ik", a, b),
        [(4, 3), (3, 5)],
    ),
    "einsum_elementwise": (
        lambda t, F, a, b: t.einsum("ij,ij->ij", a, b),
        [(4, 3), (4, 3)],
    ),
    "tensordot": (lambda t, F, a, b: t.tensordot(a, b, 1), [(4, 3), (3, 5)]),
    "inner_vectors": (lambda t, F, a, b: t.inner(a, b), [(4,), (4,)]),
    "dot": (lambda t, F, a, b: t.dot(a, b), [(4,), (4,)]),
    "relu": (lambda t, F, a: F.relu(a), [(4, 3)]),
    "softmax": (lambda t, F, a: a.softmax(-1), [(4, 3)]),
    "sum": (lambda t, F, a: a.sum(), [(4, 3)]),
    "prod": (lambda t, F, a: a.prod(), [(4, 3)]),
    "trace": (lambda t, F, a: a.trace(), [(4, 4)]),
    "cdist": (lambda t, F, a, b: t.cdist(a, b), [(4, 3), (5, 3)]),
    "mse_loss": (lambda t, F, a, b: F.mse_loss(a, b), [(4, 3), (4, 3)]),
    "l1_loss": (lambda t, F, a, b: F.l1_loss(a, b), [(4, 3), (4, 3)]),
    "smooth_l1_loss": (lambda t, F, a, b: F.smooth_l1_loss(a, b), [(4, 3), (4, 3)]),
    "cross_entropy": (
        lambda t, F, a: F.cross_entropy(a, t.tensor([0, 2, 1, 0])),
        [(4, 3)],
    ),
    "kl_div": (
        lambda t, F, a, b: F.kl_div(a, b.softmax(-1), reduction="batchmean"),
        [(4, 3), (4, 3)],
    ),
    "bce_with_logits": (
        lambda t, F, a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
        [(4, 3), (4, 3)],
    ),
    "binary_cross_entropy": (
        lambda t, F, a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
        [(4, 3), (4, 3)],
    ),
    "cat": (lambda t, F, a, b: t.cat([a, b]), [(2, 3), (2, 3)]),
    "stack": (lambda t, F, a, b: t.stack([a, b]), [(2, 3), (2, 3)]),
    "lstm": (lambda t, F, a: _filled(t, t.nn.LSTM(3, 2))(a)[0], [(4, 2, 3)]),
    "rnn": (lambda t, F, a: _filled(t, t.nn.RNN(3, 2))(a)[1], [(4, 2, 3)]),
    "gru": (lambda t, F, a: _filled(t, t.nn.GRU(3, 2))(a)[0], [(4, 2, 3)]),
}
MODULES = {"lstm", "rnn", "gru"}  # PyTorch refuses inputs unlike their weights
DTYPES = [("float32",) * 3, ("bfloat16",) * 3, ("bfloat16", "float32", "float32")]


@pytest.mark.parametrize("dtypes", DTYPES, ids=["f32", "bf16", "mixed"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_an_op_under_cpu_autocast_gives_pytorchs_dtype_and_values(name, dtypes, mode):
    if name in MODULES and dtypes[0] != "float32":
        pytest.skip("an input unlike the weights: torch's ValueError, not autocast")
    fn, shapes = OPS[name]
    results = []
    for torch in (ct, pt):
        torch.manual_seed(0)
        args = _inputs(torch, shapes, dtypes[: len(shapes)])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            try:
                out = fn(torch, torch.nn.functional, *args)
            except (RuntimeError, ValueError) as e:  # dtypes torch refuses
                out = e
        results.append(out)
    ours, theirs = results
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs)
        return
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=2e-2, atol=2e-2)


def test_promoting_a_float16_in_a_bfloat16_region_raises_pytorchs_error():
    for torch in (ct, pt):
        a, b = torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.float16)
        expected = pytest.raises(RuntimeError, match="Unexpected floating ScalarType")
        with torch.autocast("cpu"), expected:
            torch.cat([a, b])


def test_float64_and_integer_inputs_are_not_cast():
    for torch in (ct, pt):
        x = torch.ones(2, 2, dtype=torch.float64)
        n = torch.ones(2, 2, dtype=torch.int64)
        with torch.autocast("cpu"):
            assert (x @ x).dtype == torch.float64
            assert (n @ n).dtype == torch.int64


def test_in_place_and_out_variants_are_not_autocast(mode):
    got = []
    for torch in (ct, pt):
        a, b, c = (torch.arange(9.0).view(3, 3).mul(k).sin() for k in (1, 2, 3))
        with torch.autocast("cpu"):
            a.addmm_(b, c)
            out = torch.empty(3, 3)
            torch.matmul(b, c, out=out)
        assert a.dtype == out.dtype == torch.float32
        got.append((_values(a), _values(out)))
    for ours, theirs in zip(*got, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _states(torch):
    seen = []
    with torch.autocast("cpu"):
        seen.append((torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled()))
        with torch.autocast("cpu", dtype=torch.float16):
            seen.append(str(torch.get_autocast_dtype("cpu")))
            with torch.autocast("cpu", enabled=False):
                seen.append(torch.is_autocast_enabled("cpu"))
                seen.append(str((torch.ones(2, 2) @ torch.ones(2, 2)).dtype))
                with torch.autocast("cpu"):  # dtype None: the current one
                    seen.append(str((torch.ones(2, 2) @ torch.ones(2, 2)).dtype))
        seen.append(str(torch.get_autocast_dtype("cpu")))
    seen.append(
        (torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu")))
    )
    return [str(s).replace("torch.", "") for s in seen]


def test_nested_regions_switch_and_restore_state_as_pytorchs():
    assert _states(ct) == _states(pt)


def test_the_decorator_form_autocasts_the_call_and_restores_after():
    for torch in (ct, pt):

        @torch.autocast("cpu")
        def product(a, b):
            return a @ b

        assert product(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16
        assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("cache", [True, False])
def test_the_weight_cache_changes_nothing_and_grads_keep_the_weights_dtype(cache, mode):
    got = []
    for torch in (ct, pt):
        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 3)
        with torch.no_grad():
            layer.weight.copy_(torch.arange(9.0).view(3, 3).sin())
            layer.bias.copy_(torch.arange(3.0).cos())
        x = torch.arange(6.0).view(2, 3).cos()
        with torch.autocast("cpu", cache_enabled=cache):
            y = layer(layer(x))  # the weight's cast used twice
            loss = (y.float() ** 2).sum()
        loss.backward()
        assert y.dtype == torch.bfloat16 and layer.weight.grad.dtype == torch.float32
        got.append((_values(y), _values(layer.weight.grad), _values(layer.bias.grad)))
    for ours, theirs in zip(*got, strict=True):  # bfloat16 sums: a few ulps
        scale = np.abs(theirs).max()
        np.testing.assert_allclose(ours, theirs, rtol=2e-2, atol=1e-2 * scale)


def _scaled_square(torch):
    class ScaledSquare(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x @ x) * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            seen.append(torch.is_autocast_enabled("cpu"))
            return 2 * (g @ x.t() + x.t() @ g)

    seen: list = []
    x = torch.eye(2, requires_grad=True)
    with torch.autocast("cpu"):
        y = ScaledSquare.apply(x.bfloat16())
        z = torch.mm(x, x)
    (y.sum() + z.float().sum()).backward()
    return str(y.dtype), str(z.dtype), seen, _values(x.grad).tolist()


def test_custom_fwd_casts_inputs_and_custom_bwd_runs_as_forward_did(mode):
    assert _scaled_square(ct) == _scaled_square(pt)


def _train(torch, steps=3):
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.7 + i)
                .sin()
                .view(p.shape)
                * 0.5
            )
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    x = torch.linspace(-1, 1, 24).view(6, 4)
    target = torch.linspace(1, -1, 12).view(6, 2)
    losses = []
    for _ in range(steps):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(net(x), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        losses.append(loss.item())
    return (
        losses,
        [_values(p) for p in net.parameters()],
        [str(p.dtype) for p in net.parameters()],
    )


def test_a_mixed_precision_training_loop_follows_pytorchs(mode):
    ours, theirs = _train(ct), _train(pt)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-2)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)
    assert ours[2] == theirs[2] == ["torch.float32"] * 4


def test_cuda_autocast_without_a_gpu_warns_and_leaves_ops_alone():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ct.autocast("cuda"):
            assert not ct.is_autocast_enabled("cuda")
            assert (ct.ones(2, 2) @ ct.ones(2, 2)).dtype == ct.float32
    assert "CUDA is not available" in str(caught[0].message)
