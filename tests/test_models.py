"""Tests for jaxblitz.models: LeNet, layers, losses, PyTorch parity."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from benchmarks.bench_compat import blitz_net
from jaxblitz import models

KEY = jax.random.key(0)


def images(channels: int, batch: int = 4, seed: int = 1) -> jax.Array:
    return jax.random.normal(jax.random.key(seed), (batch, channels, 32, 32))


@pytest.mark.parametrize(("channels", "expected"), [(1, 61_706), (3, 62_006)])
def test_lenet_has_the_blitz_parameter_count(channels, expected):
    params = models.init_lenet(KEY, in_channels=channels)
    assert models.count_params(params) == expected


def test_lenet_params_use_pytorch_state_dict_names_and_shapes():
    params = models.init_lenet(KEY, in_channels=3)
    assert models.named_shapes(params) == {
        "conv1.weight": (6, 3, 5, 5),
        "conv1.bias": (6,),
        "conv2.weight": (16, 6, 5, 5),
        "conv2.bias": (16,),
        "fc1.weight": (120, 400),
        "fc1.bias": (120,),
        "fc2.weight": (84, 120),
        "fc2.bias": (84,),
        "fc3.weight": (10, 84),
        "fc3.bias": (10,),
    }


def test_init_draws_within_pytorch_default_bounds_and_fills_them():
    params = models.init_lenet(KEY, in_channels=3)
    for layer, fan_in in [("conv1", 75), ("conv2", 150), ("fc1", 400), ("fc3", 84)]:
        bound = 1 / np.sqrt(fan_in)
        for leaf in params[layer].values():
            assert float(jnp.max(jnp.abs(leaf))) <= bound
        # U(-b, b) has std b/sqrt(3); the weights are many enough to see it.
        std = float(jnp.std(params[layer]["weight"]))
        assert std == pytest.approx(bound / np.sqrt(3), rel=0.2)


def test_init_is_deterministic_in_the_key():
    a = models.init_lenet(jax.random.key(3))
    b = models.init_lenet(jax.random.key(3))
    c = models.init_lenet(jax.random.key(4))
    assert all(jax.tree.leaves(jax.tree.map(jnp.array_equal, a, b)))
    assert not jnp.array_equal(a["fc1"]["weight"], c["fc1"]["weight"])


def test_wider_lenet_changes_conv_and_fc1_shapes():
    params = models.init_lenet(KEY, in_channels=3, widths=(32, 64))
    shapes = models.named_shapes(params)
    assert shapes["conv2.weight"] == (64, 32, 5, 5)
    assert shapes["fc1.weight"] == (120, 64 * 25)
    assert models.lenet(params, images(3)).shape == (4, 10)


@pytest.mark.parametrize("channels", [1, 3])
def test_lenet_maps_a_batch_to_ten_logits(channels):
    params = models.init_lenet(KEY, in_channels=channels)
    assert models.lenet(params, images(channels)).shape == (4, 10)


@pytest.mark.parametrize("channels", [1, 3])
def test_im2col_lenet_equals_the_lax_conv_lenet(channels):
    params = models.init_lenet(KEY, in_channels=channels)
    x = images(channels, batch=5)
    fast = jax.jit(lambda p, x: models.lenet(p, x, impl="im2col"))(params, x)
    reference = models.lenet(params, x, impl="xla")
    np.testing.assert_allclose(fast, reference, rtol=1e-5, atol=1e-6)


def test_im2col_gradients_equal_the_lax_conv_gradients():
    params = models.init_lenet(KEY, in_channels=3)
    x, labels = images(3), jnp.array([0, 3, 9, 1])

    def loss(p, impl):
        return models.cross_entropy(models.lenet(p, x, impl=impl), labels)

    fast = jax.grad(loss)(params, "im2col")
    reference = jax.grad(loss)(params, "xla")
    for a, b in zip(jax.tree.leaves(fast), jax.tree.leaves(reference), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_chunked_lenet_gives_the_same_logits_and_gradients():
    params = models.init_lenet(jax.random.key(0), 3)
    x = jax.random.normal(jax.random.key(1), (12, 3, 32, 32))
    np.testing.assert_allclose(
        models.lenet(params, x, "im2col", chunk=4),
        models.lenet(params, x, "im2col"),
        atol=1e-6,
    )

    def loss(p, chunk):
        return jnp.sum(models.lenet(p, x, "im2col", chunk=chunk) ** 2)

    chunked, whole = jax.grad(loss)(params, 3), jax.grad(loss)(params, None)
    for a, b in zip(jax.tree.leaves(chunked), jax.tree.leaves(whole), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="chunk 5 must divide the batch size 12"):
        models.lenet(params, x, "im2col", chunk=5)


def test_lenet_runs_the_im2col_kernels_on_cpu_and_lax_conv_elsewhere(monkeypatch):
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    assert models.default_impl() == "im2col"
    for backend in ("gpu", "tpu"):
        monkeypatch.setattr(jax, "default_backend", lambda backend=backend: backend)
        assert models.default_impl() == "xla"


def test_conv2d_supports_stride_and_padding_like_torch_shapes():
    params = models.init_conv2d(KEY, 3, 8, 3)
    y = models.conv2d(params, images(3), stride=2, padding=1)
    assert y.shape == (4, 8, 16, 16)


def test_max_pool2d_takes_the_max_of_each_window():
    x = jnp.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(
        models.max_pool2d(x), jnp.array([[[[5.0, 7.0], [13.0, 15.0]]]])
    )


@pytest.mark.parametrize(
    "kw", [{"impl": "im2col"}, {"impl": "xla"}, {"impl": "im2col", "chunk": 2}]
)
def test_lenet_propagates_nan_like_pytorch(kw):
    # XLA's CPU reduce-max returns -inf for an all-NaN window; a pool built on it
    # followed by ReLU would turn NaN images into finite logits and hide them.
    params = models.init_lenet(KEY, 3)
    x = images(3).at[0, 1, 10, 10].set(jnp.nan).at[2].set(jnp.nan)
    logits = np.asarray(jax.jit(lambda p, x: models.lenet(p, x, **kw))(params, x))
    np.testing.assert_array_equal(np.isnan(logits).all(axis=1), [1, 0, 1, 0])
    assert np.isfinite(logits[[1, 3]]).all()


def test_relu_has_torchs_zero_gradient_at_zero():
    grad = jax.grad(lambda x: jnp.sum(models.relu(x)))(jnp.array([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(grad, [0.0, 0.0, 1.0])


def test_lenet_rejects_an_unbatched_image_with_the_unsqueeze_hint():
    params = models.init_lenet(KEY)
    with pytest.raises(ValueError, match=r"got shape \(1, 32, 32\).*unsqueeze\(0\)"):
        models.lenet(params, jnp.zeros((1, 32, 32)))


def test_lenet_rejects_the_wrong_channel_count():
    params = models.init_lenet(KEY, in_channels=1)
    with pytest.raises(ValueError, match="expects 1 input channel.*got 3"):
        models.lenet(params, images(3))


def test_lenet_rejects_images_that_are_not_32x32():
    params = models.init_lenet(KEY)
    with pytest.raises(ValueError, match="got 28x28"):
        models.lenet(params, jnp.zeros((2, 1, 28, 28)))


def test_lenet_rejects_integer_images():
    params = models.init_lenet(KEY)
    with pytest.raises(TypeError, match="floating-point.*uint8"):
        models.lenet(params, jnp.zeros((2, 1, 32, 32), jnp.uint8))


def test_lenet_rejects_an_unknown_impl():
    with pytest.raises(ValueError, match="impl must be"):
        models.lenet(models.init_lenet(KEY), images(1), impl="cudnn")


def test_init_lenet_rejects_bad_widths():
    with pytest.raises(ValueError, match="widths must be two positive ints"):
        models.init_lenet(KEY, widths=(6,))


def test_cross_entropy_matches_a_hand_computed_value():
    logits = jnp.array([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]])
    labels = jnp.array([0, 2])
    first = -(2.0 - np.log(np.exp(2.0) + 1 + np.exp(-1.0)))
    expected = (first + np.log(3.0)) / 2
    assert float(models.cross_entropy(logits, labels)) == pytest.approx(expected)


def test_cross_entropy_mask_averages_over_kept_examples_only():
    logits = jax.random.normal(KEY, (6, 10))
    labels = jnp.array([1, 2, 3, 4, 5, 6])
    mask = jnp.array([1, 1, 1, 1, 0, 0])
    masked = models.cross_entropy(logits, labels, mask)
    assert float(masked) == pytest.approx(
        float(models.cross_entropy(logits[:4], labels[:4])), rel=1e-6
    )


def test_cross_entropy_rejects_float_labels_and_mismatched_shapes():
    logits = jnp.zeros((4, 10))
    with pytest.raises(TypeError, match="integer class labels"):
        models.cross_entropy(logits, jnp.zeros(4))
    with pytest.raises(ValueError, match=r"labels shaped \(4,\)"):
        models.cross_entropy(logits, jnp.zeros(3, jnp.int32))


def test_mse_loss_is_the_mean_squared_difference_and_checks_shapes():
    assert float(models.mse_loss(jnp.array([1.0, 3.0]), jnp.array([0.0, 0.0]))) == 5.0
    with pytest.raises(ValueError, match="equal shapes"):
        models.mse_loss(jnp.zeros((1, 10)), jnp.zeros(10))


# ---------------------------------------------------------------------------
# Parity with PyTorch (the Blitz's own Net), skipped when torch is absent.
# ---------------------------------------------------------------------------


def torch_net(in_channels: int):
    """The Blitz's ``Net``, verbatim apart from the channel count."""
    torch = pytest.importorskip("torch")
    return torch, blitz_net(torch, torch.nn, torch.nn.functional, in_channels)


def load_into_torch(torch, net, params):
    state = {
        name: torch.from_numpy(np.array(leaf))
        for name, leaf in zip(
            models.named_shapes(params), jax.tree.leaves(params), strict=True
        )
    }
    net.load_state_dict(state)


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("impl", ["im2col", "xla"])
def test_lenet_logits_loss_and_gradients_match_pytorch(channels, impl):
    torch, net = torch_net(channels)
    params = models.init_lenet(jax.random.key(7), in_channels=channels)
    load_into_torch(torch, net, params)
    x = np.array(images(channels, batch=8, seed=2))
    labels = np.array([0, 1, 2, 3, 4, 5, 6, 9])

    def loss_fn(p):
        logits = models.lenet(p, jnp.asarray(x), impl=impl)
        return models.cross_entropy(logits, jnp.asarray(labels)), logits

    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)

    out = net(torch.from_numpy(x))
    torch_loss = torch.nn.CrossEntropyLoss()(out, torch.from_numpy(labels))
    torch_loss.backward()

    np.testing.assert_allclose(logits, out.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert float(loss) == pytest.approx(torch_loss.item(), rel=1e-5)
    torch_grads = dict(net.named_parameters())
    flat = jax.tree_util.tree_flatten_with_path(grads)[0]
    assert len(flat) == len(torch_grads)
    for path, g in flat:
        name = ".".join(k.key for k in path)
        np.testing.assert_allclose(
            g, torch_grads[name].grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )


def test_pytorch_weights_load_into_lenet_and_give_the_same_logits():
    torch, net = torch_net(3)
    params = {
        layer: {
            "weight": jnp.asarray(getattr(net, layer).weight.detach().numpy()),
            "bias": jnp.asarray(getattr(net, layer).bias.detach().numpy()),
        }
        for layer in ("conv1", "conv2", "fc1", "fc2", "fc3")
    }
    x = np.array(images(3, seed=5))
    np.testing.assert_allclose(
        models.lenet(params, jnp.asarray(x)),
        net(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


def test_mse_loss_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).normal(size=(1, 10)).astype(np.float32)
    b = np.random.default_rng(1).normal(size=(1, 10)).astype(np.float32)
    expected = torch.nn.MSELoss()(torch.from_numpy(a), torch.from_numpy(b)).item()
    assert float(models.mse_loss(jnp.asarray(a), jnp.asarray(b))) == pytest.approx(
        expected, rel=1e-6
    )
