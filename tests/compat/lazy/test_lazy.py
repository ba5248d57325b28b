"""compat's lazy execution: the same values as eager mode, one program per step."""

import sys
import types

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy, nn, optim
from tests.compat.blitz_net import Net
from tests.jit_counts import jit_cache_size


def _in_mode(flag: bool):
    was = lazy.is_lazy()
    lazy.set_lazy(flag)
    yield
    lazy.set_lazy(was)


lazy_mode = pytest.fixture(lambda: (yield from _in_mode(True)), name="lazy_mode")
eager_mode = pytest.fixture(lambda: (yield from _in_mode(False)), name="eager_mode")


def _batches(n, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (
            rng.standard_normal((batch, 3, 32, 32), dtype=np.float32),
            rng.integers(0, 10, batch),
        )
        for _ in range(n)
    ]


def _train(batches, lazy_on: bool):
    """The Blitz's loop (zero_grad, forward, loss, backward, step, loss.item())."""
    lazy.set_lazy(False)
    torch.manual_seed(0)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    lazy.set_lazy(lazy_on)
    losses = []
    for images, labels in batches:
        optimizer.zero_grad()
        loss = criterion(net(torch.tensor(images)), torch.tensor(labels))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    weights = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    lazy.set_lazy(False)
    return losses, weights


def test_lazy_blitz_loop_gives_eager_modes_losses_and_weights_bit_for_bit():
    batches = _batches(6)
    eager_losses, eager_weights = _train(batches, lazy_on=False)
    lazy_losses, lazy_weights = _train(batches, lazy_on=True)
    assert lazy_losses == eager_losses
    for name, w in eager_weights.items():
        np.testing.assert_array_equal(lazy_weights[name], w, err_msg=name)


def test_a_lazy_training_step_runs_as_one_program_compiled_once(lazy_mode):
    torch.manual_seed(0)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    batches = _batches(9) + _batches(1, batch=3, seed=1)  # a last partial batch

    def step(images, labels):
        optimizer.zero_grad()
        loss = criterion(net(torch.tensor(images)), torch.tensor(labels))
        loss.backward()
        optimizer.step()
        return loss.item()

    for images, labels in batches[:3]:
        step(images, labels)
    lazy.metrics(reset=True)
    for images, labels in batches[3:9]:  # the steady state: a program per step
        step(images, labels)
    steady = lazy.metrics(reset=True)
    assert steady["syncs"] == 6
    assert steady.get("compiles", 0) == 0
    # each step's old weights and momenta: buffers the program reuses
    assert steady["donated"] >= 6 * 2 * len(list(net.parameters()))
    step(*batches[9])  # a batch of 3: one new program, not one per op
    assert lazy.metrics()["compiles"] == 1


def test_lazy_ops_return_pending_values_until_read(lazy_mode):
    x = torch.ones(3) * 2
    y = (x + 1).sum()
    assert isinstance(y._s.pending, lazy.LazyArray)
    assert y.shape == torch.Size([])  # shape and dtype without running anything
    assert y.dtype == torch.float32
    lazy.metrics(reset=True)
    assert y.item() == 9.0
    assert lazy.metrics()["syncs"] == 1
    assert y._s.pending.value is not None  # computed once, kept


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.item(),
        lambda t: t.tolist(),
        lambda t: t.detach().numpy(),
        lambda t: repr(t),
        lambda t: float(t),
        lambda t: bool(t > 0),
    ],
    ids=["item", "tolist", "numpy", "repr", "float", "bool"],
)
def test_each_read_of_a_value_is_a_sync_point(lazy_mode, read):
    t = torch.ones(1) * 3
    lazy.metrics(reset=True)
    read(t)
    assert lazy.metrics()["syncs"] == 1


def test_at_once_where_known_runs_known_calls_now_and_records_the_rest(lazy_mode):
    known = torch.tensor([1.0, 2.0])
    computed = known * 2
    lazy.metrics(reset=True)
    with lazy.at_once_where_known():
        now = known + 1
        later = computed + 1
    assert not lazy.pending(now._s.pending)
    assert lazy.pending(later._s.pending)
    assert lazy.metrics().get("syncs", 0) == 0  # nothing pending ran early
    assert lazy.pending((now + 1)._s.pending)  # outside, recorded again
    assert now.tolist() == [2.0, 3.0]
    assert later.tolist() == [3.0, 5.0]


def test_explicit_sync_runs_pending_work(lazy_mode):
    t = torch.arange(4.0) * 2
    torch.sync()
    assert t._s.pending.value is not None
    np.testing.assert_array_equal(t.numpy(), [0.0, 2.0, 4.0, 6.0])


def test_shape_errors_are_raised_at_the_op_while_lazy(lazy_mode):
    a, b = torch.ones(2, 3), torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ b
    lazy.set_lazy(False)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ b


def test_a_loop_without_reads_is_flushed_at_the_size_cap(lazy_mode, monkeypatch):
    monkeypatch.setattr(lazy, "MAX_PENDING", 50)
    lazy.metrics(reset=True)
    t = torch.ones(3) * 0.0
    for _ in range(300):
        t = t + 1
    # Each graph is cut once it holds the cap, before a call like the one it
    # began with, or at twice the cap (a graph that began with the multiply,
    # which never comes again).
    np.testing.assert_array_equal(t.numpy(), [300.0] * 3)
    assert 300 // 100 <= lazy.metrics()["syncs"] - 1 <= 300 // 50


def test_a_loop_cut_at_the_cap_begins_each_graph_at_the_same_call(
    lazy_mode, monkeypatch
):
    monkeypatch.setattr(lazy, "MAX_PENDING", 64)
    x, y = torch.linspace(-1, 1, 50), torch.linspace(0, 2, 50)
    a, b = torch.tensor(0.1), torch.tensor(-0.2)
    lazy.metrics(reset=True)
    for step in range(400):  # 11 calls a step: 64 is no multiple of it
        g = 2.0 * (a + b * x - y)
        a -= 1e-3 * g.sum()
        b -= 1e-3 * (g * x).sum()
        if step == 99:
            compiled = lazy.metrics()["compiles"]
    assert lazy.metrics()["compiles"] == compiled  # 50 more graphs, no compile
    # cut at a fixed size, the graphs would begin at each of a step's 11 calls
    # in turn: 11 programs
    assert compiled < 11
    assert lazy.metrics()["syncs"] > 50
    a.item()  # the last partial graph: one program more at most
    assert lazy.metrics()["compiles"] <= compiled + 1


def test_a_loop_of_autograd_grad_without_reads_is_cut_at_its_steps_ends(lazy_mode):
    x, y = torch.linspace(-1, 1, 50), torch.linspace(0, 2, 50)
    w = torch.tensor([0.1, -0.2], requires_grad=True)
    lazy.metrics(reset=True)
    for _ in range(30):
        loss = ((w[0] + w[1] * x - y) ** 2).sum()
        (g,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= 1e-3 * g
    assert lazy.metrics()["syncs"] >= 30 // lazy.STEP_ENDS
    assert lazy.metrics()["compiles"] <= 3


def test_a_training_loop_without_reads_is_cut_at_its_steps_ends(lazy_mode):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    x, y = torch.randn(20, 3), torch.randn(20, 1)
    losses = []
    lazy.metrics(reset=True)
    for step in range(40):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 9:  # read every 10 steps, as tutorials print
            losses.append(loss.item())
        if step == 19:
            compiled = lazy.metrics()["compiles"]
    # cut at step ends (backward, step), never grown to the size cap: later
    # steps reuse the programs the first ones compiled
    assert lazy.metrics()["compiles"] == compiled
    assert lazy.metrics()["syncs"] >= 20
    lazy.set_lazy(False)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    x, y = torch.randn(20, 3), torch.randn(20, 1)
    eager = []
    for step in range(40):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 9:
            eager.append(loss.item())
    np.testing.assert_allclose(losses, eager, rtol=1e-6)


def test_in_place_writes_through_views_are_recorded(lazy_mode):
    base = torch.zeros(2, 3)
    row = base[1]
    row.add_(5)
    base[0, 1] = 7
    np.testing.assert_array_equal(base.numpy(), [[0, 7, 0], [5, 5, 5]])


def test_gradients_and_hooks_behave_as_in_eager_mode(lazy_mode):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = (x * x).sum()
    y.backward()
    assert seen == [[2.0, 4.0, 6.0]]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    assert y.grad_fn.name() == "SumBackward0"


def test_the_switch_runs_pending_work_before_going_eager(lazy_mode):
    t = torch.ones(2) + 1
    lazy.set_lazy(False)
    assert not lazy.is_lazy()
    assert t._s.pending.value is not None
    assert (t * 2).tolist() == [4.0, 4.0]


def test_a_value_made_in_another_thread_is_computed_when_read_here(lazy_mode):
    import threading

    made = {}

    def work():
        made["t"] = torch.ones(3) * 4
        made["u"] = made["t"] + 1  # its thread keeps recording after the read

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert made["t"].tolist() == [4.0, 4.0, 4.0]
    assert made["u"].tolist() == [5.0, 5.0, 5.0]


def test_work_on_another_device_runs_what_is_pending_first(lazy_mode):
    import jax

    here = torch.ones(3) * 2  # uncommitted: the default device
    there = torch.Tensor._wrap(jax.device_put(np.ones(3, np.float32), jax.devices()[0]))
    lazy.metrics(reset=True)
    moved = there * 3  # committed to a device: a program of its own
    assert lazy.metrics()["syncs"] == 1
    assert here._s.pending.value is not None
    assert moved.tolist() == [3.0, 3.0, 3.0] and here.tolist() == [2.0, 2.0, 2.0]


def test_torch_compile_takes_over_an_optimizer_that_stepped_lazily():
    batches = _batches(4)
    lazy.set_lazy(False)
    torch.manual_seed(0)
    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

    def step(images, labels):
        optimizer.zero_grad()
        loss = criterion(net(images), labels)
        loss.backward()
        optimizer.step()
        return loss

    tensors = [(torch.tensor(x), torch.tensor(y)) for x, y in batches]
    lazy.set_lazy(True)
    try:
        lazy_losses = [step(*b).item() for b in tensors[:2]]
        compiled = torch.compile(step)
        compiled_losses = [compiled(*b).item() for b in tensors[2:]]
    finally:
        lazy.set_lazy(False)
    eager_losses, _ = _train(batches, lazy_on=False)
    np.testing.assert_allclose(lazy_losses + compiled_losses, eager_losses, rtol=1e-5)


def test_a_loop_of_scalar_writes_compiles_one_program_for_every_index(eager_mode):
    """``ids[i] = t`` (a tensor: a number is stored on the host, with no program):
    the index is an argument of the programs, not part of them (one compiled
    per index took a minute a loop)."""
    from jaxblitz.compat.autograd import graph
    from jaxblitz.compat.tensor import _layout

    ids = torch.zeros(50, dtype=torch.long)
    for i in range(3):
        ids[i] = torch.tensor(i + 7)
        ids[i].item()
    programs = jit_cache_size(graph._fwd), jit_cache_size(_layout._write_at)
    for i in range(3, 50):
        ids[i] = torch.tensor(i + 7)
        assert ids[i].item() == i + 7
    assert (jit_cache_size(graph._fwd), jit_cache_size(_layout._write_at)) == programs
    assert ids.tolist() == list(range(7, 57))


def test_an_index_array_changed_after_the_op_does_not_change_its_result(lazy_mode):
    index = np.array([0, 2])
    picked = torch.arange(5.0) * 10
    out = picked[index]
    index[0] = 4  # after the op, before any sync: eager mode has read it already
    assert out.tolist() == [0.0, 20.0]


def test_a_value_someone_still_holds_is_never_donated(lazy_mode):
    w = torch.ones(3)
    held = w.detach()  # shares w's storage: the old value stays readable
    kept = w._value()
    w.mul_(2)  # pending: w's new value from its old one
    lazy.sync()
    np.testing.assert_array_equal(np.asarray(kept), np.ones(3, np.float32))
    np.testing.assert_array_equal(held.numpy(), np.full(3, 2.0, np.float32))
    alone = torch.ones(3) + 0
    lazy.sync()
    before = lazy.metrics()["donated"]
    alone.mul_(3)  # nothing else holds alone's old array: given to the program
    lazy.sync()
    assert lazy.metrics()["donated"] == before + 1
    np.testing.assert_array_equal(alone.numpy(), np.full(3, 3.0, np.float32))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("auto", None),
        ("", None),
    ],
)
def test_the_switch_reads_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv("JAXBLITZ_COMPAT_LAZY", value)
    assert lazy._from_environment() is expected


def test_a_bad_switch_value_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("JAXBLITZ_COMPAT_LAZY", "fast")
    with pytest.raises(ValueError, match="JAXBLITZ_COMPAT_LAZY='fast': expected 1"):
        lazy._from_environment()
    with pytest.raises(ValueError, match="expected True, False or 'auto'"):
        lazy.set_lazy("yes")


@pytest.mark.parametrize(("backend", "expected"), [("cpu", False), ("gpu", True)])
def test_auto_is_lazy_on_an_accelerator_and_eager_on_the_cpu(
    monkeypatch, backend, expected
):
    was = lazy.is_lazy()
    monkeypatch.setattr(lazy.jax, "default_backend", lambda: backend)
    try:
        lazy.set_lazy("auto")
        assert lazy.is_lazy() is expected
    finally:
        lazy.set_lazy(was)


def test_an_error_found_at_the_sync_names_the_call_and_the_line_that_made_it(lazy_mode):
    import jax

    from jaxblitz.compat.tensor import _dtype

    def boom(v):
        raise ValueError("boom")

    def fails_when_run(x):  # its shapes are worked out; running it fails
        return jax.pure_callback(boom, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    call = lazy.jit(fails_when_run)
    kept = torch.ones(2)  # held: not donated, so the calls can run again alone
    ok = kept * 2
    with _dtype.x64(True):  # as compat's ops call it
        line = sys._getframe().f_lineno + 1
        bad = call(ok._value())  # recorded: no error yet
    assert isinstance(bad, lazy.LazyArray)
    with pytest.raises(Exception, match="boom") as caught:
        lazy.sync()
    message = str(caught.value)
    assert "(in compat's pending work: call 2 of 2, fails_when_run" in message
    assert f"made at test_lazy.py:{line};" in message  # by default, not only WHY
    assert "set_lazy(False)" in message
    # an input given to the failed program is gone: the error says so, still
    # raised as what the program raised
    ok = torch.ones(2) * 2
    with _dtype.x64(True):
        bad = call(ok._value())
    with pytest.raises(Exception, match="boom") as caught:
        lazy.sync()
    assert "in compat's pending work of 2 calls, run as one program" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (lambda t: t.nonzero().flatten().tolist(), [1, 2]),
        (lambda t: torch.unique(t).tolist(), [0.0, 3.0, 6.0]),
        (lambda t: t[t > 4].tolist(), [6.0]),
        (lambda t: t.masked_select(t > 0).tolist(), [3.0, 6.0]),
        (lambda t: int(t.argmax()), 2),
    ],
    ids=["nonzero", "unique", "mask", "masked_select", "int"],
)
def test_a_shape_that_depends_on_values_syncs_first(lazy_mode, op, expected):
    t = torch.tensor([0.0, 1.0, 2.0]) * 3  # pending
    lazy.metrics(reset=True)
    assert op(t) == expected
    assert lazy.metrics()["syncs"] >= 1


def test_torch_save_is_a_sync_point(lazy_mode):
    import io

    t = torch.arange(3.0) * 2  # pending
    buffer = io.BytesIO()
    lazy.metrics(reset=True)
    torch.save({"t": t}, buffer)
    assert lazy.metrics()["syncs"] == 1
    buffer.seek(0)
    assert torch.load(buffer)["t"].tolist() == [0.0, 2.0, 4.0]


def test_a_multiply_recorded_before_the_add_that_uses_it_rounds_as_eager_mode():
    """Inside one program XLA would fuse ``c + d * x`` into an FMA (XLA's CPU
    compiler always allows it), one rounding instead of eager mode's two: 729
    of these 2000 elements moved. The product crosses to the add opaquely."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(2000).astype(np.float32)
    c, d = np.float32(0.1234567), np.float32(0.3)
    results = {}
    for flag in (False, True):
        lazy.set_lazy(flag)
        try:
            t = torch.tensor(x)
            results[flag] = (
                (torch.tensor(c) + torch.tensor(d) * t).numpy(),
                (-(t * d) + c).numpy(),  # a negated product: an FMA's other form
                ((t * t).sum() + c).numpy(),  # a product summed, then added
            )
        finally:
            lazy.set_lazy(False)
    np.testing.assert_array_equal(results[False][0], c + d * x)  # NumPy's two
    for eager, lazy_ in zip(results[False], results[True], strict=True):
        np.testing.assert_array_equal(lazy_, eager)


class _Placed:
    """A committed input's sharding, as far as the guard asks: its devices."""

    def __init__(self, platform: str):
        self.device_set = [types.SimpleNamespace(platform=platform)]


def test_products_are_kept_apart_only_in_programs_that_run_on_the_cpu(
    lazy_mode, monkeypatch
):
    """On a GPU or TPU the program fuses freely (the guard's kernels cost more
    than the last bit is worth there); on the CPU, eager mode's bits."""
    assert lazy._exact(_Placed("cpu")) is True
    assert lazy._exact(_Placed("gpu")) is False
    assert lazy._exact(_Placed("tpu")) is False
    assert lazy._exact(None) is True  # these tests: JAX's default is the CPU
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert lazy._exact(None) is False
    # the choice is part of the cached program's key: both kinds are compiled
    x = torch.tensor([1.5, 2.5])
    (x * 3 + 1).numpy()
    assert {key[-1] for key in lazy._programs} >= {False}


@pytest.fixture
def storm(monkeypatch):
    """The compile-storm check, fresh, over the last 8 syncs (the suite turns it
    off)."""
    monkeypatch.setattr(lazy, "STORM_SYNCS", 8)
    fresh = {"recent": [], "compiles": 0, "seconds": 0.0, "said": False}
    monkeypatch.setattr(lazy, "_storm", fresh)
    monkeypatch.setattr(lazy, "_programs", {})


def test_syncs_that_compile_every_time_are_called_a_compile_storm_once(
    lazy_mode, storm
):
    line = sys._getframe().f_lineno + 4
    with pytest.warns(UserWarning, match="compiled a new program at 8 of the l") as w:
        for n in range(1, 13):  # a new length each step: a new structure each sync
            y = (torch.ones(n) * 2 + 1).sum()
            y.item()
    assert len(w) == 1  # once a process
    assert w[0].filename == __file__ and w[0].lineno == line  # the user's line
    assert "(8 programs," in str(w[0].message)
    assert "set_lazy(False)" in str(w[0].message)


def test_a_loop_that_reuses_its_programs_is_no_compile_storm(lazy_mode, storm):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for step in range(40):  # four shapes, each seen ten times
            y = (torch.ones(step % 4 + 1) * 2 + 1).sum()
            y.item()
    assert lazy._storm["compiles"] == 4 and not lazy._storm["said"]


@pytest.mark.parametrize(
    ("value", "syncs"), [("", 0), (" 8 ", 8), ("lots", None), ("-3", None)]
)
def test_the_storm_variable_is_a_whole_number_or_a_clear_error(
    value, syncs, monkeypatch
):
    monkeypatch.setenv("JAXBLITZ_COMPAT_LAZY_STORM", value)
    if syncs is not None:
        assert lazy._storm_syncs() == syncs
        return
    with pytest.raises(ValueError) as info:
        lazy._storm_syncs()
    assert str(info.value) == (
        f"JAXBLITZ_COMPAT_LAZY_STORM={value!r}: expected a whole number of syncs "
        "to look at (0: never warn of a compile storm)"
    )


def test_the_compile_storm_check_is_off_at_zero(lazy_mode, storm, monkeypatch):
    import warnings

    monkeypatch.setattr(lazy, "STORM_SYNCS", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 13):
            (torch.ones(n) * 2).sum().item()
