"""Tests for jaxblitz.nnx: the Blitz's Net in Flax NNX equals the core and PyTorch."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from safetensors.numpy import load_file

from jaxblitz import cli, models, train
from jaxblitz import nnx as jnnx
from jaxblitz.checkpoints import Checkpointer
from tests.test_models import load_into_torch, torch_net
from tests.test_train import assert_trees_equal, random_data

ROOT = Path(__file__).resolve().parents[1]


def images(b: int = 4, channels: int = 3) -> jax.Array:
    x = np.random.default_rng(0).standard_normal((b, channels, 32, 32))
    return jnp.asarray(x, jnp.float32)


def test_net_state_has_the_blitz_state_dict_names_shapes_and_count():
    net = jnnx.Net(3, rngs=nnx.Rngs(0))
    shapes = models.named_shapes(jnnx.to_params(net))
    assert shapes == models.named_shapes(models.init_lenet(jax.random.key(0), 3))
    assert models.count_params(jnnx.to_params(net)) == 62006
    assert net.conv1.weight.shape == (6, 3, 5, 5)


def test_wider_net_follows_widths_like_the_core():
    net = jnnx.Net(1, (32, 64), rngs=nnx.Rngs(0))
    assert net.conv2.weight.shape == (64, 32, 5, 5)
    assert net.fc1.weight.shape == (120, 64 * 5 * 5)
    with pytest.raises(ValueError, match="widths must be two positive ints"):
        jnnx.Net(1, (6,), rngs=nnx.Rngs(0))


@pytest.mark.parametrize("impl", ["im2col", "xla"])
def test_net_gives_the_cores_logits_on_the_same_weights(impl):
    params = models.init_lenet(jax.random.key(1), 3)
    net = jnnx.from_params(params)
    x = images()
    np.testing.assert_array_equal(net(x, impl), models.lenet(params, x, impl))


def test_net_gives_the_cores_gradients():
    params = models.init_lenet(jax.random.key(1), 3)
    net = jnnx.from_params(params)
    x, y = images(), jnp.array([0, 3, 9, 3])

    def core_loss(params):
        return models.cross_entropy(models.lenet(params, x), y)

    def nnx_loss(net):
        return models.cross_entropy(net(x), y)

    expected = jax.grad(core_loss)(params)
    grads = nnx.grad(nnx_loss)(net)
    assert_trees_equal(nnx.to_pure_dict(grads), expected)


def test_submodules_are_torchs_layers():
    net = jnnx.from_params(models.init_lenet(jax.random.key(2), 1))
    x = images(2, 1)
    params = jnnx.to_params(net)
    np.testing.assert_array_equal(net.conv1(x), models.conv2d(params["conv1"], x))
    h = jnp.ones((2, 400))
    np.testing.assert_array_equal(net.fc1(h), models.linear(params["fc1"], h))


def test_params_round_trip_through_a_net_unchanged():
    params = models.init_lenet(jax.random.key(3), 3, (8, 12), 7)
    back = jnnx.to_params(jnnx.from_params(params))
    assert_trees_equal(back, params)
    flat = models.flatten_params(params)  # a state_dict's dotted names
    assert_trees_equal(jnnx.to_params(jnnx.from_params(models.unflatten_params(flat))),
                       params)  # fmt: skip


def test_from_params_rejects_what_is_not_lenet_params():
    with pytest.raises(ValueError, match="could not read it.*unflatten_params"):
        jnnx.from_params({"conv1.weight": jnp.zeros((6, 1, 5, 5))})
    params = models.init_lenet(jax.random.key(0), 1)
    params["fc2"]["bias"] = jnp.zeros(3)
    with pytest.raises(ValueError, match=r"'fc2.bias': \(3,\)"):
        jnnx.from_params(params)


def test_net_matches_pytorch_logits_and_gradients_on_the_same_weights():
    torch, tnet = torch_net(3)
    params = models.init_lenet(jax.random.key(4), 3)
    load_into_torch(torch, tnet, params)
    net = jnnx.from_params(params)
    x, y = np.array(images()), np.array([1, 2, 3, 4])
    out = tnet(torch.from_numpy(x))
    torch.nn.CrossEntropyLoss()(out, torch.from_numpy(y)).backward()
    logits = net(jnp.asarray(x))
    np.testing.assert_allclose(logits, out.detach().numpy(), rtol=1e-5, atol=1e-6)
    grads = nnx.grad(lambda n: models.cross_entropy(n(jnp.asarray(x)), y))(net)
    grads = models.flatten_params(nnx.to_pure_dict(grads))
    for name, p in tnet.named_parameters():
        np.testing.assert_allclose(
            grads[name], p.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )
    # and back: PyTorch's state_dict into a Net
    state_dict = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    back = jnnx.from_params(models.unflatten_params(state_dict))
    np.testing.assert_array_equal(back(jnp.asarray(x)), logits)


@pytest.mark.parametrize("batch", [4, 64])  # 64: the gradient in chunks of 16
def test_nnx_train_step_takes_the_cores_step(batch):
    config = train.Config(dataset="x", batch_size=batch)
    state = train.init_state(config, 3)
    net = jnnx.from_params(state.params)
    optimizer = jnnx.make_optimizer(net, config)
    tx = train.make_optimizer(config)
    data = random_data(batch)
    x, y = jnp.asarray(data.images), jnp.asarray(data.labels)
    mask = jnp.ones(batch).at[-1].set(0)
    for _ in range(3):
        loss = jnnx.train_step(net, optimizer, x, y, mask)
        state, core_loss = train.train_step(
            state, x, y, mask, tx, train.kernels.grad_chunk(batch)
        )
        assert float(loss) == pytest.approx(float(core_loss), rel=1e-6)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7),
        jnnx.to_params(net),
        state.params,
    )


def test_eval_step_predicts_the_argmax_of_the_logits():
    net = jnnx.Net(3, rngs=nnx.Rngs(5))
    x = images(8)
    np.testing.assert_array_equal(jnnx.eval_step(net, x), jnp.argmax(net(x), -1))


def test_fit_trains_a_net_to_the_functional_runs_weights():
    config = train.Config(dataset="x", batch_size=8, epochs=2, lr=0.01)
    data = random_data(40)
    state, history = train.fit(config, data, log=lambda s: None)
    net = jnnx.Net(3, rngs=nnx.Rngs(0))
    start = jnnx.to_params(jnnx.init_net(config, 3))
    net_out, nnx_history = jnnx.fit(
        config, data, jnnx.from_params(start), log=lambda s: None
    )
    assert_trees_equal(jnnx.to_params(net_out), state.params)
    assert [h["losses"] for h in nnx_history] == [h["losses"] for h in history]
    trained, _ = jnnx.fit(config, data, net, log=lambda s: None)
    assert trained is net  # updated in place, like torch's Net
    with pytest.raises(ValueError, match=r"widths \(6, 16\).*config.widths"):
        jnnx.fit(dataclasses.replace(config, widths=(8, 8)), data, net)


def test_an_nnx_fit_resumes_bit_identically_from_a_checkpoint(tmp_path):
    config = train.Config(dataset="x", batch_size=4, epochs=2, checkpoint_every=3)
    data = random_data(24)
    whole, _ = jnnx.fit(config, data, log=lambda s: None)
    checkpointer = Checkpointer(tmp_path)
    jnnx.fit(dataclasses.replace(config, epochs=1), data, checkpointer=checkpointer,
             log=lambda s: None)  # fmt: skip
    resumed, history = jnnx.fit(
        config, data, checkpointer=checkpointer, resume=True, log=lambda s: None
    )
    checkpointer.close()
    assert_trees_equal(jnnx.to_params(resumed), jnnx.to_params(whole))
    assert len(history) == 2


def test_cli_api_nnx_trains_on_digits_to_the_default_runs_weights(tmp_path):
    flags = ["--dataset", "digits", "--epochs", "1", "--batch-size", "64",
             "--lr", "0.01", "--log-every", "1000", "--no-progress"]  # fmt: skip
    assert cli.main([*flags, "--out-dir", str(tmp_path / "f")]) == 0
    assert cli.main([*flags, "--api", "nnx", "--out-dir", str(tmp_path / "n")]) == 0
    default = load_file(str(tmp_path / "f" / "weights.safetensors"))
    nnx_run = load_file(str(tmp_path / "n" / "weights.safetensors"))
    assert default.keys() == nnx_run.keys()
    for name in default:
        np.testing.assert_array_equal(nnx_run[name], default[name], err_msg=name)
    assert (tmp_path / "n" / "loss.png").exists()


SHARDED = """
import jax, numpy as np
from jaxblitz import nnx as jnnx, parallel, train
from tests.test_train import random_data
config = train.Config(dataset="x", batch_size=8, epochs=1, lr=0.01)
data = random_data(40)
ref, _ = jnnx.fit(config, data, log=lambda s: None)
net, _ = jnnx.fit(config, data, log=lambda s: None,
                  runner=parallel.Sharded(parallel.make_mesh(2)))
a, b = jnnx.to_params(ref), jnnx.to_params(net)
print(len(jax.devices()), max(float(np.max(np.abs(np.asarray(x) - np.asarray(y))))
      for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))))
"""


def test_an_nnx_fit_runs_sharded_over_two_devices_to_the_one_device_weights():
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES="2")
    proc = subprocess.run([sys.executable, "-c", SHARDED], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    devices, diff = proc.stdout.split()
    assert devices == "2" and float(diff) < 1e-5
