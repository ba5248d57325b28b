"""Tests for jaxblitz.train and jaxblitz.checkpoints on small seeded datasets."""

import dataclasses
import os
import subprocess
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxblitz import evaluate, kernels, models, runtime, train
from jaxblitz.checkpoints import Checkpointer, load_weights, save_weights
from jaxblitz.data import epoch_order
from tests.jit_counts import jit_cache_size


class Data(NamedTuple):
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]


def random_data(n: int = 50, channels: int = 3, seed: int = 0) -> Data:
    rng = np.random.default_rng(seed)
    images = rng.uniform(-1, 1, (n, channels, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, n).astype(np.int32)
    return Data(images, labels, tuple("abcdefghij"))


def learnable_data(n: int = 40) -> Data:
    """Two classes that differ in mean brightness: a net can learn it fast."""
    rng = np.random.default_rng(1)
    labels = (np.arange(n) % 2).astype(np.int32)
    images = (
        rng.normal(0, 0.3, (n, 3, 32, 32))
        + np.where(labels, 0.5, -0.5)[:, None, None, None]
    )
    return Data(images.astype(np.float32), labels, ("dark", "light"))


def assert_trees_equal(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_config_defaults_are_the_blitz_hyperparameters():
    c = train.Config()
    assert (c.dataset, c.batch_size, c.lr, c.momentum, c.epochs) == (
        "cifar10",
        4,
        0.001,
        0.9,
        2,
    )
    assert c.widths == (6, 16) and c.optimizer == "sgd"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("batch_size", 0, "batch_size must be >= 1, got 0"),
        ("lr", -0.1, "lr must be > 0"),
        ("momentum", 1.5, r"momentum must be in \[0, 1\)"),
        ("optimizer", "lbfgs", "optimizer must be one of"),
        ("loop", "vmap", "loop must be one of"),
    ],
)
def test_config_rejects_bad_values_with_a_clear_message(field, value, message):
    with pytest.raises(ValueError, match=message):
        train.Config(**{field: value})


def test_epoch_order_is_a_padded_masked_permutation():
    idx, mask = epoch_order(jax.random.key(0), 10, 4)
    assert idx.shape == (3, 4) and mask.shape == (3, 4)
    assert sorted(np.asarray(idx).ravel()[:10].tolist()) == list(range(10))
    np.testing.assert_array_equal(np.asarray(mask).ravel(), [1] * 10 + [0, 0])


def test_epoch_order_drop_last_drops_the_partial_batch():
    idx, mask = epoch_order(jax.random.key(0), 10, 4, drop_last=True)
    assert idx.shape == (2, 4) and bool(jnp.all(mask == 1))


def test_epoch_order_depends_only_on_the_key():
    a, _ = epoch_order(jax.random.key(5), 20, 4)
    b, _ = epoch_order(jax.random.key(5), 20, 4)
    c, _ = epoch_order(jax.random.key(6), 20, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_a_padded_masked_step_equals_a_step_on_the_partial_batch():
    config = train.Config(dataset="x")
    tx = train.make_optimizer(config)
    data = random_data(3)
    plain, plain_loss = jax.jit(train.train_step, static_argnames="tx")(
        train.init_state(config, 3), data.images, data.labels, jnp.ones(3), tx
    )
    padded_images = np.concatenate([data.images, np.zeros_like(data.images[:1])])
    padded_labels = np.concatenate([data.labels, [7]])
    padded, padded_loss = jax.jit(train.train_step, static_argnames="tx")(
        train.init_state(config, 3),
        padded_images,
        padded_labels,
        jnp.array([1.0, 1.0, 1.0, 0.0]),
        tx,
    )
    assert float(padded_loss) == pytest.approx(float(plain_loss), rel=1e-6)
    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(padded), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_chunked_gradient_step_equals_the_whole_batch_step():
    config = train.Config(dataset="x")
    tx = train.make_optimizer(config)
    data = random_data(16)
    # The last 6 examples are padding: one chunk of 4 is only padding.
    mask = jnp.asarray(np.arange(16) < 10, jnp.float32)
    step = jax.jit(train.train_step, static_argnames=("tx", "grad_chunk"))
    whole, whole_loss = step(
        train.init_state(config, 3), data.images, data.labels, mask, tx
    )
    chunked, chunked_loss = step(
        train.init_state(config, 3), data.images, data.labels, mask, tx, grad_chunk=4
    )
    assert float(chunked_loss) == pytest.approx(float(whole_loss), rel=1e-6)
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(chunked), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="grad_chunk 5 must divide the batch size 16"):
        step(train.init_state(config, 3), data.images, data.labels, mask, tx, 5)
    assert kernels.grad_chunk(4) is None and kernels.grad_chunk(512) == 16
    assert kernels.grad_chunk(100) is None  # not a multiple of 8: whole batch


def test_step_and_scan_loops_give_the_same_parameters():
    data = random_data(30)
    results = {}
    for loop in train.LOOPS:
        config = train.Config(dataset="x", epochs=2, loop=loop, log_every=3)
        state, history = train.fit(config, data, log=lambda s: None)
        results[loop] = (state.params, history[-1]["losses"])
    assert_trees_equal(results["scan"][0], results["step"][0])
    np.testing.assert_array_equal(results["scan"][1], results["step"][1])


def test_fit_reports_one_loss_per_batch_and_counts_steps():
    data = random_data(10)
    config = train.Config(dataset="x", epochs=2, log_every=2)
    lines = []
    state, history = train.fit(config, data, log=lines.append)
    assert int(state.step) == 6 and [len(h["losses"]) for h in history] == [3, 3]
    assert lines[0].startswith("[1,     2] loss: ")


def test_training_reduces_the_loss_on_a_learnable_dataset():
    config = train.Config(dataset="x", epochs=6, optimizer="adam", loop="scan")
    data = learnable_data()
    state, history = train.fit(config, data, log=lambda s: None)
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]
    assert evaluate.evaluate(state.params, data)["accuracy"] >= 0.9


def test_the_second_epoch_compiles_nothing_new():
    sizes = []

    def record(epoch, state, metrics):
        sizes.append(jit_cache_size(train.run_steps))
        return {}

    config = train.Config(dataset="x", epochs=3, log_every=4, batch_size=4)
    train.fit(config, random_data(21, seed=3), log=lambda s: None, on_epoch_end=record)
    assert sizes[0] == sizes[1] == sizes[2]


@pytest.mark.parametrize("optimizer", train.OPTIMIZERS)
def test_optimizers_follow_pytorch_update_rules(optimizer):
    # A quadratic with gradients ~1e-3, where eps placement (sqrt(v) + eps vs
    # sqrt(v + eps)) and decay rates change the result in the third digit.
    torch = pytest.importorskip("torch")
    config = train.Config(dataset="x", optimizer=optimizer, lr=0.01)
    tx = train.make_optimizer(config)
    scale = np.linspace(0.5, 2.0, 6).astype(np.float32)
    start = np.linspace(-1e-3, 2e-3, 6).astype(np.float32)

    def loss_fn(w, lib):
        return 0.5 * (lib.asarray(scale) * w**2).sum() + (w**3).sum()

    w = jnp.asarray(start)
    opt_state = tx.init(w)
    tw = torch.tensor(start, requires_grad=True)
    torch_opt = {
        "sgd": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
        "nesterov": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True),
        "adam": lambda p: torch.optim.Adam(p, lr=0.01),
        "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    }[optimizer]([tw])
    for _ in range(5):
        grads = jax.grad(loss_fn)(w, jnp)
        updates, opt_state = tx.update(grads, opt_state, w)
        w = optax.apply_updates(w, updates)
        torch_opt.zero_grad()
        loss_fn(tw, torch).backward()
        torch_opt.step()
    np.testing.assert_allclose(w, tw.detach().numpy(), rtol=1e-5, atol=1e-9)


def test_train_step_matches_a_pytorch_sgd_momentum_step_on_lenet():
    torch = pytest.importorskip("torch")
    from tests.test_models import load_into_torch, torch_net

    config = train.Config(dataset="x")
    state = train.init_state(config, 3)
    _, net = torch_net(3)
    load_into_torch(torch, net, state.params)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    data = random_data(12, seed=4)
    for i in range(3):
        x, y = data.images[4 * i : 4 * i + 4], data.labels[4 * i : 4 * i + 4]
        state, loss = train.train_step(
            state, x, y, jnp.ones(4), train.make_optimizer(config)
        )
        optimizer.zero_grad()
        torch_loss = torch.nn.CrossEntropyLoss()(
            net(torch.from_numpy(x)), torch.from_numpy(y).long()
        )
        torch_loss.backward()
        optimizer.step()
        assert float(loss) == pytest.approx(torch_loss.item(), rel=1e-5)
    torch_params = dict(net.named_parameters())
    for name in models.named_shapes(state.params):
        layer, kind = name.split(".")
        np.testing.assert_allclose(
            state.params[layer][kind],
            torch_params[name].detach().numpy(),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def test_a_non_finite_loss_stops_training_names_the_step_and_keeps_the_checkpoint(
    tmp_path,
):
    data = random_data(40)
    config = train.Config(dataset="x", epochs=1, checkpoint_every=2, loop="step")
    checkpointer = Checkpointer(tmp_path)
    train.fit(config, data, checkpointer=checkpointer, log=lambda s: None)
    assert checkpointer.latest_step() == 10
    # A second epoch on poisoned data: resumes at step 10, fails at step 11.
    bad = data._replace(images=np.full_like(data.images, np.nan))
    with pytest.raises(FloatingPointError, match=r"Loss became nan at step 11 "):
        train.fit(
            dataclasses.replace(config, epochs=2),
            bad,
            checkpointer=checkpointer,
            resume=True,
            accept_data_change=True,  # other data: resumed only when asked
            log=lambda s: None,
        )
    assert checkpointer.latest_step() == 10


def test_checkpoint_round_trip_restores_state_and_metadata(tmp_path):
    config = train.Config(dataset="x", optimizer="adam")
    state = train.init_state(config, 3)
    state, _ = train.train_step(
        state, *random_data(4)[:2], jnp.ones(4), train.make_optimizer(config)
    )
    checkpointer = Checkpointer(tmp_path / "ckpt")
    checkpointer.save(1, state, {"epoch": 0, "position": 1, "losses": [2.5]})
    restored, meta = checkpointer.restore(train.init_state(config, 3))
    assert_trees_equal(restored, state)
    assert meta == {"epoch": 0, "position": 1, "losses": [2.5]}


def test_restore_without_a_checkpoint_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="No checkpoint to resume from"):
        Checkpointer(tmp_path / "empty").restore({"x": jnp.zeros(1)})


def test_exported_weights_round_trip_and_use_state_dict_names(tmp_path):
    params = models.init_lenet(jax.random.key(0), 3)
    path = save_weights(params, tmp_path / "weights.safetensors")
    from safetensors.numpy import load_file

    assert set(load_file(str(path))) == set(models.named_shapes(params))
    assert_trees_equal(load_weights(path, like=params), params)
    assert not list(tmp_path.glob(".*tmp"))  # no temporary file left behind


def test_loading_weights_reports_missing_extra_and_misshaped_keys(tmp_path):
    params = models.init_lenet(jax.random.key(0), 3)
    path = save_weights(models.init_lenet(jax.random.key(0), 1), tmp_path / "w.st")
    with pytest.raises(ValueError, match=r"conv1.weight: file has \(6, 1, 5, 5\)"):
        load_weights(path, like=params)


def test_exported_weights_load_into_the_pytorch_net_with_equal_logits(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    from tests.test_models import torch_net

    params = models.init_lenet(jax.random.key(3), 3)
    path = save_weights(params, tmp_path / "weights.safetensors")
    _, net = torch_net(3)
    net.load_state_dict(load_file(str(path)))
    x = random_data(4).images
    np.testing.assert_allclose(
        net(torch.from_numpy(x)).detach().numpy(),
        models.lenet(params, jnp.asarray(x)),
        rtol=1e-5,
        atol=1e-5,
    )
    # ... and the reverse: PyTorch's own state_dict file loads as params.
    save_file(net.state_dict(), str(tmp_path / "torch.safetensors"))
    back = load_weights(tmp_path / "torch.safetensors", like=params)
    assert_trees_equal(back, params)


def test_evaluate_counts_per_class_accuracy_and_confusion():
    data = learnable_data(6)
    params = models.init_lenet(jax.random.key(0), 3, num_classes=2)
    result = evaluate.evaluate(params, data, batch_size=4)
    predicted = np.asarray(
        jnp.argmax(models.lenet(params, jnp.asarray(data.images)), -1)
    )
    assert result["correct"] == int((predicted == data.labels).sum())
    assert np.sum(result["confusion"]) == 6
    for i, name in enumerate(data.class_names):
        assert result["per_class"][name] == pytest.approx(
            np.mean(predicted[data.labels == i] == i)
        )


@pytest.mark.parametrize("n, batch_size", [(10, 4), (8, 4), (3, 1000)])
def test_predict_covers_every_image_once_in_order(n, batch_size):
    params = models.init_lenet(jax.random.key(0), 3)
    images = np.asarray(jax.random.normal(jax.random.key(1), (n, 3, 32, 32)))
    expected = np.asarray(jnp.argmax(models.lenet(params, jnp.asarray(images)), -1))
    np.testing.assert_array_equal(
        evaluate.predict(params, images, batch_size), expected
    )


def test_set_cpu_threads_starts_jax_then_unpins_every_thread():
    code = """
import os, jax.numpy as jnp
from jaxblitz import runtime
cores = os.sched_getaffinity(0)
print(runtime.set_cpu_threads(1), len(cores))
print(float(jnp.arange(4.0).sum()))
print(all(os.sched_getaffinity(int(t)) == cores for t in os.listdir("/proc/self/task")))
try:
    runtime.set_cpu_threads(1)
except RuntimeError as e:
    print("late:", e)
"""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no sched_setaffinity on this platform")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    applied, value, unpinned, late = out.stdout.splitlines()
    flag, cores = applied.split()
    assert flag == str(int(cores) > 1)  # one core: nothing to narrow
    assert value == "6.0" and unpinned == "True"
    assert late.startswith("late: set_cpu_threads must run before JAX starts")
    with pytest.raises(ValueError, match="threads must be >= 1"):
        runtime.set_cpu_threads(0)


def test_fit_again_with_the_same_config_reuses_the_compiled_epoch():
    config = train.Config(dataset="x", epochs=1)
    train.fit(config, random_data(12), log=lambda s: None)
    compiled = jit_cache_size(train.run_steps)
    for _ in range(2):
        train.fit(dataclasses.replace(config), random_data(12), log=lambda s: None)
    assert jit_cache_size(train.run_steps) == compiled
    assert train.make_optimizer(config) is train.make_optimizer(
        dataclasses.replace(config)
    )
