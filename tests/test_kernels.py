"""Tests for jaxblitz.kernels: each fast formulation equals the plain one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxblitz import kernels, models


@pytest.mark.parametrize(
    "in_ch, out_ch, batch, size", [(1, 6, 3, 32), (3, 6, 2, 32), (6, 16, 4, 14)]
)
def test_row_patch_convolution_equals_lax_conv(in_ch, out_ch, batch, size):
    params = models.init_conv2d(jax.random.key(0), in_ch, out_ch, 5)
    x = jax.random.normal(jax.random.key(1), (batch, in_ch, size, size))
    rows = kernels.conv2d_rows_cm(params, x.transpose(1, 0, 2, 3))
    np.testing.assert_allclose(
        rows.transpose(1, 0, 2, 3), models.conv2d(params, x), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("in_ch, out_ch, batch, size", [(3, 6, 2, 32), (6, 16, 4, 14)])
def test_channel_major_im2col_convolution_equals_lax_conv(in_ch, out_ch, batch, size):
    params = models.init_conv2d(jax.random.key(0), in_ch, out_ch, 5)
    x = jax.random.normal(jax.random.key(1), (batch, in_ch, size, size))
    y = kernels.conv2d_cm(params, x.transpose(1, 0, 2, 3))
    np.testing.assert_allclose(
        y.transpose(1, 0, 2, 3), models.conv2d(params, x), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("batch, chunk", [(8, 4), (7, 4), (5, 8), (6, 1)])
def test_chunked_convolution_and_its_gradients_equal_lax_conv(batch, chunk):
    params = models.init_conv2d(jax.random.key(0), 3, 6, 5)
    x = jax.random.normal(jax.random.key(1), (batch, 3, 12, 10))
    g = jax.random.normal(jax.random.key(2), (batch, 6, 8, 6))

    def chunked(x, w, b):
        return kernels.conv2d_chunked(x, w, b, chunk)

    def whole(x, w, b):
        return models.conv2d({"weight": w, "bias": b}, x)

    args = (x, params["weight"], params["bias"])
    y, vjp = jax.vjp(chunked, *args)
    y_ref, vjp_ref = jax.vjp(whole, *args)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    for grad, ref in zip(vjp(g), vjp_ref(g), strict=True):  # padded rows add nothing
        np.testing.assert_allclose(grad, ref, rtol=1e-4, atol=1e-4)


def test_patch_chunk_builds_small_batches_whole_and_chunks_to_the_byte_budget():
    image = 75 * 28 * 28 * 4  # LeNet conv1's patches of one CIFAR image
    whole = kernels.PATCHES_WHOLE_BYTES // image
    assert kernels.patch_chunk(whole, image) is None
    chunk = kernels.patch_chunk(whole + 1, image)
    assert chunk & (chunk - 1) == 0  # a power of two
    assert chunk * image <= kernels.PATCHES_CHUNK_BYTES < 2 * chunk * image
    assert kernels.patch_chunk(1024, kernels.PATCHES_WHOLE_BYTES) == 1


def _windows_one_by_one(x, k, axis, at):
    """Every (i, j) window offset sliced on its own: the definition."""
    h, w = x.shape[axis : axis + 2]

    def window(i, j):
        rows = jax.lax.slice_in_dim(x, i, i + h - k + 1, axis=axis)
        return jax.lax.slice_in_dim(rows, j, j + w - k + 1, axis=axis + 1)

    return jnp.stack(
        [jnp.stack([window(i, j) for j in range(k)], at) for i in range(k)], at
    )


@pytest.mark.parametrize(
    "shape, k, axis, at",
    [
        ((3, 4, 32, 32), 5, 2, 1),  # lenet's channel-major conv1
        ((6, 2, 14, 14), 5, 2, 1),  # conv2
        ((2, 32, 32, 3), 5, 1, 3),  # NHWC
        ((2, 9, 11, 3), 3, 1, 3),  # not square, another kernel
        ((5, 7, 2), 2, 0, 0),
    ],
)
def test_window_stack_and_its_gradient_equal_slicing_each_window(shape, k, axis, at):
    x = jax.random.normal(jax.random.key(0), shape)
    expected = _windows_one_by_one(x, k, axis, at)
    got = kernels.window_stack(x, k, axis, at)
    np.testing.assert_array_equal(got, expected)
    cotangent = jax.random.normal(jax.random.key(1), expected.shape)

    def grad(fn):
        return jax.grad(lambda x: jnp.vdot(fn(x, k, axis, at), cotangent))(x)

    np.testing.assert_allclose(
        grad(kernels.window_stack), grad(_windows_one_by_one), rtol=1e-5, atol=1e-5
    )


# relu_first: F.max_pool2d(F.relu(x)), as the compat layer composes them.
@pytest.mark.parametrize("relu_first", [False, True])
def test_max_pool2x2_sends_the_gradient_to_the_first_max_of_each_window(relu_first):
    # One channel-last (H, W, C) image, 5x5 so the floor drops a row and column.
    x = jnp.array(
        [
            [1.0, 1.0, -2.0, -3.0, 9.0],
            [1.0, 0.5, -3.0, -2.0, 9.0],
            [0.0, 4.0, 2.0, 2.0, 9.0],
            [4.0, 4.0, 2.0, 2.0, 9.0],
            [9.0, 9.0, 9.0, 9.0, 9.0],
        ]
    )[:, :, None]

    def pool(x):
        return kernels.max_pool2x2(jax.nn.relu(x) if relu_first else x, 0)

    y, vjp = jax.vjp(pool, x)
    expected = jnp.array([[1.0, -2.0], [4.0, 2.0]])
    if relu_first:
        expected = jnp.maximum(expected, 0.0)
    np.testing.assert_array_equal(y[:, :, 0], expected)
    (dx,) = vjp(jnp.array([[10.0, 20.0], [30.0, 40.0]])[:, :, None])
    want = np.zeros((5, 5))
    want[0, 0], want[2, 1], want[2, 2] = 10.0, 30.0, 40.0  # the first of the ties
    if not relu_first:  # a window whose max is negative passes it on ...
        want[0, 2] = 20.0  # ... unless it went through ReLU, whose gradient there is 0
    np.testing.assert_array_equal(dx[:, :, 0], want)


@pytest.mark.parametrize("relu_first", [False, True])
def test_max_pool2x2_matches_pytorch_on_ties(relu_first):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 11, 12)).astype(np.float32)
    x[..., :6, :6] = 0.5  # flat regions: every window a four-way tie
    x[..., 6:, 6:] = 0.0  # ties at ReLU's kink
    g = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)

    def pool(x):
        return kernels.max_pool2x2(jax.nn.relu(x) if relu_first else x, 2)

    y, vjp = jax.vjp(pool, jnp.asarray(x))
    (dx,) = vjp(jnp.asarray(g))
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(torch.relu(tx) if relu_first else tx, 2, 2)
    ty.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(y, ty.detach().numpy())
    np.testing.assert_array_equal(dx, tx.grad.numpy())


def test_pool_relu_equals_max_pool2d_after_relu():
    x = jax.random.normal(jax.random.key(0), (6, 2, 27, 28))  # odd: the floor
    np.testing.assert_array_equal(
        kernels.pool_relu(x, 2),
        models.max_pool2d(models.relu(x.transpose(1, 0, 2, 3))).transpose(1, 0, 2, 3),
    )


def test_eval_chunk_takes_the_largest_listed_divisor_of_the_batch():
    assert kernels.eval_chunk(1000) == 50 and kernels.eval_chunk(7) is None
    assert kernels.eval_chunk(12) == 4 and kernels.eval_chunk(40) == 40


def _masked_sum(params, images, labels, mask):
    """A loss summed over the kept examples, as train.py's step takes it."""
    logits = models.lenet(params, images)
    return models.cross_entropy(logits, labels, mask) * jnp.sum(mask)


def test_chunked_value_and_grad_equals_the_whole_batch_gradient():
    params = models.init_lenet(jax.random.key(0), 3)
    images = jax.random.normal(jax.random.key(1), (12, 3, 32, 32))
    labels = jnp.arange(12) % 10
    mask = jnp.ones(12).at[-3:].set(0.0)  # a padded last batch
    batch = (images, labels, mask)
    loss, grads = jax.value_and_grad(_masked_sum)(params, *batch)
    chunked = jax.jit(kernels.chunked_value_and_grad(_masked_sum, 4))
    chunk_loss, chunk_grads = chunked(params, *batch)
    np.testing.assert_allclose(chunk_loss, loss, rtol=1e-5)
    for a, b in zip(jax.tree.leaves(chunk_grads), jax.tree.leaves(grads), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_chunked_value_and_grad_runs_small_batches_whole_and_checks_the_chunk():
    params = models.init_lenet(jax.random.key(0), 1)
    batch = (jnp.zeros((4, 1, 32, 32)), jnp.zeros(4, jnp.int32), jnp.ones(4))
    whole = jax.value_and_grad(_masked_sum)(params, *batch)
    for chunk in (None, 4, 8):
        got = kernels.chunked_value_and_grad(_masked_sum, chunk)(params, *batch)
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(whole), strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="grad_chunk 3 must divide the batch size 4"):
        kernels.chunked_value_and_grad(_masked_sum, 3)(params, *batch)


def test_grad_chunk_is_sixteen_from_batch_32_else_eight_from_64():
    assert kernels.grad_chunk(4) is None and kernels.grad_chunk(16) is None
    assert kernels.grad_chunk(32) == 16 and kernels.grad_chunk(512) == 16
    assert kernels.grad_chunk(100) is None  # not a multiple of 8: whole batch
    assert kernels.grad_chunk(72) == 8 and kernels.grad_chunk(56) is None
    assert kernels.grad_chunk(40) is None  # 16 does not divide it, under 64
    # a shard of a batch split over devices is chunked by 8 from 32 rows
    assert kernels.grad_chunk(32, shard=True) == 8
    assert kernels.grad_chunk(16, shard=True) is None
    assert kernels.grad_chunk(40, shard=True) == 8


def test_gpu_and_tpu_run_xla_convolutions_on_whole_batches(monkeypatch):
    # The im2col kernels and their cache-sized chunks are the CPU's pick; on a
    # GPU a chunk of 8 would only serialise the batch (cuDNN takes it whole).
    assert kernels.im2col_backend() and models.default_impl() == "im2col"
    for backend in ("gpu", "tpu"):
        monkeypatch.setattr(jax, "default_backend", lambda b=backend: b)
        assert not kernels.im2col_backend() and models.default_impl() == "xla"
        assert kernels.grad_chunk(512) is None and kernels.grad_chunk(32) is None
        assert kernels.grad_chunk(64, shard=True) is None
        assert kernels.eval_chunk(1000) is None
