"""torch.compile (jaxblitz.compat.compile): the Blitz's step as one XLA program."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn as nn
import jaxblitz.compat.nn.functional as F
import jaxblitz.compat.optim as optim
from jaxblitz import train
from jaxblitz.compat.compile import CompileError
from tests.compat.blitz_net import Net


def batches(n=5, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (
            torch.tensor(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)),
            torch.tensor(rng.integers(0, 10, batch)),
        )
        for _ in range(n)
    ]


def make_step(net, optimizer, criterion):
    def step(inputs, labels):
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss

    return step


def twin_nets(make_optimizer):
    torch.manual_seed(0)
    nets = [Net(), Net()]
    nets[1].load_state_dict(nets[0].state_dict())  # shares arrays: copied on donate
    steps = [
        make_step(net, make_optimizer(net.parameters()), nn.CrossEntropyLoss())
        for net in nets
    ]
    return nets, steps


def params_of(net):
    return {name: np.asarray(p._data) for name, p in net.named_parameters()}


def assert_params_close(a, b, atol=1e-5):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-4, atol=atol, err_msg=name)


OPTIMIZERS = {
    "sgd_momentum": lambda p: optim.SGD(p, lr=0.01, momentum=0.9),
    "nesterov": lambda p: optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True),
    "adam": lambda p: optim.Adam(p, lr=1e-3),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_compiled_step_equals_eager_after_50_steps(name):
    (eager_net, net), (eager_step, step) = twin_nets(OPTIMIZERS[name])
    compiled = torch.compile(step)
    data = batches()
    start = params_of(net)
    for i in range(50):
        inputs, labels = data[i % len(data)]
        expected = eager_step(inputs, labels)
        loss = compiled(inputs, labels)
        assert isinstance(loss, torch.Tensor) and loss.shape == torch.Size([])
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-4)
    after = params_of(net)
    # Adam divides by sqrt(v): float32 rounding in a near-zero gradient can move
    # one weight by a few percent of one lr-sized step over 50 steps.
    assert_params_close(
        after, params_of(eager_net), atol=1e-4 if name == "adam" else 1e-5
    )
    assert np.abs(after["fc3.weight"] - start["fc3.weight"]).max() > 1e-3  # it moved
    # grads and optimizer state were written back, as the eager step leaves them
    for p, q in zip(net.parameters(), eager_net.parameters(), strict=True):
        np.testing.assert_allclose(
            np.asarray(p.grad._data), np.asarray(q.grad._data), rtol=1e-3, atol=1e-6
        )
    assert compiled.compilations == 1


def test_compiled_step_equals_the_core_train_step():
    config = train.Config(dataset="digits", lr=0.001, momentum=0.9)
    state = train.init_state(config, in_channels=3)
    tx = train.make_optimizer(config)
    net = Net().load_params(state.params)
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    compiled = torch.compile(make_step(net, optimizer, nn.CrossEntropyLoss()))
    data = batches(n=3)
    core_step = jax.jit(train.train_step, static_argnames="tx")
    for i in range(20):
        inputs, labels = data[i % len(data)]
        loss = compiled(inputs, labels)
        state, core_loss = core_step(
            state, inputs._data, labels._data.astype(jnp.int32), jnp.ones(4), tx
        )
        np.testing.assert_allclose(loss.item(), float(core_loss), rtol=1e-4)
    core = {
        f"{layer}.{kind}": np.asarray(v)
        for layer, d in state.params.items()
        for kind, v in d.items()
    }
    assert_params_close(params_of(net), core)


class MLP(nn.Module):
    def __init__(self, width=8, dropout=0.0):
        super().__init__()
        self.fc1 = nn.Linear(6, width)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(width, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


def mlp_step(net, optimizer, inputs, labels):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


def test_recompiles_only_on_shape_dtype_module_set_and_mode_changes():
    torch.manual_seed(0)
    net, other = MLP(), MLP()
    optimizer = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    other_optimizer = optim.SGD(other.parameters(), lr=0.1)
    step = torch.compile(mlp_step)
    x4, y4 = torch.randn(4, 6), torch.randint(0, 3, (4,))
    x8, y8 = torch.randn(8, 6), torch.randint(0, 3, (8,))
    for _ in range(3):  # grads None on the first call, set afterwards: one program
        step(net, optimizer, x4, y4)
    assert (step.compilations, step.traces) == (1, 1)
    step(net, optimizer, x8, y8)  # a new batch shape
    step(net, optimizer, x4, y4)  # back to a known one
    assert step.compilations == 2
    step(
        net, optimizer, x4, y4.to(torch.uint8)
    )  # a new label dtype (torch takes Long or Byte)
    assert step.compilations == 3
    optimizer.param_groups[0]["lr"] = 0.0  # an input, not a recompile ...
    before = params_of(net)
    step(net, optimizer, x4, y4)
    assert step.compilations == 3
    momentum = {k: v.copy() for k, v in before.items()}
    after = params_of(net)
    assert_params_close(after, momentum)  # ... and it takes effect: lr 0, no move
    net.eval()  # train/eval mode
    step(net, optimizer, x4, y4)
    assert step.compilations == 4
    net.train()
    step(net, optimizer, x4, y4)
    assert step.compilations == 4
    step(other, other_optimizer, x4, y4)  # another module/optimizer set
    assert step.compilations == 5
    step(net, optimizer, x4, y4)
    assert step.compilations == 5


def test_momentum_or_weight_decay_switched_to_zero_recompiles_and_matches_eager():
    # SGD's update is built for whether momentum and weight_decay are zero (a
    # static of the program, part of its key); their values stay inputs.
    optimizers = []

    def sgd(params):
        optimizers.append(optim.SGD(params, lr=0.05, momentum=0.9))
        return optimizers[-1]

    nets, steps = twin_nets(sgd)
    compiled = torch.compile(steps[0])
    settings = [(0.9, 0.0), (0.5, 0.0), (0.0, 0.0), (0.0, 0.1), (0.7, 0.1)]
    for momentum, decay in settings:
        for opt in optimizers:
            opt.param_groups[0].update(momentum=momentum, weight_decay=decay)
        for inputs, labels in batches(n=2):
            compiled(inputs, labels)
            steps[1](inputs, labels)
    assert compiled.compilations == 4  # 0.9 -> 0.5 kept the program
    assert_params_close(params_of(nets[0]), params_of(nets[1]))


def test_a_step_without_zero_grad_accumulates_like_eager():
    torch.manual_seed(0)
    nets = [MLP(), MLP()]
    nets[1].load_state_dict(nets[0].state_dict())
    optimizers = [optim.SGD(n.parameters(), lr=0.1) for n in nets]

    def accumulate(net, optimizer, inputs, labels):
        F.cross_entropy(net(inputs), labels).backward()  # no zero_grad: grads add
        optimizer.step()

    compiled = torch.compile(accumulate)
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for _ in range(3):
        accumulate(nets[0], optimizers[0], x, y)
        compiled(nets[1], optimizers[1], x, y)
    assert_params_close(params_of(nets[1]), params_of(nets[0]))
    g0, g1 = nets[0].fc1.weight.grad, nets[1].fc1.weight.grad
    np.testing.assert_allclose(np.asarray(g1._data), np.asarray(g0._data), rtol=1e-5)
    assert compiled.compilations == 2  # grads absent, then present: a real change


def test_dropout_draws_from_the_global_generator_like_eager():
    results = []
    for compile_it in (False, True):
        torch.manual_seed(1)
        net = MLP(width=32, dropout=0.5)
        optimizer = optim.SGD(net.parameters(), lr=0.1)
        step = torch.compile(mlp_step) if compile_it else mlp_step
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        losses = [step(net, optimizer, x, y).item() for _ in range(3)]
        results.append((losses, params_of(net)))
    (eager_losses, eager_params), (losses, params) = results
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    assert len(set(losses)) == 3  # a fresh mask each call
    assert_params_close(params, eager_params)


def test_eval_step_under_no_grad():
    torch.manual_seed(0)
    net = Net().eval()
    ((inputs, _),) = batches(n=1, batch=6)

    @torch.compile
    def predict(images):
        outputs = net(images)
        _, predicted = torch.max(outputs, 1)
        return outputs, predicted

    with torch.no_grad():
        outputs, predicted = predict(inputs)
        expected = net(inputs)
    np.testing.assert_allclose(
        np.asarray(outputs._data), np.asarray(expected._data), rtol=1e-5, atol=1e-6
    )
    assert predicted.tolist() == np.asarray(expected._data).argmax(1).tolist()
    assert not outputs.requires_grad
    assert all(p.grad is None for p in net.parameters())
    assert predict.compilations == 1


def _bad_item(net, optimizer, inputs, labels):
    loss = mlp_step(net, optimizer, inputs, labels)
    return loss.item()


def _bad_print(net, optimizer, inputs, labels):
    loss = mlp_step(net, optimizer, inputs, labels)
    print(loss)
    return loss


def _bad_branch(net, optimizer, inputs, labels):
    loss = mlp_step(net, optimizer, inputs, labels)
    if loss > 1:
        return loss * 2
    return loss


@pytest.mark.parametrize(
    "fn, cause, line",
    [
        (_bad_item, "`.item()`", "return loss.item()"),
        (_bad_print, "printing a tensor", "print(loss)"),
        (_bad_branch, "data-dependent Python control flow", "if loss > 1:"),
    ],
)
def test_untraceable_steps_raise_an_error_naming_the_cause(fn, cause, line):
    torch.manual_seed(0)
    net = MLP()
    optimizer = optim.SGD(net.parameters(), lr=0.1)
    before = params_of(net)
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    with pytest.raises(CompileError) as info:
        torch.compile(fn)(net, optimizer, x, y)
    message = str(info.value)
    assert cause in message and line in message and "test_compile.py" in message
    assert "eager_fallback=True" in message
    # the failed trace left the state as it was: concrete, unchanged, usable
    assert_params_close(params_of(net), before, atol=0)
    assert all(p.grad is None for p in net.parameters()) and not optimizer.state
    mlp_step(net, optimizer, x, y)


def test_eager_fallback_warns_and_runs_the_step_eagerly():
    torch.manual_seed(0)
    nets = [MLP(), MLP()]
    nets[1].load_state_dict(nets[0].state_dict())
    optimizers = [optim.SGD(n.parameters(), lr=0.1) for n in nets]
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    step = torch.compile(_bad_item, eager_fallback=True)
    with pytest.warns(RuntimeWarning, match="Running it eagerly"):
        got = step(nets[1], optimizers[1], x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then plainly eager
        got2 = step(nets[1], optimizers[1], x, y)
    expected = [_bad_item(nets[0], optimizers[0], x, y) for _ in range(2)]
    assert isinstance(got, float) and [got, got2] == pytest.approx(expected, rel=1e-5)
    assert_params_close(params_of(nets[1]), params_of(nets[0]))
    assert step.compilations == 0


def test_disable_returns_the_function_and_decorator_forms_work():
    def fn(x):
        return x * 2

    assert torch.compile(fn, disable=True) is fn
    compiled = torch.compile(fullgraph=True)(fn)
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
    assert compiled.__name__ == "fn"


def test_arrays_handed_out_between_steps_survive_the_next_step():
    # A compiled step donates the arrays it wrote last time; one read since (here
    # by torch.functional, or a torch.tensor copy sharing it) is copied instead.
    torch.manual_seed(0)
    net = MLP()
    optimizer = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    step = torch.compile(mlp_step)
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    step(net, optimizer, x, y)
    step(net, optimizer, x, y)
    assert all(p._s.exclusive for p in net.parameters())  # donated as they are
    params, _ = torch.functional(net)
    kept = torch.tensor(net.fc1.weight)
    before = np.asarray(params["fc1"]["weight"]).copy()
    step(net, optimizer, x, y)
    np.testing.assert_array_equal(np.asarray(params["fc1"]["weight"]), before)
    np.testing.assert_array_equal(kept.numpy(), before)
    assert not np.array_equal(np.asarray(net.fc1.weight._data), before)  # it moved


def test_a_step_compiled_after_eager_and_lazy_steps_traces_again_on_eval():
    """SGD's momentum states, stepped eagerly then lazily, share one started
    flag: the compiled step donates what it updates, and tracing again (after
    ``net.eval()``) must find every state whole."""
    from jaxblitz.compat import lazy

    torch.manual_seed(0)
    net, criterion = Net(), nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    rng = np.random.default_rng(0)
    images = torch.tensor(rng.standard_normal((4, 3, 32, 32), dtype=np.float32))
    labels = torch.tensor(rng.integers(0, 10, 4))

    def step(inputs, targets):
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss

    was = lazy.is_lazy()
    try:
        for on in (False, True):
            lazy.set_lazy(on)
            for _ in range(2):
                step(images, labels).item()
    finally:
        lazy.set_lazy(was)
    compiled = torch.compile(step)
    for _ in range(2):
        compiled(images, labels)
    net.eval()
    compiled(images, labels)
    net.train()
    assert compiled.compilations == 2
    assert np.isfinite(compiled(images, labels).item())


def test_a_step_compiled_lazily_after_a_failed_compile_runs_in_each_mode():
    """A compiled step captures no device array of compat's as a constant of its
    program (lazy mode's same-bits zeros, which a whole backward pass asked for
    inside the trace): JAX passes such constants as hidden arguments, and a
    program compiled again for ``eval()`` after a failed compile was then
    handed the wrong count of them (an INVALID_ARGUMENT error from XLA)."""
    from jaxblitz.compat import lazy

    was = lazy.is_lazy()
    lazy.set_lazy(True)
    try:
        test_untraceable_steps_raise_an_error_naming_the_cause(
            _bad_branch, "data-dependent Python control flow", "if loss > 1:"
        )
        test_a_step_compiled_after_eager_and_lazy_steps_traces_again_on_eval()
    finally:
        lazy.set_lazy(was)
