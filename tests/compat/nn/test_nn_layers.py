"""compat's ``nn`` layers against real PyTorch: activations, BatchNorm, LayerNorm,
Embedding, Dropout2d, average and adaptive pooling, Conv2d/MaxPool2d options.

Each case is a function of the torch module (real or compat) run on both, with
the same weights (drawn by NumPy, copied in) and inputs; outputs, gradients,
running statistics and state_dicts are compared as plain values.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(1)
X = RNG.standard_normal((2, 4, 6, 7)).astype(np.float32)
KINKS = np.array([-30.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 6.0, 7.0, 25.0], np.float32)


def fill(module, torch):
    """Give ``module``'s float parameters NumPy draws seeded by their names."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return module


def forward_and_grads(make, x_np=X):
    """``fn(torch)``: output, input grad and parameter grads of ``make(torch)``."""

    def fn(torch):
        module = fill(make(torch), torch)
        x = torch.tensor(x_np, requires_grad=True)
        out = module(x)
        (out * torch.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum(
            dtype=out.dtype
        ).backward()
        grads = {n: p.grad for n, p in module.named_parameters()}
        return out, x.grad, grads

    return fn


# -- activations -------------------------------------------------------------------

ACTIVATIONS = {
    "LeakyReLU": lambda nn: nn.LeakyReLU(),
    "LeakyReLU_0.2": lambda nn: nn.LeakyReLU(0.2),
    "GELU": lambda nn: nn.GELU(),
    "GELU_tanh": lambda nn: nn.GELU("tanh"),
    "ELU": lambda nn: nn.ELU(),
    "ELU_0.5": lambda nn: nn.ELU(0.5),
    "Softplus": lambda nn: nn.Softplus(),
    "Softplus_beta2": lambda nn: nn.Softplus(beta=2.0, threshold=5.0),
    "SiLU": lambda nn: nn.SiLU(),
    "Hardtanh": lambda nn: nn.Hardtanh(),
    "Hardtanh_-2_2": lambda nn: nn.Hardtanh(-2.0, 2.0),
    "ReLU6": lambda nn: nn.ReLU6(),
    "Tanh": lambda nn: nn.Tanh(),
    "Sigmoid": lambda nn: nn.Sigmoid(),
    "LogSoftmax": lambda nn: nn.LogSoftmax(dim=0),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_values_and_gradients_match_torch_at_the_kinks(name):
    check(forward_and_grads(lambda torch: ACTIVATIONS[name](torch.nn), KINKS))


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_repr_matches_torch(name):
    check(lambda torch: repr(ACTIVATIONS[name](torch.nn)))


@pytest.mark.parametrize(
    "name", ["leaky_relu", "elu", "silu", "hardtanh", "relu6", "gelu", "logsigmoid"]
)
def test_activation_refuses_integers_as_torch(name):
    check(lambda torch: getattr(torch.nn.functional, name)(torch.arange(3)) * 1)


def test_inplace_activations_write_into_their_input_as_torch():
    def fn(torch):
        x = torch.tensor(KINKS)
        outs = [
            torch.nn.LeakyReLU(0.1, inplace=True)(x.clone()),
            torch.nn.ELU(inplace=True)(x.clone()),
            torch.nn.ReLU6(inplace=True)(x.clone()),
            torch.nn.SiLU(inplace=True)(x.clone()),
        ]
        y = x.clone()
        torch.nn.functional.hardtanh(y, -1.5, 1.5, inplace=True)
        return [*outs, y, repr(torch.nn.LeakyReLU(0.1, inplace=True))]

    check(fn)


def test_gelu_refuses_an_unknown_approximation_as_torch():
    check(lambda torch: torch.nn.functional.gelu(torch.ones(2), approximate="x"))


def test_softmax_with_a_dtype_casts_first_as_torch():
    def fn(torch):
        x = torch.tensor(X[0, 0], requires_grad=True)
        y = torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float64)
        y.sum().backward()
        softmax = torch.nn.functional.softmax
        # a third positional argument is torch's _stacklevel, not a dtype
        return y, x.grad, softmax(x, -1, dtype=torch.float64), softmax(x, -1, 3)

    check(fn)


# -- BatchNorm ---------------------------------------------------------------------


def batchnorm_steps(make, x_np, steps=3, train=True):
    """Outputs, grads, running stats and state_dict after ``steps`` forwards."""

    def fn(torch):
        module = fill(make(torch.nn), torch).train(train)
        results = []
        for step in range(steps):
            x = torch.tensor(x_np * (step + 1) + step, requires_grad=True)
            out = module(x)
            (out * out).sum().backward()
            results.append((out, x.grad))
        grads = {n: p.grad for n, p in module.named_parameters()}
        state = {k: v for k, v in module.state_dict().items()}
        return results, grads, state, list(module.state_dict())

    return fn


BATCHNORMS = {
    "2d": (lambda nn: nn.BatchNorm2d(4), X),
    "2d_momentum_none": (lambda nn: nn.BatchNorm2d(4, momentum=None), X),
    "2d_no_affine": (lambda nn: nn.BatchNorm2d(4, affine=False, eps=1e-3), X),
    "2d_no_bias": (lambda nn: nn.BatchNorm2d(4, bias=False), X),
    "2d_untracked": (lambda nn: nn.BatchNorm2d(4, track_running_stats=False), X),
    "1d_2d_input": (lambda nn: nn.BatchNorm1d(7, momentum=0.3), X[:, 0, 0]),
    "1d_3d_input": (lambda nn: nn.BatchNorm1d(4), X[:, :, 0]),
}


@pytest.mark.parametrize("name", BATCHNORMS)
def test_batchnorm_training_steps_match_torch(name):
    make, x = BATCHNORMS[name]
    check(batchnorm_steps(make, x))


@pytest.mark.parametrize("name", BATCHNORMS)
def test_batchnorm_in_eval_mode_matches_torch(name):
    make, x = BATCHNORMS[name]
    check(batchnorm_steps(make, x, steps=1, train=False))


def test_batchnorm_eval_after_training_uses_the_running_stats():
    def fn(torch):
        bn = torch.nn.BatchNorm2d(4)
        for step in range(2):
            bn(torch.tensor(X + step))
        bn.eval()
        return bn(torch.tensor(X[:1])), bn.running_var, bn.num_batches_tracked

    check(fn)


def test_batchnorm_state_dict_loads_into_a_fresh_module():
    def fn(torch):
        bn = torch.nn.BatchNorm1d(7)
        bn(torch.tensor(X[:, 0, 0]))
        fresh = torch.nn.BatchNorm1d(7)
        keys = fresh.load_state_dict(bn.state_dict())
        return fresh.state_dict(), repr(keys), fresh.num_batches_tracked.dtype

    check(fn)


@pytest.mark.parametrize(
    "case",
    [
        lambda torch: torch.nn.BatchNorm1d(3)(torch.ones(2, 3, 4, 5)),
        lambda torch: torch.nn.BatchNorm2d(3)(torch.ones(2, 3, 4)),
        lambda torch: torch.nn.BatchNorm1d(3)(torch.ones(1, 3)),
        lambda torch: torch.nn.BatchNorm1d(4)(torch.ones(2, 3)),
        lambda torch: torch.nn.functional.batch_norm(torch.ones(2, 3), None, None),
        lambda torch: torch.nn.BatchNorm1d(3, eps=0.0)(torch.ones(2, 3)),
        lambda torch: torch.nn.BatchNorm1d(3, eps=-1.0).eval()(torch.ones(2, 3)),
    ],
)
def test_batchnorm_errors_match_torch(case):
    check(case)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize(
    "kwargs", [{}, {"affine": False}, {"track_running_stats": False}]
)
@pytest.mark.parametrize("training", [True, False])
def test_batchnorm_of_another_dtype_than_its_parameters_as_torch(
    dtype, kwargs, training
):
    # torch: a half input keeps float32 parameters and stays half; a float64 one
    # is refused ("mixed dtype"). Both compute in float32 and round to the input's
    # dtype, so values agree to its precision.
    def case(torch):
        bn = torch.nn.BatchNorm2d(4, **kwargs).train(training)
        out = bn(torch.tensor(X).to(getattr(torch, dtype)))
        return out, {k: v.dtype for k, v in bn.state_dict().items()}

    check(lambda torch: (lambda r: (r[0].dtype, tuple(r[0].shape), r[1]))(case(torch)))
    if dtype != "float64":
        (ours, _), (theirs, _) = case(ct), case(pt)
        np.testing.assert_allclose(
            ours.detach().float().numpy(),
            theirs.detach().float().numpy(),
            rtol=1e-2 if dtype == "bfloat16" else 2e-3,
            atol=1e-3,
        )


def test_batchnorm_repr_matches_torch():
    check(
        lambda torch: [
            repr(torch.nn.BatchNorm2d(64)),
            repr(torch.nn.BatchNorm1d(3, 1e-3, None, False, False)),
        ]
    )


def test_functional_batch_norm_updates_given_running_stats():
    def fn(torch):
        mean, var = torch.zeros(4), torch.ones(4)
        x = torch.tensor(X, requires_grad=True)
        w = torch.tensor([0.5, -1.0, 2.0, 1.5], requires_grad=True)
        y = torch.nn.functional.batch_norm(x, mean, var, w, None, True, 0.2, 1e-3)
        y.pow(2).sum().backward()
        return y, mean, var, x.grad, w.grad

    check(fn)


# -- LayerNorm ---------------------------------------------------------------------

LAYERNORMS = {
    "last": lambda nn: nn.LayerNorm(7),
    "last_two": lambda nn: nn.LayerNorm([6, 7], eps=1e-3),
    "no_affine": lambda nn: nn.LayerNorm(7, elementwise_affine=False),
    "no_bias": lambda nn: nn.LayerNorm((7,), bias=False),
}


@pytest.mark.parametrize("name", LAYERNORMS)
def test_layernorm_values_and_gradients_match_torch(name):
    check(forward_and_grads(lambda torch: LAYERNORMS[name](torch.nn)))


@pytest.mark.parametrize("name", LAYERNORMS)
def test_layernorm_repr_and_state_dict_keys_match_torch(name):
    check(lambda torch: (repr(m := LAYERNORMS[name](torch.nn)), list(m.state_dict())))


def test_layer_norm_shape_errors_match_torch():
    check(lambda torch: torch.nn.functional.layer_norm(torch.ones(2, 3), (5,)))
    check(
        lambda torch: torch.nn.functional.layer_norm(
            torch.ones(2, 3), (2, 3), torch.ones(3)
        )
    )


# -- Embedding ---------------------------------------------------------------------

INDICES = np.array([[1, 0, 3], [3, 3, 9]])


def embedding_case(**kwargs):
    def fn(torch):
        emb = fill(torch.nn.Embedding(10, 3, **kwargs), torch)
        out = emb(torch.tensor(INDICES))
        (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
        return out, emb.weight.grad, emb.weight, repr(emb)

    return fn


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"padding_idx": 3},
        {"padding_idx": -7},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
        {"max_norm": 1.0},
        {"max_norm": 2.0, "norm_type": 1.0},
    ],
)
def test_embedding_values_and_gradients_match_torch(kwargs):
    check(embedding_case(**kwargs))


def test_embedding_padding_row_starts_at_zero():
    check(lambda torch: torch.nn.Embedding(5, 2, padding_idx=2).weight[2])


@pytest.mark.parametrize(
    "case",
    [
        lambda torch: torch.nn.functional.embedding(
            torch.tensor([1.0]), torch.ones(3, 2)
        ),
        lambda torch: torch.nn.functional.embedding(
            torch.tensor([5]), torch.ones(3, 2)
        ),
        lambda torch: torch.nn.Embedding(3, 2, padding_idx=4),
    ],
)
def test_embedding_errors_match_torch(case):
    check(case)


def test_embedding_from_pretrained_freezes_by_default():
    def fn(torch):
        emb = torch.nn.Embedding.from_pretrained(torch.tensor(X[0, 0]))
        return emb(torch.tensor([1, 2])), emb.weight.requires_grad, repr(emb)

    check(fn)


# -- EmbeddingBag ------------------------------------------------------------------

BAG_INDICES = np.array([1, 0, 3, 3, 3, 9, 2])


def embedding_bag_case(offsets=(0, 2, 2, 5), per_sample=False, **kwargs):
    def fn(torch):
        bag = fill(torch.nn.EmbeddingBag(10, 3, **kwargs), torch)
        weights = torch.linspace(0.5, 2.0, 7) if per_sample else None
        out = bag(torch.tensor(BAG_INDICES), torch.tensor(offsets), weights)
        (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
        return out, bag.weight.grad, repr(bag)

    return fn


@pytest.mark.parametrize(
    "kwargs",
    [
        {},  # mean, with an empty bag
        {"mode": "sum"},
        {"mode": "max"},
        {"mode": "sum", "per_sample": True},
        {"padding_idx": 3},
        {"mode": "max", "padding_idx": 1},
        {"include_last_offset": True, "offsets": (0, 2, 5, 7)},
    ],
)
def test_embedding_bag_values_and_gradients_match_torch(kwargs):
    check(embedding_bag_case(**kwargs))


def test_embedding_bag_of_2d_input_bags_each_row_as_torch():
    def fn(torch):
        bag = fill(torch.nn.EmbeddingBag(10, 3, mode="max"), torch)
        return bag(torch.tensor(INDICES)), torch.nn.functional.embedding_bag(
            torch.tensor(INDICES), bag.weight, mode="sum"
        )

    check(fn)


@pytest.mark.parametrize(
    "case",
    [
        lambda torch: torch.nn.EmbeddingBag(3, 2)(torch.tensor([0, 1])),
        lambda torch: torch.nn.EmbeddingBag(3, 2)(
            torch.tensor([0, 1]), torch.tensor([1])
        ),
        lambda torch: torch.nn.EmbeddingBag(3, 2)(
            torch.tensor([[0, 1]]), torch.tensor([0])
        ),
        lambda torch: torch.nn.EmbeddingBag(3, 2)(
            torch.tensor([0, 5]), torch.tensor([0])
        ),
    ],
)
def test_embedding_bag_errors_match_torch(case):
    check(case)


# -- Dropout2d ---------------------------------------------------------------------


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    x = ct.ones(8, 16, 3, 3)
    ct.manual_seed(0)
    y = ct.nn.Dropout2d(0.25)(x).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.isin(per_channel, np.float32([0.0, 1 / 0.75])).all()
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    assert 0 < (per_channel[..., 0] == 0).mean() < 0.5


def test_dropout2d_in_eval_mode_and_its_repr_match_torch():
    check(
        lambda torch: (
            torch.nn.Dropout2d(0.3).eval()(torch.tensor(X)),
            repr(torch.nn.Dropout2d()),
        )
    )


# -- pooling -----------------------------------------------------------------------

AVG_POOLS = {
    "k2": lambda nn: nn.AvgPool2d(2),
    "k3_s2_p1": lambda nn: nn.AvgPool2d(3, 2, 1),
    "ceil": lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True),
    "no_pad_count": lambda nn: nn.AvgPool2d(3, 2, 1, True, count_include_pad=False),
    "divisor": lambda nn: nn.AvgPool2d((2, 3), (1, 2), (1, 0), divisor_override=5),
    "rect_ceil": lambda nn: nn.AvgPool2d((3, 2), (2, 3), (1, 1), True, False),
}


@pytest.mark.parametrize("name", AVG_POOLS)
def test_avg_pool_values_gradients_and_repr_match_torch(name):
    check(forward_and_grads(lambda torch: AVG_POOLS[name](torch.nn)))
    check(lambda torch: repr(AVG_POOLS[name](torch.nn)))


def test_avg_pool_of_integers_truncates_as_torch():
    check(
        lambda torch: torch.nn.functional.avg_pool2d(
            torch.arange(-8, 8).view(1, 4, 4), 3, 1, 1
        )
    )


ADAPTIVE_SIZES = [1, 3, (2, 4), (None, 3), (4, None), (6, 7), (4, 5)]


@pytest.mark.parametrize("size", ADAPTIVE_SIZES)
def test_adaptive_avg_pool_matches_torch(size):
    check(forward_and_grads(lambda torch: torch.nn.AdaptiveAvgPool2d(size)))


@pytest.mark.parametrize("size", ADAPTIVE_SIZES)
def test_adaptive_max_pool_matches_torch_with_indices(size):
    check(forward_and_grads(lambda torch: torch.nn.AdaptiveMaxPool2d(size)))

    def fn(torch):
        pool = torch.nn.functional.adaptive_max_pool2d
        return pool(torch.tensor(np.round(X[0])), size, return_indices=True)

    check(fn)


@pytest.mark.parametrize(
    "case",
    [
        lambda torch: torch.nn.functional.adaptive_avg_pool2d(torch.ones(1, 4), 2),
        lambda torch: torch.nn.functional.adaptive_avg_pool2d(
            torch.ones(1, 1, 4, 4), (2, 3, 4)
        ),
        lambda torch: torch.nn.functional.avg_pool2d(
            torch.ones(1, 1, 4, 4), 2, padding=2
        ),
        lambda torch: torch.nn.functional.avg_pool2d(torch.ones(1, 1, 4, 4), 5),
        lambda torch: torch.nn.functional.avg_pool2d(
            torch.ones(1, 1, 4, 4), 2, divisor_override=0
        ),
        lambda torch: repr(torch.nn.AdaptiveAvgPool2d((None, 7))),
        lambda torch: repr(torch.nn.AdaptiveMaxPool2d(1)),
    ],
)
def test_pooling_errors_and_reprs_match_torch(case):
    check(case)


# One bad argument, or two, per call: ATen checks them in an order of its own
# (the rank, then per axis a zero stride, a negative pad, a pad over half the
# kernel; then kernel, stride, dilation, empty axes, the output size).
_POOL_GOOD = {"k": 3, "s": 1, "p": 1, "d": 1, "x": (1, 1, 8, 8)}
_POOL_BAD = {
    "k": [0, -1, -2],
    "s": [0, -2],
    "p": [-1, 2],
    "d": [0],
    "x": [(8,), (2, 8), (1, 1, 1, 8, 8), (0, 8, 8), (1, 0, 8, 8), (0, 1, 8, 8)],
}
_POOL_CASES = [
    (fn, dict(zip(keys, values, strict=True)))
    for fn in ("max_pool2d", "avg_pool2d")
    for keys in [(k,) for k in _POOL_BAD]
    + [("k", "p"), ("s", "p"), ("p", "d")]
    + [("k", "x"), ("s", "x"), ("p", "x"), ("d", "x")]
    for values in itertools.product(*(_POOL_BAD[k] for k in keys))
    if fn == "max_pool2d" or "d" not in keys
]


@pytest.mark.parametrize(("fn", "bad"), _POOL_CASES, ids=str)
def test_pool2d_argument_checks_run_in_torchs_order(fn, bad):
    a = {**_POOL_GOOD, **bad}

    def case(torch):
        pool = getattr(torch.nn.functional, fn)
        extra = (a["d"],) if fn == "max_pool2d" else ()
        return pool(torch.zeros(*a["x"]), a["k"], a["s"], a["p"], *extra)

    check(case)


# -- Conv2d and MaxPool2d options --------------------------------------------------

CONVS = {
    "stride2_pad1": lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=1),
    "rect": lambda nn: nn.Conv2d(4, 5, (2, 3), stride=(2, 1), padding=(1, 2)),
    "dilation": lambda nn: nn.Conv2d(4, 4, 3, dilation=2, bias=False),
    "groups": lambda nn: nn.Conv2d(4, 8, 3, groups=2, padding=1),
    "depthwise": lambda nn: nn.Conv2d(4, 4, 3, groups=4),
    "same": lambda nn: nn.Conv2d(4, 3, (2, 4), padding="same", dilation=(2, 1)),
    "valid": lambda nn: nn.Conv2d(4, 3, 3, padding="valid"),
    "1x1": lambda nn: nn.Conv2d(4, 2, 1, stride=2, bias=False),
}


@pytest.mark.parametrize("name", CONVS)
def test_conv2d_options_match_torch_in_values_gradients_and_repr(name):
    check(forward_and_grads(lambda torch: CONVS[name](torch.nn)))
    check(lambda torch: repr(CONVS[name](torch.nn)))


PADDING_MODES = {  # padding_mode: torch's F.pad in that mode, then conv2d
    "p1": lambda nn, mode: nn.Conv2d(4, 3, 3, padding=1, padding_mode=mode),
    "rect_s2": lambda nn, mode: nn.Conv2d(
        4, 3, 3, stride=2, padding=(2, 1), padding_mode=mode, bias=False
    ),
    "same_even_dilated": lambda nn, mode: nn.Conv2d(
        4, 3, (4, 2), padding="same", dilation=(1, 2), padding_mode=mode
    ),
    "valid_groups": lambda nn, mode: nn.Conv2d(
        4, 4, 3, padding="valid", groups=2, padding_mode=mode
    ),
    "as_wide_as_the_image": lambda nn, mode: nn.Conv2d(
        4, 3, 3, padding=(6, 1), padding_mode=mode
    ),
    "wider_than_the_image": lambda nn, mode: nn.Conv2d(
        4, 3, 3, padding=(1, 8), padding_mode=mode
    ),
}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("name", PADDING_MODES)
def test_conv2d_padding_modes_match_torch_in_values_gradients_and_errors(name, mode):
    make = lambda torch: PADDING_MODES[name](torch.nn, mode)  # noqa: E731
    check(forward_and_grads(make))
    check(forward_and_grads(make, X[0]))  # unbatched (C, H, W)
    check(lambda torch: repr(make(torch)))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv2d_padding_mode_records_torchs_pad_and_refuses_other_ranks(mode):
    def grad_fn(torch):
        y = PADDING_MODES["p1"](torch.nn, mode)(torch.tensor(X, requires_grad=True))
        return type(y.grad_fn.next_functions[0][0]).__name__

    check(grad_fn)
    for x in (X[0, 0, 0], X[0, 0], X[None]):
        check(forward_and_grads(lambda torch: PADDING_MODES["p1"](torch.nn, mode), x))


@pytest.mark.parametrize("path", ["whole", "chunked", "no_grad"])
def test_stride_one_conv2d_matches_torch_whole_in_chunks_and_without_grad(
    path, monkeypatch
):
    # compat builds a small batch's patches whole (kept for the backward, or not
    # when nothing needs it) and a large one's in chunks (kernels.conv2d_chunked):
    # a budget of 16 KB makes these 5 images run as 3 chunks of 2, one padded.
    from jaxblitz import kernels

    calls = []
    chunked = kernels.conv2d_chunked
    monkeypatch.setattr(
        kernels, "conv2d_chunked", lambda *a: calls.append(a[-1]) or chunked(*a)
    )
    if path == "chunked":
        monkeypatch.setattr(kernels, "PATCHES_WHOLE_BYTES", 0)
        monkeypatch.setattr(kernels, "PATCHES_CHUNK_BYTES", 1 << 14)
    width = {"whole": 9, "chunked": 10, "no_grad": 11}[path]  # a fresh trace each
    x = RNG.standard_normal((5, 3, 8, width)).astype(np.float32)
    if path == "no_grad":

        def case(torch):
            with torch.no_grad():
                return fill(torch.nn.Conv2d(3, 4, 3), torch)(torch.tensor(x))

        check(case)
    else:
        check(forward_and_grads(lambda torch: torch.nn.Conv2d(3, 4, 3), x))
    assert set(calls) == ({2} if path == "chunked" else set())  # traced, not cached


def test_conv2d_off_the_cpu_runs_xla_convolution_not_im2col(monkeypatch):
    # On a GPU or TPU compat's stride-1 convolution is lax.conv (cuDNN), as the
    # core's lenet there; same values and gradients as torch either way.
    from jaxblitz import kernels
    from jaxblitz.compat.nn import conv

    calls = []
    monkeypatch.setattr(kernels, "im2col_backend", lambda: False)
    monkeypatch.setattr(conv, "_im2col_conv", lambda *a: calls.append(a))
    x = RNG.standard_normal((3, 2, 7, 6)).astype(np.float32)
    check(forward_and_grads(lambda torch: torch.nn.Conv2d(2, 4, 3), x))
    assert calls == []


MAX_POOLS = {
    "k3_s2_p1": lambda nn: nn.MaxPool2d(3, 2, 1),
    "ceil": lambda nn: nn.MaxPool2d(2, ceil_mode=True),
    "rect_dilated": lambda nn: nn.MaxPool2d((2, 3), (1, 2), (1, 1), dilation=(2, 1)),
    "overlap": lambda nn: nn.MaxPool2d(3, 1),
}


@pytest.mark.parametrize("name", MAX_POOLS)
def test_max_pool_options_match_torch_in_values_gradients_and_repr(name):
    check(forward_and_grads(lambda torch: MAX_POOLS[name](torch.nn)))
    check(lambda torch: repr(MAX_POOLS[name](torch.nn)))


# The same for convolutions: one or two bad arguments per call, checked in ATen's
# order (rank; groups; each int list against the weight's rank; signs; operand
# sizes; the kernel against the padded input; empty images, kernel, dilation).
_CONV_BAD = {
    "x": [(8, 8), (2, 8, 8), (1, 3, 8, 8), (0, 2, 8, 8), (1, 2, 2, 2), (1, 2, 0, 8)],
    "w": [(4, 2, 3), (4, 1, 3, 3), (3, 2, 3, 3), (4, 2, 0, 3)],
    "b": [(3,), (4, 1)],
    "s": [0, -1],
    "p": [-1],
    "d": [0, -1],
    "g": [0, 2, 3],
    "op": [1, -1, 3],
}
_CONV_GOOD = {  # a valid call of each
    "conv2d": {"x": (1, 2, 8, 8), "w": (4, 2, 3, 3), "b": (4,)},
    "conv_transpose2d": {"x": (1, 4, 8, 8), "w": (4, 2, 3, 3), "b": (2,)},
}
# torch succeeds or fails inside a kernel on an empty batch with a zero dilation
# or kernel; compat raises its argument error there.
_CONV_KNOWN = {
    ("conv2d", (("x", (0, 2, 8, 8)), ("w", (4, 2, 0, 3)))),
    ("conv2d", (("x", (0, 2, 8, 8)), ("d", 0))),
}
_CONV_CASES = [
    (fn, pairs)
    for fn in _CONV_GOOD
    for r in (1, 2)
    for keys in itertools.combinations(_CONV_BAD, r)
    if fn == "conv_transpose2d" or "op" not in keys
    for values in itertools.product(*(_CONV_BAD[k] for k in keys))
    for pairs in [tuple(zip(keys, values, strict=True))]
    if (fn, pairs) not in _CONV_KNOWN
]


@pytest.mark.parametrize(("fn", "bad"), _CONV_CASES, ids=str)
def test_conv2d_argument_checks_run_in_torchs_order(fn, bad):
    a = {"s": 1, "p": 0, "d": 1, "g": 1, "op": 0, **_CONV_GOOD[fn], **dict(bad)}

    def case(torch):
        F = torch.nn.functional
        x, w, b = (torch.zeros(*a[k]) for k in "xwb")
        if fn == "conv2d":
            return F.conv2d(x, w, b, a["s"], a["p"], a["d"], a["g"])
        return F.conv_transpose2d(x, w, b, a["s"], a["p"], a["op"], a["g"], a["d"])

    check(case)


# -- linear on inputs that are not matrices ------------------------------------------


def _graph(fn, depth):
    """A grad_fn's name and its inputs' graphs, as nested tuples (None for an
    input that needs no gradient), ``depth`` nodes deep."""
    if fn is None or depth == 1:
        return None if fn is None else fn.name()
    return (fn.name(), *(_graph(f, depth - 1) for f, _ in fn.next_functions))


LINEAR_INPUTS = {
    "vector": lambda torch: torch.tensor(X[0, 0, 0, :6]),
    "batch_of_rows": lambda torch: torch.tensor(X[0, :, :, :6]),
    "4d": lambda torch: torch.tensor(X[:, :, :, :6]),
    "transposed": lambda torch: torch.tensor(X[0, :, :, :6]).transpose(0, 1),
    "empty": lambda torch: torch.zeros(2, 0, 6),
}


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", LINEAR_INPUTS)
def test_linear_on_a_vector_or_batch_records_torchs_nodes_and_values(
    name, bias, mode, request
):
    # torch flattens a contiguous input to rows for addmm and views the result
    # back; a strided one goes through matmul and an add; no bias, matmul alone
    # (whose inner nodes compat records as one: only its last is compared)
    request.getfixturevalue(mode)
    depth = 3 if bias and name != "transposed" else 2 if bias else 1

    def fn(torch):
        layer = fill(torch.nn.Linear(6, 3, bias=bias), torch)
        x = LINEAR_INPUTS[name](torch).requires_grad_(name != "transposed")
        y = layer(x)
        (y * y).sum().backward()
        grads = [p.grad for p in layer.parameters()]
        return _graph(y.grad_fn, depth), y, grads

    check(fn)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 4, 3)])
def test_linear_of_another_dtype_than_its_weight_is_refused_as_torch(shape, bias):
    # torch: addmm's words with a bias, mm's without
    def call(lib):
        b = lib.zeros(2) if bias else None
        x = lib.zeros(*shape, dtype=lib.float64)
        lib.nn.functional.linear(x, lib.zeros(2, 3), b)

    with pytest.raises(RuntimeError) as want:
        call(pt)
    with pytest.raises(RuntimeError) as got:
        call(jaxblitz.compat)
    assert str(got.value) == str(want.value)
