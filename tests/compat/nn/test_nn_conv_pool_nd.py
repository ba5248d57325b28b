"""compat's 1-d and 3-d convolutions and poolings against real PyTorch: module
options, padding modes, weight names and init bounds, reprs, output_size,
unpooling, LP pooling and the errors the OpInfo samples do not reach.

Each case is a function of the torch module (real or compat) run on both, as in
``test_nn_layers``.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_layers import forward_and_grads
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(3)
X1 = RNG.standard_normal((2, 4, 9)).astype(np.float32)
X3 = RNG.standard_normal((2, 4, 5, 6, 4)).astype(np.float32)

# -- convolutions ----------------------------------------------------------------------

CONVS = {
    "1d_stride_pad": (lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1), X1),
    "1d_dilated_groups": (
        lambda nn: nn.Conv1d(4, 4, 3, dilation=2, groups=2, bias=False),
        X1,
    ),
    "1d_same": (lambda nn: nn.Conv1d(4, 3, 4, padding="same", dilation=2), X1),
    "1d_reflect": (
        lambda nn: nn.Conv1d(4, 3, 3, padding=2, padding_mode="reflect"),
        X1,
    ),
    "1d_circular_same": (
        lambda nn: nn.Conv1d(4, 3, 4, padding="same", padding_mode="circular"),
        X1,
    ),
    "3d_rect": (
        lambda nn: nn.Conv3d(4, 5, (2, 3, 1), stride=(1, 2, 1), padding=(1, 0, 2)),
        X3,
    ),
    "3d_valid_groups": (lambda nn: nn.Conv3d(4, 8, 2, padding="valid", groups=4), X3),
    "3d_replicate": (
        lambda nn: nn.Conv3d(4, 2, 3, padding=1, padding_mode="replicate"),
        X3,
    ),
    "3d_reflect_same": (
        lambda nn: nn.Conv3d(4, 2, 2, padding="same", padding_mode="reflect"),
        X3,
    ),
    "t1d_output_padding": (
        lambda nn: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1),
        X1,
    ),
    "t1d_groups_dilated": (
        lambda nn: nn.ConvTranspose1d(4, 6, 3, groups=2, dilation=2, bias=False),
        X1,
    ),
    "t3d_rect": (
        lambda nn: nn.ConvTranspose3d(
            4,
            3,
            (2, 3, 2),
            stride=(2, 1, 3),
            padding=(0, 1, 1),
            output_padding=(1, 0, 2),
        ),
        X3,
    ),
}


UNBATCHED = {"1d_reflect", "3d_replicate", "t1d_output_padding"}


@pytest.mark.parametrize("name", CONVS)
def test_conv_nd_values_gradients_and_repr_match_torch(name):
    make, x = CONVS[name]
    check(forward_and_grads(lambda torch: make(torch.nn), x))
    if name in UNBATCHED:
        check(forward_and_grads(lambda torch: make(torch.nn), x[0]))
    check(lambda torch: repr(make(torch.nn)))


@pytest.mark.parametrize(
    "cls", ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose3d"]
)
def test_conv_nd_parameters_are_named_shaped_and_bounded_as_torch(cls):
    def params(torch):
        module = getattr(torch.nn, cls)(4, 6, 3, groups=2)
        return {k: tuple(v.shape) for k, v in module.state_dict().items()}

    check(params)
    module = getattr(ct.nn, cls)(4, 6, 3, groups=2)
    fan_in = module.weight.shape[1] * 3 ** (module.weight.dim() - 2)
    for p in (module.weight, module.bias):
        assert np.abs(p.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
    assert module.weight.detach().numpy().std() > 0.4 / np.sqrt(fan_in)


def test_conv_padding_modes_record_torchs_pad_of_their_rank():
    def grad_fn(torch):
        names = []
        for cls, x in (("Conv1d", X1), ("Conv3d", X3)):
            for mode in ("reflect", "replicate"):
                conv = getattr(torch.nn, cls)(4, 2, 3, padding=1, padding_mode=mode)
                y = conv(torch.tensor(x, requires_grad=True))
                names.append(type(y.grad_fn.next_functions[0][0]).__name__)
        return names

    check(grad_fn)


@pytest.mark.parametrize(
    ("cls", "x", "size"),
    [
        ("ConvTranspose1d", X1, [18]),
        ("ConvTranspose1d", X1, [2, 6, 17]),
        ("ConvTranspose1d", X1[0], [6, 18]),
        ("ConvTranspose3d", X3, [10, 12, 8]),
        ("ConvTranspose3d", X3, [9, 11]),  # too few
        ("ConvTranspose3d", X3, [10, 14, 8]),  # out of range
    ],
)
def test_conv_transpose_output_size_matches_torch(cls, x, size):
    def fn(torch):
        conv = getattr(torch.nn, cls)(4, 6, 3, stride=2, padding=1, bias=False)
        conv.weight.data.fill_(0.1)
        return conv(torch.tensor(x), output_size=size)

    check(fn)


CONV_ERRORS = [
    lambda F, t: F.conv1d(t(2, 4, 5, 5), t(6, 4, 3)),
    lambda F, t: F.conv1d(t(2, 4, 2), t(6, 4, 3)),
    lambda F, t: F.conv3d(t(2, 4, 2, 5, 5), t(6, 4, 3, 3, 3)),
    lambda F, t: F.conv1d(t(2, 4, 5), t(6, 4, 3), stride=(1, 1)),
    lambda F, t: F.conv1d(t(2, 4, 5), t(6, 4, 3), stride=2, padding="same"),
    lambda F, t: F.conv1d(t(2, 4, 5), t(6, 3, 3)),
    lambda F, t: F.conv3d(t(2, 4, 5, 5, 5), t(6, 4, 3, 3, 3), padding=-1),
    lambda F, t: F.conv_transpose1d(t(2, 4, 5), t(4, 6, 3), output_padding=2, stride=2),
    lambda F, t: F.conv_transpose3d(
        t(2, 4, 5, 5, 5), t(4, 6, 3, 3, 3), output_padding=2, stride=2
    ),
    lambda F, t: F.conv_transpose3d(t(2, 4, 5, 5, 5), t(4, 6, 3, 3, 3), groups=0),
]


@pytest.mark.parametrize("case", CONV_ERRORS)
def test_conv_nd_errors_match_torch(case):
    check(lambda torch: case(torch.nn.functional, torch.ones))


@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.Conv1d(4, 3, 3, padding=9, padding_mode="reflect")(nn.x1),
        lambda nn: nn.Conv3d(4, 3, 3, padding=1, padding_mode="reflect")(nn.x1),
        lambda nn: nn.Conv3d(4, 3, 3, padding=7, padding_mode="circular")(nn.x3),
        lambda nn: nn.ConvTranspose3d(4, 3, 3, padding_mode="reflect"),
        lambda nn: nn.Conv1d(4, 3, 3, padding="full"),
        lambda nn: nn.Conv3d(4, 3, 3, stride=2, padding="same"),
        lambda nn: nn.ConvTranspose1d(4, 3, 3, groups=3),
    ],
)
def test_conv_nd_module_errors_match_torch(make):
    def fn(torch):
        nn = type("nn", (), {})()
        for name in dir(torch.nn):
            setattr(nn, name, getattr(torch.nn, name))
        nn.x1, nn.x3 = torch.tensor(X1), torch.tensor(X3)
        return make(nn)

    check(fn)


# -- max, average, adaptive and LP pooling ---------------------------------------------

POOLS = {
    "max1d": (lambda nn: nn.MaxPool1d(3, 2, 1, dilation=2, ceil_mode=True), X1),
    "max1d_indices": (lambda nn: nn.MaxPool1d(2, return_indices=True), X1),
    "max3d": (lambda nn: nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0)), X3),
    "max3d_indices_ceil": (
        lambda nn: nn.MaxPool3d(2, ceil_mode=True, return_indices=True),
        X3,
    ),
    "avg1d": (lambda nn: nn.AvgPool1d(3, 2, 1, ceil_mode=True), X1),
    "avg1d_no_pad_count": (
        lambda nn: nn.AvgPool1d(4, 3, 2, count_include_pad=False),
        X1,
    ),
    "avg3d": (lambda nn: nn.AvgPool3d((2, 3, 2), 2, (1, 1, 0), ceil_mode=True), X3),
    "avg3d_divisor": (lambda nn: nn.AvgPool3d(2, 1, 1, divisor_override=3), X3),
    "adaptive_avg1d": (lambda nn: nn.AdaptiveAvgPool1d(4), X1),
    "adaptive_avg3d_none": (lambda nn: nn.AdaptiveAvgPool3d((None, 4, 3)), X3),
    "adaptive_max1d": (lambda nn: nn.AdaptiveMaxPool1d(5, return_indices=True), X1),
    "adaptive_max3d": (lambda nn: nn.AdaptiveMaxPool3d((2, None, 1), True), X3),
    "lp1d": (lambda nn: nn.LPPool1d(2, 3, 2), X1),
    "lp2d_inf": (lambda nn: nn.LPPool2d(float("inf"), (2, 3)), X3[0]),
    "lp3d": (lambda nn: nn.LPPool3d(3, 2, ceil_mode=True), np.abs(X3)),
}


@pytest.mark.parametrize("name", POOLS)
def test_pool_nd_values_gradients_and_repr_match_torch(name):
    make, x = POOLS[name]

    def run(torch):
        pool = make(torch.nn)
        xt = torch.tensor(x, requires_grad=True)
        out = pool(xt)
        values = out[0] if isinstance(out, tuple) else out
        values.sum().backward()
        return out, xt.grad

    check(run)
    check(lambda torch: repr(make(torch.nn)))


UNPOOLS = {
    "1d": (
        lambda nn: (
            nn.MaxPool1d(2, 2, 1, return_indices=True),
            nn.MaxUnpool1d(2, 2, 1),
        ),
        X1,
    ),
    "2d": (
        lambda nn: (nn.MaxPool2d(3, 2, return_indices=True), nn.MaxUnpool2d(3, 2)),
        X3[0],
    ),
    "3d": (lambda nn: (nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)), X3),
}


@pytest.mark.parametrize("name", UNPOOLS)
@pytest.mark.parametrize("size", ["default", "given"])
def test_max_unpool_inverts_max_pool_as_torch(name, size):
    make, x = UNPOOLS[name]

    def run(torch):
        # Where the indices do not fit the default output, the error names one
        # invalid index: on several threads torch's pick is a race, so torch runs
        # on one thread here, whose pick (the last) compat makes always.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            pool, unpool = make(torch.nn)
            xt = torch.tensor(x, requires_grad=True)
            values, indices = pool(xt)
            extra = {} if size == "default" else {"output_size": list(xt.shape)}
            out = unpool(values, indices, **extra)
            (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
            return out, xt.grad, repr(unpool)
        finally:
            torch.set_num_threads(threads)

    check(run)


def test_max_unpool_of_repeated_indices_matches_torch():
    def run(torch):
        x = torch.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)
        out = torch.nn.functional.max_unpool1d(
            x, torch.tensor([[[1, 1, 0]]]), 2, output_size=[6]
        )
        (out * torch.arange(6.0)).sum().backward()
        return out, x.grad

    check(run)


POOL_ERRORS = [
    lambda F, t, i: F.max_pool1d(t(2, 3, 4, 4), 2),
    lambda F, t, i: F.max_pool1d(t(2, 3, 4, 4), 2, return_indices=True),
    lambda F, t, i: F.max_pool1d(t(2, 3, 8), (2, 2)),
    lambda F, t, i: F.max_pool1d(t(2, 3, 8), 2, 1, 2),
    lambda F, t, i: F.max_pool1d(t(2, 3, 1), 2),
    lambda F, t, i: F.max_pool1d(t(2, 3, 4).long(), 2),
    lambda F, t, i: F.max_pool3d(t(2, 3, 4), 2),
    lambda F, t, i: F.max_pool3d(t(2, 3, 6, 6, 6), (2, 2)),
    lambda F, t, i: F.max_pool3d(t(2, 3, 6, 6, 6), 2, 1, 0, 0),
    lambda F, t, i: F.max_pool3d(t(2, 3, 1, 4, 4), 2),
    lambda F, t, i: F.avg_pool1d(t(2, 3, 4, 4), 2),
    lambda F, t, i: F.avg_pool1d(t(2, 3, 1), 2),
    lambda F, t, i: F.avg_pool3d(t(2, 3, 1, 4, 4), 2),
    lambda F, t, i: F.avg_pool3d(t(2, 3, 6, 6, 6), 2, divisor_override=0),
    lambda F, t, i: F.avg_pool3d(t(2, 3, 6, 6, 6), 2, 1, 2),
    lambda F, t, i: F.adaptive_avg_pool1d(t(2, 3, 8), (2, 2)),
    lambda F, t, i: F.adaptive_avg_pool3d(t(2, 3, 4), 2),
    lambda F, t, i: F.adaptive_avg_pool3d(t(2, 3, 4, 4, 4), (2, 2)),
    lambda F, t, i: F.adaptive_avg_pool3d(t(2, 3, 0, 4, 4), 2),
    lambda F, t, i: F.adaptive_max_pool1d(t(2, 3, 0), 2),
    lambda F, t, i: F.adaptive_max_pool3d(t(2, 3, 4, 4, 4), -1),
    lambda F, t, i: F.adaptive_max_pool3d(t(2, 3, 4, 4, 4).long(), 2),
    lambda F, t, i: F.max_unpool2d(t(2, 3, 4, 4), i(2, 3, 4, 4) + 100, 2),
    lambda F, t, i: F.max_unpool2d(t(2, 3, 4, 4), i(2, 3, 4, 4).int(), 2),
    lambda F, t, i: F.max_unpool2d(t(2, 3, 4, 4), i(1, 3, 4, 4), 2),
    lambda F, t, i: F.max_unpool2d(t(2, 3, 4, 4), i(2, 3, 4, 4), 2, output_size=(3, 3)),
    lambda F, t, i: F.max_unpool3d(t(3, 2, 2), i(3, 2, 2), 2),
    lambda F, t, i: F.max_unpool3d(t(2, 3, 2, 2, 2), i(2, 3, 2, 2, 2) - 1, 2),
    lambda F, t, i: F.max_unpool1d(t(2, 3, 4), i(2, 3, 4) + 8, 2),
]


@pytest.mark.parametrize("case", POOL_ERRORS)
def test_pool_nd_errors_match_torch(case):
    check(
        lambda torch: case(
            torch.nn.functional,
            torch.ones,
            lambda *s: torch.zeros(*s, dtype=torch.long),
        )
    )


def test_a_small_conv1d_and_conv3d_training_step_matches_torch():
    def step(torch):
        torch.manual_seed(0)
        nn = torch.nn
        net1 = nn.Sequential(
            nn.Conv1d(4, 3, 3, padding=1), nn.MaxPool1d(2), nn.Flatten()
        )
        net3 = nn.Sequential(nn.Conv3d(4, 2, 2), nn.AvgPool3d(2), nn.Flatten())
        for net in (net1, net3):
            for p in net.parameters():
                p.data.copy_(
                    torch.tensor(
                        np.linspace(-0.3, 0.3, p.numel()).reshape(p.shape),
                        dtype=torch.float32,
                    )
                )
        params = [*net1.parameters(), *net3.parameters()]
        opt = torch.optim.SGD(params, lr=0.1)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = (
                net1(torch.tensor(X1)).pow(2).mean()
                + net3(torch.tensor(X3)).pow(2).mean()
            )
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, [p.detach() for p in params]

    check(step)


# -- conv_transpose3d in the order of torch's CPU kernel -----------------------------

# (input, weight, bias, options): ones torch's CPU runs as slow_conv_transpose3d (a
# single image, or an output padding not below the stride), summed in its order.
SLOW_TRANSPOSED = {
    "plain": ((1, 4, 5, 5, 5), (4, 8, 3, 3, 3), False, {}),
    "stride_pad_output_pad": (
        (1, 3, 4, 4, 4),
        (3, 3, 3, 3, 3),
        True,
        dict(stride=2, padding=2, output_padding=1),
    ),
    "groups_dilation_batch": (
        (2, 2, 4, 4, 4),
        (2, 2, 4, 5, 6),
        True,
        dict(
            stride=(3, 2, 1),
            padding=(1, 2, 3),
            output_padding=(2, 3, 1),
            groups=2,
            dilation=4,
        ),
    ),
    "unbatched_mixed": (
        (4, 5, 5, 5),
        (4, 8, 3, 3, 3),
        True,
        dict(
            stride=(1, 2, 3),
            padding=(0, 1, 2),
            output_padding=(0, 1, 2),
            dilation=(2, 1, 1),
        ),
    ),
    "wide_no_bias": ((1, 32, 6, 6, 6), (32, 4, 3, 3, 3), False, dict(padding=1)),
}


@pytest.mark.parametrize("case", SLOW_TRANSPOSED, ids=str)
def test_conv_transpose3d_float32_matches_torch_bit_for_bit(case):
    xs, ws, has_bias, options = SLOW_TRANSPOSED[case]
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * options.get("groups", 1)) if has_bias else None
    cotangent = None
    outs, grads = {}, {}
    for lib in (pt, ct):
        leaves = [
            lib.tensor(a, dtype=lib.float32, requires_grad=True)
            for a in (x, w, b)
            if a is not None
        ]
        bias = leaves[2] if has_bias else None
        y = lib.nn.functional.conv_transpose3d(*leaves[:2], bias, **options)
        if cotangent is None:
            cotangent = rng.standard_normal(tuple(y.shape))
        y.backward(lib.tensor(cotangent, dtype=lib.float32))
        outs[lib] = y.detach().numpy()
        grads[lib] = [t.grad.numpy() for t in leaves]
    np.testing.assert_array_equal(outs[ct], outs[pt])
    for got, want in zip(grads[ct], grads[pt], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * abs(want).max())


@pytest.mark.parametrize(
    "size", [(7, 5), [7, 5], (1, 2, 7, 5), "size", "full size"], ids=repr
)
def test_conv_transpose_output_size_out_of_range_says_what_torch_says(size):
    def fn(torch):
        conv = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        x = torch.zeros(1, 3, 3, 2)
        wanted = {"size": torch.Size([7, 5]), "full size": torch.Size([1, 2, 7, 5])}
        asked = wanted[size] if isinstance(size, str) else size
        try:
            conv(x, output_size=asked)
        except ValueError as e:
            return str(e)
        return None

    theirs = fn(pt)
    assert theirs is not None and fn(ct) == theirs
