"""Blitz 3 and 4, fast formulations: LeNet's layers as they run fastest on a CPU.

:mod:`jaxblitz.models` holds the Blitz's layers as written; this module holds the
same computations rearranged for speed, each tested equal to the plain one.
``models.lenet(impl="im2col")`` (the CPU default) and the compat layer's
``conv2d`` and ``max_pool2d`` use them; measurements are in BENCHMARKS.md.

- :func:`window_stack`: the k x k windows of an image as shifted slices, with a
  backward of its own -- XLA fuses its two levels of slices where one 25-way stack
  and JAX's own transpose became many small fusions.
- :func:`conv2d_cm`: a convolution as one matmul ``weight @ patches`` (im2col) on
  channel-major ``(C, B, H, W)`` -- faster than ``lax.conv_general_dilated`` for
  these tiny convolutions on CPU, and channel-major faster than NHWC.
- :func:`conv2d_rows_cm`: the same from k-times smaller row patches -- faster
  for inference, where no weight gradient is needed.
- :func:`conv2d_chunked`: an NCHW convolution ``chunk`` images at a time, forward
  and backward, for batches whose patches would not fit in cache
  (:func:`patch_chunk`).
- :func:`max_pool2x2`: 2x2 pooling whose gradient goes to the first maximum of
  each window, as PyTorch's does, by one select.
- :func:`pool_relu`: pooling then ReLU as the max of the window corners -- ReLU on
  a quarter of the values, NaN propagated as torch does.
- :func:`lenet_features`: LeNet's conv -> relu -> pool twice on these, optionally
  ``chunk`` images at a time (:func:`eval_chunk`) so each chunk's patches stay in
  cache.
- :func:`chunked_value_and_grad`: a gradient summed over chunks of the batch
  (:func:`grad_chunk`), for the same reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

Params = dict[str, Any]

# ---------------------------------------------------------------------------
# Windows: the patches of a convolution, the corners of a 2x2 pool.
# ---------------------------------------------------------------------------


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def window_stack(x: jax.Array, k: int, axis: int, at: int) -> jax.Array:
    """The k x k windows of the spatial axes ``axis, axis + 1`` (valid, stride 1),
    their offsets ``(ki, kj)`` as two new axes at ``at`` of the output, e.g.
    ``(C, B, H, W)``, axis 2, at 1 -> ``(C, k, k, B, Ho, Wo)``.

    Built in two levels (k column shifts, then k row shifts of those): XLA fuses
    each level into one loop, where one k*k-way stack became k*k fusions and a
    concatenate. The backward is the matching two-level sum of shifted slices of
    a padded cotangent, where JAX's own transpose (k*k pads and adds) became many
    fusions, some recomputing others' sums.
    """
    h, w = x.shape[axis : axis + 2]
    cols = jnp.stack(
        [lax.slice_in_dim(x, j, j + w - k + 1, axis=axis + 1) for j in range(k)], at
    )  # kj at `at`
    h_axis = axis + (at <= axis)
    return jnp.stack(
        [lax.slice_in_dim(cols, i, i + h - k + 1, axis=h_axis) for i in range(k)], at
    )  # ki at `at`, kj after it


def _window_stack_fwd(x, k, axis, at):
    return window_stack(x, k, axis, at), x.shape


def _shift_sum(g: jax.Array, k: int, at: int, axis: int, size: int) -> jax.Array:
    """Transpose of ``k`` shifted slices stacked at ``at``: ``out[..., p, ...] =
    sum_i g[i][..., p - i, ...]`` along ``axis`` (of ``g`` without ``at``)."""
    pad = [(0, 0)] * g.ndim
    pad[axis + (at <= axis)] = (k - 1, k - 1)
    g = jnp.pad(g, pad)
    shifts = [
        lax.slice_in_dim(
            lax.index_in_dim(g, i, at, False), k - 1 - i, k - 1 - i + size, axis=axis
        )
        for i in range(k)
    ]
    return sum(shifts[1:], shifts[0])


def _window_stack_bwd(k, axis, at, shape, g):
    h, w = shape[axis : axis + 2]
    cols = _shift_sum(g, k, at, axis + (at <= axis), h)  # the row shifts undone
    return (_shift_sum(cols, k, at, axis + 1, w),)  # then the column shifts


window_stack.defvjp(_window_stack_fwd, _window_stack_bwd)


def _windows(x: jax.Array, axis: int) -> tuple[jax.Array, tuple[int, ...]]:
    """Crop the two spatial axes ``axis, axis + 1`` to even sizes and split each
    into (size // 2, 2): the 2x2 windows on axes ``axis + 1`` and ``axis + 3``."""
    h, w = x.shape[axis : axis + 2]
    crop = (slice(None),) * axis + (slice(0, h // 2 * 2), slice(0, w // 2 * 2))
    x = x[crop]
    return x.reshape(*x.shape[:axis], h // 2, 2, w // 2, 2, *x.shape[axis + 2 :]), (
        h,
        w,
    )


def _corner(x6: jax.Array, axis: int, a: int, b: int) -> jax.Array:
    """Element ``(a, b)`` of every 2x2 window of ``x6`` (from :func:`_windows`)."""
    index = (slice(None),) * axis + (slice(None), a, slice(None), b)
    return x6[index]


# ---------------------------------------------------------------------------
# Pooling.
# ---------------------------------------------------------------------------


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def max_pool2x2(x: jax.Array, axis: int = 2) -> jax.Array:
    """2x2, stride-2 max pooling over axes ``axis, axis + 1`` (floor, like torch).

    Its gradient goes, as PyTorch's does, to the *first* maximum of each window in
    row-major order (JAX's own ``max`` splits it among ties, which differ from
    torch on flat regions such as a padded image's border), and the backward is
    one elementwise select instead of a reduction and division per window.
    """
    return _max_pool2x2_fwd(x, axis)[0]


def _max_pool2x2_fwd(x, axis):
    x6, size = _windows(x, axis)
    corners = [_corner(x6, axis, a, b) for a in (0, 1) for b in (0, 1)]
    y = jnp.maximum(jnp.maximum(corners[0], corners[1]), jnp.maximum(*corners[2:]))
    # int8 constants: under x64 (the compat layer) Python ints would make these
    # selects, and the backward's comparison, 64-bit.
    i8 = functools.partial(jnp.asarray, dtype=jnp.int8)
    first = jnp.where(
        corners[0] == y,
        i8(0),
        jnp.where(corners[1] == y, i8(1), jnp.where(corners[2] == y, i8(2), i8(3))),
    )
    return y, (first, size)


def _max_pool2x2_bwd(axis, residuals, g):
    first, (h, w) = residuals
    expand = (slice(None),) * axis + (slice(None), None, slice(None), None)
    window = jnp.arange(4, dtype=jnp.int8).reshape(
        2, 1, 2, *(1,) * (first.ndim - axis - 2)
    )  # (2, 1, 2, 1...) -> each corner's position 2*a + b
    dx6 = jnp.where(window == first[expand], g[expand], jnp.zeros((), g.dtype))
    dx = dx6.reshape(*dx6.shape[:axis], h // 2 * 2, w // 2 * 2, *dx6.shape[axis + 4 :])
    if h % 2 or w % 2:  # the rows/columns the floor dropped get no gradient
        pad = [(0, 0)] * dx.ndim
        pad[axis], pad[axis + 1] = (0, h % 2), (0, w % 2)
        dx = jnp.pad(dx, pad)
    return (dx,)


max_pool2x2.defvjp(_max_pool2x2_fwd, _max_pool2x2_bwd)


def pool_relu(x: jax.Array, axis: int) -> jax.Array:
    """relu(max_pool2d(x)) over axes ``axis, axis + 1``: equal to max_pool2d(relu(x)),
    since both are monotone, with the ReLU on a quarter of the values.

    The max of the four window corners by ``jnp.maximum``, which propagates NaN as
    torch does (XLA's CPU reduce-max returns -inf for an all-NaN window, and ReLU
    would then hide it). JAX splits the gradient among exact ties where torch (and
    :func:`max_pool2x2`) gives it to the first: a faster training step, and exact
    ties are rare in conv outputs.
    """
    x6 = _windows(x, axis)[0]
    top = jnp.maximum(_corner(x6, axis, 0, 0), _corner(x6, axis, 0, 1))
    bottom = jnp.maximum(_corner(x6, axis, 1, 0), _corner(x6, axis, 1, 1))
    return jax.nn.relu(jnp.maximum(top, bottom))  # models.relu


# ---------------------------------------------------------------------------
# Convolutions on channel-major (C, B, H, W), and LeNet's stack of them.
# ---------------------------------------------------------------------------


def conv2d_cm(params: Params, x: jax.Array) -> jax.Array:
    """Valid, stride-1 convolution of channel-major ``x`` ``(C, B, H, W)``.

    ``weight (O, C*k*k) @ patches (C*k*k, B*Ho*Wo)``: the OIHW weight is used as
    it is, and the long axis (images x positions) is the matmul's wide one.
    """
    weight = params["weight"]
    out_ch, in_ch, k, _ = weight.shape
    _, b, h, w = x.shape
    ho, wo = h - k + 1, w - k + 1
    patches = window_stack(x, k, 2, 1)  # (C, k, k, B, Ho, Wo)
    y = weight.reshape(out_ch, in_ch * k * k) @ patches.reshape(in_ch * k * k, -1)
    return (y + params["bias"][:, None]).reshape(out_ch, b, ho, wo)


def conv2d_rows_cm(params: Params, x: jax.Array) -> jax.Array:
    """:func:`conv2d_cm` with k-times smaller patches, for inference: the k column
    shifts of the flattened rows, one matmul for every (output channel, kernel
    row) pair, then the k row shifts of its result summed.

    ``cols[c, j, n] = x.flat[c, n + j]`` (contiguous slices of the flattened
    ``(C, B*H*W)``, which XLA copies fast; positions that wrap into the next row
    feed only output columns that are cut off), ``z = weight (O*k, C*k) @ cols``
    with rows ``(o, i)``, and ``y[o, b, r] = sum_i z[o, i, b, r + i]``. Training
    keeps :func:`conv2d_cm`: this one's weight gradient (a product contracted
    over every position) is no faster.
    """
    weight = params["weight"]
    out_ch, in_ch, k, _ = weight.shape
    _, b, h, w = x.shape
    n = b * h * w
    flat = jnp.pad(x.reshape(in_ch, n), ((0, 0), (0, k - 1)))
    cols = jnp.stack([flat[:, j : j + n] for j in range(k)], 1)  # (C, k, n)
    rows = weight.transpose(0, 2, 1, 3).reshape(out_ch * k, in_ch * k)  # (o,i)x(c,j)
    z = (rows @ cols.reshape(in_ch * k, n)).reshape(out_ch, k, b, h, w)
    y = sum(z[:, i, :, i : i + h - k + 1, : w - k + 1] for i in range(k))
    return y + params["bias"][:, None, None, None]


# A batch's patches up to this size are built whole; above it, a chunk's patches
# stay within this size. Whole, a large batch's patches cost a fresh buffer of
# tens of MB per call (page faults) and leave the cache (BENCHMARKS.md, "Compat
# eager at larger batches").
PATCHES_WHOLE_BYTES = 2 << 20
PATCHES_CHUNK_BYTES = 2 << 20


def patch_chunk(batch_size: int, image_bytes: int) -> int | None:
    """Images per chunk for :func:`conv2d_chunked` when each image's patches take
    ``image_bytes``: None (build them whole) up to :data:`PATCHES_WHOLE_BYTES`,
    else the largest power of two whose patches fit :data:`PATCHES_CHUNK_BYTES`."""
    if batch_size * image_bytes <= PATCHES_WHOLE_BYTES:
        return None
    chunk = 1
    while 2 * chunk * image_bytes <= PATCHES_CHUNK_BYTES and 2 * chunk < batch_size:
        chunk *= 2
    return chunk


def _conv2d_nchw(x: jax.Array, weight: jax.Array, bias: jax.Array) -> jax.Array:
    y = conv2d_cm({"weight": weight, "bias": bias}, x.transpose(1, 0, 2, 3))
    return y.transpose(1, 0, 2, 3)


def _batch_chunks(a: jax.Array, chunk: int) -> jax.Array:
    """``(B, ...)`` -> ``(n, chunk, ...)``, the batch zero-padded to ``n * chunk``."""
    if pad := -a.shape[0] % chunk:
        a = jnp.pad(a, [(0, pad)] + [(0, 0)] * (a.ndim - 1))
    return a.reshape(-1, chunk, *a.shape[1:])


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def conv2d_chunked(
    x: jax.Array, weight: jax.Array, bias: jax.Array, chunk: int
) -> jax.Array:
    """Valid, stride-1 convolution of NCHW ``x`` by OIHW ``weight``, ``chunk``
    images at a time (:func:`conv2d_cm` on each), forward and backward.

    For batches whose patches would not fit in cache (:func:`patch_chunk`): each
    chunk's patches are built, used and dropped in cache, in the forward and
    again in the backward (a ``lax.scan`` summing the weight's gradient), where
    the whole batch's patches cost a fresh buffer of tens of MB per call. A
    batch that ``chunk`` does not divide is zero-padded; the padded images add
    nothing to the gradients.
    """
    ys = lax.map(lambda c: _conv2d_nchw(c, weight, bias), _batch_chunks(x, chunk))
    return ys.reshape(-1, *ys.shape[2:])[: x.shape[0]]


def _conv2d_chunked_fwd(x, weight, bias, chunk):
    return conv2d_chunked(x, weight, bias, chunk), (x, weight, bias)


def _conv2d_chunked_bwd(chunk, residuals, g):
    x, weight, bias = residuals

    def body(total, xg):
        dx, dw, db = jax.vjp(_conv2d_nchw, xg[0], weight, bias)[1](xg[1])
        return (total[0] + dw, total[1] + db), dx

    zero = (jnp.zeros_like(weight), jnp.zeros_like(bias))
    chunks = (_batch_chunks(x, chunk), _batch_chunks(g, chunk))
    (dw, db), dx = lax.scan(body, zero, chunks)
    return dx.reshape(-1, *dx.shape[2:])[: x.shape[0]], dw, db


conv2d_chunked.defvjp(_conv2d_chunked_fwd, _conv2d_chunked_bwd)


def conv_stack_cm(params: Params, x: jax.Array, rows: bool = False) -> jax.Array:
    """conv1 -> relu -> pool -> conv2 -> relu -> pool on ``(C, B, 32, 32)``;
    ``rows``: conv1 by :func:`conv2d_rows_cm` (inference)."""
    conv1 = conv2d_rows_cm if rows else conv2d_cm
    x = pool_relu(conv1(params["conv1"], x), 2)  # (6, B, 14, 14)
    return pool_relu(conv2d_cm(params["conv2"], x), 2)  # (16, B, 5, 5)


def lenet_features(params: Params, x: jax.Array, chunk: int | None = None) -> jax.Array:
    """LeNet's conv -> relu -> pool, twice: ``(B, C, 32, 32)`` -> ``(B, 16, 5, 5)``,
    computed channel-major by :func:`conv_stack_cm`.

    ``chunk`` (must divide B) runs it ``chunk`` images at a time with ``lax.map``,
    so each chunk's patches stay in cache, with conv1 from row patches
    (:func:`conv2d_rows_cm`); see :func:`eval_chunk`.
    """
    b = x.shape[0]
    if chunk is None or chunk >= b:
        x = conv_stack_cm(params, x.transpose(1, 0, 2, 3))  # (16, B, 5, 5)
        return x.transpose(1, 0, 2, 3)  # (B, 16, 5, 5)
    if b % chunk:
        raise ValueError(f"chunk {chunk} must divide the batch size {b}.")
    chunks = x.reshape(b // chunk, chunk, *x.shape[1:])
    chunks = chunks.transpose(0, 2, 1, 3, 4)  # (n, C, c, 32, 32)
    x = lax.map(
        lambda c: conv_stack_cm(params, c, rows=True), chunks
    )  # (n, 16, c, 5, 5)
    x = x.transpose(0, 2, 1, 3, 4)  # (n, c, 16, 5, 5)
    return x.reshape(b, *x.shape[2:])  # (B, 16, 5, 5)


def im2col_backend() -> bool:
    """Whether JAX's default backend runs LeNet with these im2col kernels: the
    CPU, where they measure faster (BENCHMARKS.md). GPUs and TPUs run XLA's own
    convolution (cuDNN on a GPU) on the whole batch, so the cache-sized chunks
    that :func:`eval_chunk`, :func:`grad_chunk` and :func:`patch_chunk` pick are
    CPU-only: elsewhere they would only serialise the batch."""
    return jax.default_backend() == "cpu"


def eval_chunk(batch_size: int) -> int | None:
    """The ``chunk`` for fast inference at ``batch_size`` (None: no chunking, as
    on a GPU or TPU, see :func:`im2col_backend`)."""
    if not im2col_backend():
        return None
    return next((c for c in (50, 40, 25, 20, 10, 8, 5, 4) if batch_size % c == 0), None)


# ---------------------------------------------------------------------------
# Gradients in chunks of the batch.
# ---------------------------------------------------------------------------


def chunked_value_and_grad(
    fn: Callable[..., jax.Array], chunk: int | None
) -> Callable[..., tuple[jax.Array, Any]]:
    """``jax.value_and_grad(fn)``, computed ``chunk`` examples at a time.

    ``fn(params, *batch)`` must be a *sum* over the examples on the leading axis
    of every array in ``batch`` (a masked loss sum, not a mean), so the chunks'
    values and gradients add up to the whole batch's, and a scalar of
    ``batch[0]``'s dtype (a loss over float images). The chunks run in a
    ``lax.scan``, each chunk's patches small enough to stay in cache. ``chunk``
    must divide the batch; None (or a chunk as large as the batch) runs it whole::

        step_grad = chunked_value_and_grad(masked_loss_sum, grad_chunk(batch_size))
        loss_sum, grad_sums = step_grad(params, images, labels, mask)
    """
    value_and_grad = jax.value_and_grad(fn)

    def chunked(params: Params, *batch: jax.Array) -> tuple[jax.Array, Any]:
        b = batch[0].shape[0]
        if chunk is None or chunk >= b:
            return value_and_grad(params, *batch)
        if b % chunk:
            raise ValueError(f"grad_chunk {chunk} must divide the batch size {b}.")
        chunks = tuple(a.reshape(b // chunk, chunk, *a.shape[1:]) for a in batch)

        def body(total, xs):
            return jax.tree.map(jnp.add, total, value_and_grad(params, *xs)), None

        zero = (jnp.zeros((), batch[0].dtype), jax.tree.map(jnp.zeros_like, params))
        return lax.scan(body, zero, chunks)[0]

    return chunked


def grad_chunk(batch_size: int, shard: bool = False) -> int | None:
    """The gradient ``chunk`` for a step over ``batch_size`` rows on one device.

    The fastest measured (BENCHMARKS.md): on one device, chunks of 16 from batch
    32 up (8 where 16 does not divide a batch from 64); where the rows are one
    shard of a batch split over devices (``shard``: :mod:`jaxblitz.parallel`'s
    per-device step; on a CPU, one device per core, so one core's cache holds a
    chunk's patches), chunks of 8 from 32 rows. Small batches run whole (None),
    as does every batch on a GPU or TPU (:func:`im2col_backend`).
    """
    if not im2col_backend():
        return None
    if not shard and batch_size >= 32 and batch_size % 16 == 0:
        return 16
    start = 32 if shard else 64
    return 8 if batch_size >= start and batch_size % 8 == 0 else None
