"""compat's ``nn`` against real PyTorch, case by case: losses (values, gradients,
reductions, weights, errors, warnings), ``nn.init``, Module conversion,
assignment and hooks, and the optimizers' ``state_dict``/``load_state_dict``.

Each case is a function of the torch module (real or compat); both results are
made plain (``notes.record.plain``) and compared as the Blitz notes are.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.notes.record import plain
from tests.compat.programs.test_notes import same

pt = pytest.importorskip("torch")
ct = jaxblitz.compat

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((4, 3)).astype(np.float32)
PROBS = RNG.dirichlet(np.ones(3), 4).astype(np.float32)
LABELS = np.array([2, 0, 1, 2])
IMAGE = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
PIXELS = RNG.integers(0, 3, (2, 4, 5))
BOXES = RNG.standard_normal((4, 3)).astype(np.float32)


def outcome(fn, torch):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return plain(fn(torch))
    except Exception as error:  # noqa: BLE001 -- compared like a value
        return plain(error)


def check(fn) -> None:
    theirs, ours = outcome(fn, pt), outcome(fn, ct)
    assert same(ours, theirs), f"\ntorch:  {theirs}\ncompat: {ours}"


def loss_and_grads(make, x_np=LOGITS, target=None, target_grad=False):
    """``fn(torch)``: (loss, input grad[, target grad]) of ``make(torch, x, t)``."""

    def fn(torch):
        x = torch.tensor(x_np, requires_grad=True)
        t = target(torch) if callable(target) else target
        if target_grad:
            t.requires_grad_(True)
        loss = make(torch, x, t)
        loss.sum().backward()
        grads = (x.grad, t.grad) if target_grad else (x.grad,)
        return (loss, *grads)

    return fn


F = lambda torch: torch.nn.functional  # noqa: E731
labels = lambda torch: torch.tensor(LABELS)  # noqa: E731
probs = lambda torch: torch.tensor(PROBS)  # noqa: E731
weight3 = lambda torch: torch.tensor([1.0, 2.0, 0.5])  # noqa: E731

# -- losses ---------------------------------------------------------------------------

CE_CASES = {
    "mean": lambda m, x, t: F(m).cross_entropy(x, t),
    "sum": lambda m, x, t: F(m).cross_entropy(x, t, reduction="sum"),
    "none": lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"),
    "weight": lambda m, x, t: F(m).cross_entropy(x, t, weight=weight3(m)),
    "weight_sum": lambda m, x, t: F(m).cross_entropy(
        x, t, weight=weight3(m), reduction="sum"
    ),
    "weight_none": lambda m, x, t: F(m).cross_entropy(
        x, t, weight=weight3(m), reduction="none"
    ),
    "ignore": lambda m, x, t: F(m).cross_entropy(x, t, ignore_index=2),
    "ignore_none": lambda m, x, t: F(m).cross_entropy(
        x, t, ignore_index=0, reduction="none"
    ),
    "ignore_weight": lambda m, x, t: F(m).cross_entropy(
        x, t, ignore_index=1, weight=weight3(m)
    ),
    "smoothing": lambda m, x, t: F(m).cross_entropy(x, t, label_smoothing=0.2),
    "smoothing_sum": lambda m, x, t: F(m).cross_entropy(
        x, t, label_smoothing=0.3, reduction="sum"
    ),
    "smoothing_none": lambda m, x, t: F(m).cross_entropy(
        x, t, label_smoothing=0.3, reduction="none"
    ),
    "smoothing_weight_ignore": lambda m, x, t: F(m).cross_entropy(
        x, t, label_smoothing=0.25, weight=weight3(m), ignore_index=0
    ),
    "all_ignored": lambda m, x, t: F(m).cross_entropy(x, t * 0, ignore_index=0),
    # a mean over zero total weight: NaN, but the ignored rows' gradients stay 0
    "all_ignored_weight": lambda m, x, t: F(m).cross_entropy(
        x, t * 0, weight=weight3(m), ignore_index=0
    ),
    "all_ignored_weight_smoothing": lambda m, x, t: F(m).cross_entropy(
        x, t * 0, weight=weight3(m), ignore_index=0, label_smoothing=0.1
    ),
    "nll_zero_weights_ignore": lambda m, x, t: F(m).nll_loss(
        x, t, weight=weight3(m) * 0, ignore_index=2
    ),
    "module": lambda m, x, t: m.nn.CrossEntropyLoss(
        weight=weight3(m), label_smoothing=0.1, reduction="sum"
    )(x, t),
    "nll": lambda m, x, t: F(m).nll_loss(F(m).log_softmax(x, dim=1), t),
    "nll_weight_none": lambda m, x, t: F(m).nll_loss(
        x, t, weight=weight3(m), reduction="none"
    ),
    "nll_module": lambda m, x, t: m.nn.NLLLoss(ignore_index=2, reduction="sum")(x, t),
}


@pytest.mark.parametrize("case", CE_CASES)
def test_cross_entropy_with_class_indices(case):
    check(loss_and_grads(CE_CASES[case], target=labels))


PROB_CASES = {
    "mean": lambda m, x, t: F(m).cross_entropy(x, t),
    "sum": lambda m, x, t: F(m).cross_entropy(x, t, reduction="sum"),
    "none": lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"),
    "weight": lambda m, x, t: F(m).cross_entropy(x, t, weight=weight3(m)),
    "smoothing": lambda m, x, t: F(m).cross_entropy(x, t, label_smoothing=0.2),
    "weight_smoothing_none": lambda m, x, t: F(m).cross_entropy(
        x, t, weight=weight3(m), label_smoothing=0.2, reduction="none"
    ),
}


@pytest.mark.parametrize("case", PROB_CASES)
def test_cross_entropy_with_class_probabilities_and_their_grads(case):
    check(loss_and_grads(PROB_CASES[case], target=probs, target_grad=True))


SPATIAL = {
    "ce_4d": lambda m, x, t: F(m).cross_entropy(x, t),
    "ce_4d_none": lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"),
    "ce_4d_weight_ignore": lambda m, x, t: F(m).cross_entropy(
        x, t, weight=weight3(m), ignore_index=1, label_smoothing=0.1
    ),
    "ce_3d": lambda m, x, t: F(m).cross_entropy(x[:, :, 0], t[:, 0]),
    "ce_3d_none": lambda m, x, t: F(m).cross_entropy(
        x[:, :, 0], t[:, 0], reduction="none"
    ),
    "ce_1d": lambda m, x, t: F(m).cross_entropy(x[0, :, 0, 0], t[0, 0, 0]),
    "probs_4d": lambda m, x, t: F(m).cross_entropy(x, F(m).softmax(x * 2, 1).detach()),
}


@pytest.mark.parametrize("case", SPATIAL)
def test_cross_entropy_over_spatial_and_unbatched_inputs(case):
    check(loss_and_grads(SPATIAL[case], IMAGE, lambda m: m.tensor(PIXELS)))


POINTWISE = {
    "mse": lambda m, x, t: F(m).mse_loss(x, t),
    "mse_sum": lambda m, x, t: F(m).mse_loss(x, t, reduction="sum"),
    "mse_none": lambda m, x, t: m.nn.MSELoss(reduction="none")(x, t),
    "mse_weight": lambda m, x, t: F(m).mse_loss(x, t, weight=t.detach() + 0.5),
    "l1": lambda m, x, t: m.nn.L1Loss()(x, t),
    "l1_sum": lambda m, x, t: F(m).l1_loss(x, t, reduction="sum"),
    "l1_none": lambda m, x, t: F(m).l1_loss(x, t, reduction="none"),
    "l1_weight_none": lambda m, x, t: F(m).l1_loss(
        x, t, weight=t.detach() + 0.5, reduction="none"
    ),
    "smooth_l1": lambda m, x, t: m.nn.SmoothL1Loss()(x, t),
    "smooth_l1_beta": lambda m, x, t: m.nn.SmoothL1Loss(beta=0.3, reduction="sum")(
        x, t
    ),
    "smooth_l1_beta0": lambda m, x, t: F(m).smooth_l1_loss(x, t, beta=0.0),
    "huber": lambda m, x, t: m.nn.HuberLoss(delta=0.4)(x, t),
    "huber_none": lambda m, x, t: F(m).huber_loss(x, t, reduction="none", delta=2.0),
    "huber_weight": lambda m, x, t: F(m).huber_loss(x, t, weight=t.detach() + 0.5),
    "legacy_size_average": lambda m, x, t: m.nn.MSELoss(size_average=False)(x, t),
    "legacy_reduce": lambda m, x, t: m.nn.L1Loss(reduce=False)(x, t),
    "ties_are_zero_grad": lambda m, x, t: F(m).l1_loss(x, x.detach()),
}


@pytest.mark.parametrize("case", POINTWISE)
def test_regression_losses_values_and_grads(case):
    check(loss_and_grads(POINTWISE[case], target=lambda m: m.tensor(BOXES)))
    check(
        loss_and_grads(
            POINTWISE[case], target=lambda m: m.tensor(BOXES), target_grad=True
        )
    )


BINARY = {
    "bce": lambda m, x, t: m.nn.BCELoss()(m.sigmoid(x), t),
    "bce_sum": lambda m, x, t: F(m).binary_cross_entropy(
        m.sigmoid(x), t, reduction="sum"
    ),
    "bce_weight_none": lambda m, x, t: m.nn.BCELoss(
        weight=weight3(m), reduction="none"
    )(m.sigmoid(x), t),
    "bce_saturated": lambda m, x, t: F(m).binary_cross_entropy(m.sigmoid(x * 100), t),
    "logits": lambda m, x, t: m.nn.BCEWithLogitsLoss()(x, t),
    "logits_pos_weight": lambda m, x, t: m.nn.BCEWithLogitsLoss(
        pos_weight=m.tensor([3.0, 1.0, 0.5])
    )(x, t),
    "logits_weights_none": lambda m, x, t: F(m).binary_cross_entropy_with_logits(
        x,
        t,
        weight=m.tensor([[2.0], [1.0], [0.0], [1.0]]),
        pos_weight=m.tensor([3.0, 1.0, 0.5]),
        reduction="none",
    ),
    "logits_large": lambda m, x, t: F(m).binary_cross_entropy_with_logits(x * 50, t),
}


@pytest.mark.parametrize("case", BINARY)
def test_binary_cross_entropy_values_and_grads(case):
    check(loss_and_grads(BINARY[case], target=probs))
    check(loss_and_grads(BINARY[case], target=probs, target_grad=True))


def _x(m, *shape, dtype=None):
    return m.ones(*shape, dtype=dtype)


ERRORS = {
    "ce_float_indices": lambda m: F(m).cross_entropy(_x(m, 2, 3), _x(m, 2)),
    "ce_int_indices": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0], dtype=m.int32)
    ),
    "ce_byte_indices": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0], dtype=m.uint8)
    ),
    "ce_out_of_bounds": lambda m: F(m).cross_entropy(_x(m, 2, 3), m.tensor([3, 0])),
    "ce_negative": lambda m: F(m).cross_entropy(_x(m, 2, 3), m.tensor([-1, 0])),
    "ce_ignored_out_of_bounds": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([-100, 0]), reduction="none"
    ),
    "ce_batch": lambda m: F(m).cross_entropy(_x(m, 2, 3), m.tensor([1, 0, 1])),
    "ce_scalar_target": lambda m: F(m).cross_entropy(_x(m, 2, 3), m.tensor(1)),
    "ce_reduction": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), reduction="avg"
    ),
    "ce_weight_size": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), weight=_x(m, 2)
    ),
    "ce_weight_dtype": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), weight=_x(m, 3, dtype=m.float64)
    ),
    "ce_weight_requires_grad": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), weight=_x(m, 3).requires_grad_()
    ),
    "ce_smoothing_high": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), label_smoothing=1.5
    ),
    "ce_smoothing_negative": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), m.tensor([1, 0]), label_smoothing=-0.5
    ),
    "ce_probs_long": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), _x(m, 2, 3, dtype=m.long)
    ),
    "ce_probs_ignore_index": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), _x(m, 2, 3), ignore_index=1
    ),
    "ce_probs_weight_size": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), _x(m, 2, 3), weight=_x(m, 2)
    ),
    "ce_probs_double": lambda m: F(m).cross_entropy(
        _x(m, 2, 3), _x(m, 2, 3, dtype=m.float64)
    ),
    "ce_long_input": lambda m: F(m).cross_entropy(
        _x(m, 2, 3, dtype=m.long), m.tensor([1, 0])
    ),
    "ce_spatial_target": lambda m: F(m).cross_entropy(_x(m, 2, 3, 4), m.tensor([1, 0])),
    "ce_4d_target": lambda m: F(m).cross_entropy(
        _x(m, 2, 3, 4, 5), _x(m, 2, 4, 4, dtype=m.long)
    ),
    "ce_4d_target_dims": lambda m: F(m).cross_entropy(
        _x(m, 2, 3, 4, 5), _x(m, 2, 4, dtype=m.long)
    ),
    "nll_0d": lambda m: F(m).nll_loss(m.tensor(1.0), m.tensor(0)),
    "nll_multi_target": lambda m: F(m).nll_loss(_x(m, 2, 3), _x(m, 2, 2, dtype=m.long)),
    "nll_1d_two_targets": lambda m: F(m).nll_loss(_x(m, 3), m.tensor([1, 2])),
    # forward only: torch's backward refuses the (1,) target it accepted here
    "nll_1d_one_target": lambda m: F(m).nll_loss(m.arange(3.0), m.tensor([1])),
    "nll_weight_2d": lambda m: F(m).nll_loss(
        _x(m, 2, 3), m.tensor([1, 0]), weight=_x(m, 3, 1)
    ),
    "nll_int_input": lambda m: F(m).nll_loss(
        _x(m, 2, 3, dtype=m.int32), m.tensor([1, 0])
    ),
    "mse_broadcast_error": lambda m: F(m).mse_loss(_x(m, 2, 3), _x(m, 4)),
    "mse_broadcasts": lambda m: F(m).mse_loss(_x(m, 3, 1), m.arange(3.0)),
    "mse_long": lambda m: F(m).mse_loss(_x(m, 2, dtype=m.long), _x(m, 2, dtype=m.long)),
    "mse_long_target": lambda m: F(m).mse_loss(m.arange(3.0), m.tensor([0, 1, 5])),
    "mse_double_target": lambda m: F(m).mse_loss(
        m.arange(3.0), _x(m, 3, dtype=m.float64)
    ),
    "mse_weight_size": lambda m: F(m).mse_loss(
        _x(m, 2, 3), _x(m, 2, 3), weight=_x(m, 3)
    ),
    "mse_reduction": lambda m: m.nn.MSELoss(reduction="max")(_x(m, 2), _x(m, 2)),
    "l1_long_mean": lambda m: F(m).l1_loss(
        _x(m, 2, dtype=m.long), _x(m, 2, dtype=m.long)
    ),
    "l1_long_sum": lambda m: F(m).l1_loss(
        m.tensor([1, 5]), _x(m, 2, dtype=m.long), reduction="sum"
    ),
    "smooth_l1_negative_beta": lambda m: F(m).smooth_l1_loss(
        _x(m, 2), _x(m, 2), beta=-1.0
    ),
    "smooth_l1_long": lambda m: F(m).smooth_l1_loss(
        _x(m, 2, dtype=m.long), _x(m, 2, dtype=m.long)
    ),
    "huber_delta": lambda m: F(m).huber_loss(_x(m, 2), _x(m, 2), delta=0.0),
    "huber_double_target": lambda m: F(m).huber_loss(
        m.arange(3.0), _x(m, 3, dtype=m.float64)
    ),
    "bce_range": lambda m: F(m).binary_cross_entropy(_x(m, 2) * 2, _x(m, 2)),
    "bce_target_range": lambda m: F(m).binary_cross_entropy(_x(m, 2), _x(m, 2) * 2),
    "bce_size": lambda m: F(m).binary_cross_entropy(_x(m, 2, 3) / 2, _x(m, 3)),
    "bce_dtype": lambda m: F(m).binary_cross_entropy(
        _x(m, 2) / 2, _x(m, 2, dtype=m.float64)
    ),
    "bce_long": lambda m: F(m).binary_cross_entropy(
        _x(m, 2, dtype=m.long), _x(m, 2, dtype=m.long)
    ),
    "bce_weight_shape": lambda m: F(m).binary_cross_entropy(
        _x(m, 2, 3) / 2, _x(m, 2, 3), weight=_x(m, 4)
    ),
    "bce_weight_requires_grad": lambda m: F(m).binary_cross_entropy(
        _x(m, 2) / 2, _x(m, 2), weight=_x(m, 2).requires_grad_()
    ),
    "logits_size": lambda m: F(m).binary_cross_entropy_with_logits(
        _x(m, 2, 3), _x(m, 3)
    ),
    "logits_pos_weight_shape": lambda m: F(m).binary_cross_entropy_with_logits(
        _x(m, 2, 3), _x(m, 2, 3), pos_weight=_x(m, 4)
    ),
    "logits_long_target": lambda m: F(m).binary_cross_entropy_with_logits(
        _x(m, 2, 3), _x(m, 2, 3, dtype=m.long)
    ),
    "logits_double_input": lambda m: F(m).binary_cross_entropy_with_logits(
        _x(m, 2, 3, dtype=m.float64), _x(m, 2, 3)
    ),
    "logits_pos_weight_requires_grad": lambda m: F(m).binary_cross_entropy_with_logits(
        _x(m, 2), _x(m, 2), pos_weight=_x(m, 2).requires_grad_()
    ),
    "ce_module_repr": lambda m: repr(m.nn.CrossEntropyLoss(weight=_x(m, 3))),
    "ce_module_state_dict": lambda m: list(
        m.nn.CrossEntropyLoss(weight=_x(m, 3)).state_dict()
    ),
    "bce_logits_state_dict": lambda m: list(
        m.nn.BCEWithLogitsLoss(pos_weight=_x(m, 3)).state_dict()
    ),
    "loss_attributes": lambda m: [
        (m.nn.CrossEntropyLoss(label_smoothing=0.1).label_smoothing),
        m.nn.CrossEntropyLoss().ignore_index,
        m.nn.MSELoss(reduce=False).reduction,
        m.nn.HuberLoss(delta=2.0).delta,
        m.nn.SmoothL1Loss(beta=0.5).beta,
    ],
}


@pytest.mark.parametrize("case", ERRORS)
def test_loss_checks_and_edge_cases_as_torch(case):
    check(ERRORS[case])


GRAD_FN_NAMES = {
    "ce": lambda m, x: F(m).cross_entropy(x, labels(m)),
    "ce_none": lambda m, x: F(m).cross_entropy(x, labels(m), reduction="none"),
    "ce_probs": lambda m, x: F(m).cross_entropy(x, probs(m)),
    "ce_probs_sum": lambda m, x: F(m).cross_entropy(x, probs(m), reduction="sum"),
    "ce_smoothing": lambda m, x: F(m).cross_entropy(x, labels(m), label_smoothing=0.1),
    "mse": lambda m, x: F(m).mse_loss(x, probs(m)),
    "l1": lambda m, x: F(m).l1_loss(x, probs(m)),
    "l1_none": lambda m, x: F(m).l1_loss(x, probs(m), reduction="none"),
    "smooth_l1": lambda m, x: F(m).smooth_l1_loss(x, probs(m)),
    "huber": lambda m, x: F(m).huber_loss(x, probs(m)),
    "bce": lambda m, x: F(m).binary_cross_entropy(m.sigmoid(x), probs(m)),
    "logits": lambda m, x: F(m).binary_cross_entropy_with_logits(x, probs(m)),
}


@pytest.mark.parametrize("case", GRAD_FN_NAMES)
def test_loss_grad_fn_names(case):
    check(
        lambda m: GRAD_FN_NAMES[case](
            m, m.tensor(LOGITS, requires_grad=True)
        ).grad_fn.name()
    )


def test_size_mismatch_warns_as_torch_and_broadcasts():
    for m in (pt, ct):
        with pytest.warns(UserWarning, match="Using a target size") as caught:
            out = m.nn.MSELoss(reduction="none")(m.ones(3, 1), m.zeros(3))
        assert tuple(out.shape) == (3, 3)
        assert str(caught[0].message).startswith(
            "Using a target size (torch.Size([3])) that is different to the input "
            "size (torch.Size([3, 1]))"
        )
    with pytest.warns(UserWarning, match="size_average and reduce args"):
        ct.nn.MSELoss(size_average=False)


def test_losses_train_inside_compile():
    net = ct.nn.Linear(3, 3)
    opt = ct.optim.SGD(net.parameters(), lr=0.1)
    criterion = ct.nn.CrossEntropyLoss(label_smoothing=0.1, weight=ct.ones(3))

    @ct.compile
    def step(x, y):
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = ct.tensor(LOGITS), ct.tensor(LABELS)
    losses = [step(x, y).item() for _ in range(5)]
    assert losses[-1] < losses[0]


# -- nn.init --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("conv2d",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("leaky_relu", 1),
        ("selu",),
        ("leaky_relu", True),
        ("softmax",),
    ],
)
def test_calculate_gain(args):
    check(lambda m: m.nn.init.calculate_gain(*args))


def _stats(init, shape=(64, 32, 3, 3)):
    """(min, max, mean, std) of ``init`` on a parameter of ``shape``, and that the
    parameter itself came back, still a leaf that requires grad."""

    def fn(m):
        p = m.nn.Parameter(m.empty(*shape))
        out = init(m, p)
        a = p.detach().numpy().astype(np.float64)
        return (
            out is p,
            p.requires_grad and p.grad_fn is None,
            tuple(np.round([a.min(), a.max(), a.mean(), a.std()], 2).tolist()),
        )

    return fn


INITS = {
    "uniform": lambda m, p: m.nn.init.uniform_(p, -0.3, 0.5),
    "normal": lambda m, p: m.nn.init.normal_(p, 0.5, 2.0),
    "xavier_uniform": lambda m, p: m.nn.init.xavier_uniform_(p, gain=2.0),
    "xavier_normal": lambda m, p: m.nn.init.xavier_normal_(p),
    "kaiming_uniform": lambda m, p: m.nn.init.kaiming_uniform_(p, a=math.sqrt(5)),
    "kaiming_uniform_fan_out_relu": lambda m, p: m.nn.init.kaiming_uniform_(
        p, mode="fan_out", nonlinearity="relu"
    ),
    "kaiming_normal": lambda m, p: m.nn.init.kaiming_normal_(p, nonlinearity="relu"),
    "trunc_normal": lambda m, p: m.nn.init.trunc_normal_(p, 0.1, 0.5, -0.5, 0.5),
    "trunc_normal_default": lambda m, p: m.nn.init.trunc_normal_(p),
    "constant": lambda m, p: m.nn.init.constant_(p, 0.25),
    "ones": lambda m, p: m.nn.init.ones_(p),
    "zeros": lambda m, p: m.nn.init.zeros_(p),
    "orthogonal": lambda m, p: m.nn.init.orthogonal_(p, gain=2.0),
}


UNBOUNDED = {"normal", "xavier_normal", "kaiming_normal", "orthogonal"}


@pytest.mark.parametrize("case", INITS)
def test_init_distributions(case):
    # random draws differ: the same bounds (where the distribution has bounds),
    # mean and std, to 0.03 or four standard errors of the two means' difference
    # (4 * sqrt(2) * std / sqrt(18432) = 0.042 std), whichever is wider
    theirs, ours = _stats(INITS[case])(pt), _stats(INITS[case])(ct)
    bounds = slice(2, 4) if case in UNBOUNDED else slice(0, 4)
    assert ours[:2] == theirs[:2], f"\ntorch:  {theirs}\ncompat: {ours}"
    atol = max(0.03, 0.042 * theirs[2][3])
    assert np.allclose(ours[2][bounds], theirs[2][bounds], atol=atol), (
        f"\ntorch:  {theirs}\ncompat: {ours}"
    )


def test_init_draws_from_compats_generator():
    draws = []
    for _ in range(2):
        ct.manual_seed(3)
        draws.append(ct.nn.init.kaiming_normal_(ct.empty(4, 5)).numpy())
    np.testing.assert_array_equal(*draws)
    g = ct.Generator().manual_seed(1)
    h = ct.Generator().manual_seed(1)
    a = ct.nn.init.xavier_uniform_(ct.empty(3, 4), generator=g)
    b = ct.nn.init.xavier_uniform_(ct.empty(3, 4), generator=h)
    assert ct.equal(a, b)


def test_orthogonal_is_orthogonal():
    for shape in [(3, 5), (5, 3), (4, 2, 2)]:
        w = ct.nn.init.orthogonal_(ct.empty(*shape)).reshape(shape[0], -1).numpy()
        small = min(w.shape)
        gram = w @ w.T if w.shape[0] == small else w.T @ w
        np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


EXACT_INITS = {
    "eye": lambda m: m.nn.init.eye_(m.empty(3, 5)),
    "eye_tall": lambda m: m.nn.init.eye_(m.nn.Parameter(m.empty(4, 2))),
    "eye_3d": lambda m: m.nn.init.eye_(m.empty(2, 2, 2)),
    "dirac": lambda m: m.nn.init.dirac_(m.empty(3, 2, 3, 3)),
    "dirac_groups": lambda m: m.nn.init.dirac_(m.empty(4, 2, 3), groups=2),
    "dirac_2d": lambda m: m.nn.init.dirac_(m.empty(4, 2)),
    "dirac_groups_bad": lambda m: m.nn.init.dirac_(m.empty(3, 2, 3), groups=2),
    "constant_int": lambda m: m.nn.init.constant_(m.empty(3, dtype=m.long), 2),
    "fan_1d": lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
    "kaiming_mode": lambda m: m.nn.init.kaiming_normal_(m.empty(3, 3), mode="fan"),
    "kaiming_nonlinearity": lambda m: m.nn.init.kaiming_normal_(
        m.empty(3, 3), nonlinearity="gelu"
    ),
    "kaiming_empty": lambda m: m.nn.init.kaiming_uniform_(m.empty(0, 3)),
    "orthogonal_1d": lambda m: m.nn.init.orthogonal_(m.empty(3)),
    "zeros_on_a_view": lambda m: (lambda base: (m.nn.init.zeros_(base[1]), base)[1])(
        m.ones(2, 3)
    ),
    "eye_on_a_view": lambda m: (lambda base: (m.nn.init.eye_(base[:, 1:]), base)[1])(
        m.ones(2, 3)
    ),
}


@pytest.mark.parametrize("case", EXACT_INITS)
def test_init_exact_values_and_errors(case):
    check(EXACT_INITS[case])


def test_init_deprecated_spellings_warn():
    for m in (pt, ct):
        with pytest.warns(FutureWarning, match="nn.init.normal_"):
            m.nn.init.normal(m.empty(2))


# -- Module: conversion, assignment, state_dict ---------------------------------------


class _Scale:
    """A module with a parameter, a gradient, a float and an int buffer."""

    @staticmethod
    def make(m):
        class Scale(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = m.nn.Parameter(m.ones(3))
                self.register_buffer("running", m.zeros(3))
                self.register_buffer("count", m.zeros((), dtype=m.long))
                self.inner = m.nn.Linear(3, 2)
                with m.no_grad():
                    self.inner.weight.copy_(m.tensor(BOXES[:2]))
                    self.inner.bias.fill_(0.5)

            def forward(self, x):
                return self.inner(x * self.weight)

        net = Scale()
        net(m.ones(1, 3)).sum().backward()
        return net


CONVERSIONS = {
    "double": lambda n, m: n.double(),
    "half": lambda n, m: n.half(),
    "float_after_double": lambda n, m: n.double().float(),
    "to_dtype": lambda n, m: n.to(m.float64),
    "to_kwarg": lambda n, m: n.to(dtype=m.float16),
    "to_device_dtype": lambda n, m: n.to("cpu", m.float64),
    "to_tensor": lambda n, m: n.to(m.ones(1, dtype=m.float64)),
    "to_cpu": lambda n, m: n.to("cpu"),
    "type": lambda n, m: n.type(m.float64),
}


@pytest.mark.parametrize("case", CONVERSIONS)
def test_module_conversion_keeps_parameters_replaces_buffers(case):
    def fn(m):
        net = _Scale.make(m)
        w, running, count = net.weight, net.running, net.count
        grad = net.weight.grad
        returned = CONVERSIONS[case](net, m)
        return (
            returned is net,
            net.weight is w,
            net.weight.grad is grad,
            net.running is running,
            net.count is count,
            isinstance(net.weight, m.nn.Parameter),
            net.weight.requires_grad,
            [(n, str(t.dtype)[6:]) for n, t in net.state_dict().items()],
            str(net.weight.grad.dtype),
            str(net.inner.bias.grad.dtype),
        )

    check(fn)


def test_module_to_an_integer_dtype_is_torchs_type_error():
    check(lambda m: _Scale.make(m).to(m.long))
    check(lambda m: _Scale.make(m).to(dtype=m.int32))


def test_converted_module_still_trains():
    def fn(m):
        net = _Scale.make(m).double()
        net.zero_grad()
        out = net(m.ones(2, 3, dtype=m.float64))
        out.sum().backward()
        return out, net.weight.grad, net.inner.weight.grad

    check(fn)


ASSIGNMENTS = {
    "tensor_to_parameter": lambda n, m: setattr(n, "weight", m.ones(3)),
    "none_to_parameter": lambda n, m: (setattr(n, "weight", None), n.weight)[1],
    "number_to_parameter": lambda n, m: setattr(n, "weight", 3),
    "tensor_to_module": lambda n, m: setattr(n, "inner", m.ones(3)),
    "none_to_module": lambda n, m: (setattr(n, "inner", None), list(n.state_dict())),
    "number_to_buffer": lambda n, m: setattr(n, "running", 1.0),
    "tensor_to_buffer": lambda n, m: (
        setattr(n, "running", m.ones(2)),
        list(n.state_dict()),
        n.running,
    ),
    "parameter_over_buffer": lambda n, m: (
        setattr(n, "running", m.nn.Parameter(m.ones(2))),
        [k for k, _ in n.named_parameters()],
        [k for k, _ in n.named_buffers()],
    ),
    "string_over_parameter": lambda n, m: (
        setattr(n, "weight", "relu"),
        [k for k, _ in n.named_parameters()],
        list(n.state_dict()),
    ),
    "plain_attribute": lambda n, m: (setattr(n, "scale", 2.0), n.scale),
    "register_over_attribute": lambda n, m: (
        setattr(n, "scale", 2.0),
        n.register_parameter("scale", m.nn.Parameter(m.ones(1))),
    ),
    "register_buffer_over_attribute": lambda n, m: (
        setattr(n, "scale", 2.0),
        n.register_buffer("scale", m.ones(1)),
    ),
    "register_buffer_over_parameter": lambda n, m: n.register_buffer(
        "weight", m.ones(1)
    ),
    "non_persistent_reassigned": lambda n, m: (
        n.register_buffer("tmp", m.ones(1), persistent=False),
        setattr(n, "tmp", m.zeros(1)),
        list(n.state_dict()),
    ),
    "named_parameters": lambda n, m: [k for k, _ in n.named_parameters()],
    "state_dict_shares_storage": lambda n, m: [
        t.data_ptr()
        == dict(n.named_parameters(), **dict(n.named_buffers()))[k].data_ptr()
        for k, t in n.state_dict().items()
    ],
    "state_dict_detached": lambda n, m: [
        t.requires_grad for t in n.state_dict().values()
    ],
}


@pytest.mark.parametrize("case", ASSIGNMENTS)
def test_module_attribute_assignment(case):
    check(lambda m: ASSIGNMENTS[case](_Scale.make(m), m))


# -- Module hooks ---------------------------------------------------------------------


def test_a_module_with_no_hooks_has_empty_hook_dicts_to_read():
    """The pruning tutorial reads ``module._forward_pre_hooks`` before and after
    a hook is registered."""

    def fn(m):
        lin = m.nn.Linear(2, 2)
        before = [dict(lin._forward_pre_hooks), dict(lin._forward_hooks),
                  dict(lin._backward_hooks)]  # fmt: skip
        with m.no_grad():
            lin.bias.fill_(0.5)
        lin._forward_pre_hooks[7] = lambda mod, args: (args[0] * 0,)
        return before, lin(m.ones(1, 2)), list(lin._forward_pre_hooks)

    check(fn)


def test_forward_hooks_and_pre_hooks():
    def fn(m):
        log = []
        lin = m.nn.Linear(3, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor(BOXES[:2]))
            lin.bias.fill_(0.5)

        def pre(mod, args):
            log.append(("pre", tuple(args[0].shape)))
            return (args[0] * 2,)

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))

        def post(mod, args, out):
            log.append(("post", tuple(out.shape)))
            return out + 1

        def first(mod, args, out):
            log.append("first")

        handles = [
            lin.register_forward_pre_hook(pre),
            lin.register_forward_pre_hook(pre_kw, with_kwargs=True),
            lin.register_forward_hook(post),
            lin.register_forward_hook(first, prepend=True),
        ]
        out = lin(m.ones(1, 3))
        for h in handles:
            h.remove()
        plain_out = lin(m.ones(1, 3))
        with lin.register_forward_hook(lambda mod, a, o: o * 0):
            zero = lin(m.ones(1, 3))
        after = lin(m.ones(1, 3))
        return log, out, plain_out, zero, after

    check(fn)


def test_forward_hook_with_kwargs_and_always_call():
    def fn(m):
        log = []

        class Boom(m.nn.Module):
            def forward(self, x, fail=False):
                if fail:
                    raise ValueError("boom")
                return x

        net = Boom()
        net.register_forward_hook(
            lambda mod, args, kwargs, out: log.append(sorted(kwargs)),
            with_kwargs=True,
            always_call=True,
        )
        net(m.ones(1), fail=False)
        try:
            net(m.ones(1), fail=True)
        except ValueError as e:
            log.append(str(e))
        return log

    check(fn)


def test_full_backward_hooks():
    def fn(m):
        log = []
        lin = m.nn.Linear(3, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor(BOXES[:2]))
            lin.bias.zero_()

        def hook(mod, grad_input, grad_output):
            log.append(("hook", grad_input, grad_output))
            return (grad_input[0] * 10,)

        def pre(mod, grad_output):
            log.append(("pre", grad_output))
            return (grad_output[0] * 2,)

        h1 = lin.register_full_backward_hook(hook)
        h2 = lin.register_full_backward_pre_hook(pre)
        x = m.tensor(LOGITS, requires_grad=True)
        out = lin(x)
        name = out.grad_fn.name()
        (out * m.tensor([1.0, -1.0])).sum().backward()
        # clones: torch accumulates the next backward into these very tensors
        grads = (x.grad, lin.weight.grad.clone(), lin.bias.grad.clone())
        h1.remove()
        h2.remove()
        x2 = m.tensor(LOGITS, requires_grad=True)
        lin(x2).sum().backward()
        return log, name, grads, x2.grad

    check(fn)


def test_full_backward_hook_without_input_grads_fires_on_outputs():
    def fn(m):
        log = []
        seq = m.nn.Sequential(m.nn.Linear(3, 2), m.nn.ReLU())
        seq[0].register_full_backward_hook(
            lambda mod, gi, go: log.append((gi, tuple(go[0].shape)))
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seq(m.ones(4, 3)).sum().backward()
        return log, [str(w.message)[:60] for w in caught]

    check(fn)


def test_full_backward_hook_on_a_module_with_two_inputs():
    def fn(m):
        log = []

        class Mul(m.nn.Module):
            def forward(self, a, scale, b):
                return a * b * scale

        net = Mul()
        net.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0])
        net(a, 2.0, b).sum().backward()
        return log, a.grad

    check(fn)


def test_old_style_backward_hook_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="register_backward_hook"):
        ct.nn.Linear(2, 2).register_backward_hook(lambda *a: None)


# -- optimizers' state_dict -----------------------------------------------------------

OPTIMIZERS = {
    "sgd": lambda m, ps: m.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda m, ps: m.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd_nesterov_decay": lambda m, ps: m.optim.SGD(
        ps, lr=0.1, momentum=0.5, nesterov=True, weight_decay=0.1
    ),
    "sgd_groups": lambda m, ps: m.optim.SGD(
        [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01, "momentum": 0.5}], lr=0.1
    ),
    "adam": lambda m, ps: m.optim.Adam(ps, lr=0.05, betas=(0.8, 0.9)),
    "rmsprop": lambda m, ps: m.optim.RMSprop(ps, lr=0.01),
    "rmsprop_centered_momentum": lambda m, ps: m.optim.RMSprop(
        ps, lr=0.01, momentum=0.5, centered=True
    ),
}


def _params(m):
    return [
        m.nn.Parameter(m.tensor(BOXES)),
        m.nn.Parameter(m.tensor(LOGITS[0])),
        m.nn.Parameter(m.ones(2)),  # never gets a gradient: no state
    ]


def _train(m, opt, ps, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = (ps[0] * ps[0]).sum() + (ps[1] ** 3).sum()
        loss.backward()
        opt.step()


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_optimizer_state_dict_is_torchs(case):
    def fn(m):
        ps = _params(m)
        opt = OPTIMIZERS[case](m, ps)
        before = opt.state_dict()
        _train(m, opt, ps, 3)
        return before, opt.state_dict()

    check(fn)


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_optimizer_load_state_dict_resumes_training(case):
    def fn(m):
        ps = _params(m)
        opt = OPTIMIZERS[case](m, ps)
        _train(m, opt, ps, 2)
        # a copy: torch's load_state_dict keeps the very state tensors it is given,
        # so two torch optimizers would then update one buffer between them
        saved = opt.state_dict()
        saved["state"] = {
            k: {n: v.clone() for n, v in st.items()} for k, st in saved["state"].items()
        }
        fresh = [m.nn.Parameter(p.detach().clone()) for p in ps]
        resumed = OPTIMIZERS[case](m, fresh)
        resumed.load_state_dict(saved)
        _train(m, opt, ps, 2)
        _train(m, resumed, fresh, 2)
        return ps, fresh, resumed.state_dict()

    check(fn)


def test_compat_resumes_from_torchs_state_dict():
    """A state dict written by real torch (tensors carried over through numpy)
    continues in compat as it continues in torch."""
    tps = _params(pt)
    topt = pt.optim.Adam(tps, lr=0.05)
    _train(pt, topt, tps, 2)
    saved = topt.state_dict()
    cps = [ct.nn.Parameter(ct.tensor(p.detach().numpy())) for p in tps]
    copt = ct.optim.Adam(cps, lr=0.05)
    copt.load_state_dict(
        {
            "state": {
                k: {n: ct.tensor(v.numpy()) for n, v in s.items()}
                for k, s in saved["state"].items()
            },
            "param_groups": saved["param_groups"],
        }
    )
    _train(pt, topt, tps, 2)
    _train(ct, copt, cps, 2)
    for a, b in zip(cps, tps, strict=True):
        np.testing.assert_allclose(
            a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-6
        )


LOAD_ERRORS = {
    "groups": lambda m, opt: opt.load_state_dict(
        {"state": {}, "param_groups": opt.state_dict()["param_groups"] * 2}
    ),
    "sizes": lambda m, opt: opt.load_state_dict(
        {
            "state": {},
            "param_groups": [{**opt.state_dict()["param_groups"][0], "params": [0]}],
        }
    ),
    "lr_restored": lambda m, opt: (
        opt.load_state_dict(
            {
                "state": {},
                "param_groups": [
                    {**opt.state_dict()["param_groups"][0], "lr": 0.5, "extra": 1}
                ],
            }
        ),
        {k: v for k, v in opt.param_groups[0].items() if k != "params"},
        opt.param_groups[0]["params"][0] is not None,
    ),
}


@pytest.mark.parametrize("case", LOAD_ERRORS)
def test_optimizer_load_state_dict_checks(case):
    check(lambda m: LOAD_ERRORS[case](m, m.optim.SGD(_params(m), lr=0.1, momentum=0.9)))
