"""Blitz 3, "Neural Networks" (beyond it: the sequence tutorials): the pure JAX
functions behind ``torch.nn.RNN``, ``LSTM`` and ``GRU`` and their cells.

A whole stack -- every layer and direction, the dropout between layers, a packed
batch's unpacking and repacking -- is one function, so the module records it as
one op and its backward is JAX's VJP of it. Each layer and direction is one
``lax.scan`` over time; the input's projection (``x @ W_ih^T + b_ih``) is one
matmul for all steps before the scan, as cuDNN does. The gates follow torch's
layout: LSTM ``(i, f, g, o)``, GRU ``(r, z, n)`` with ``b_hn`` inside ``r * (...)``.

A packed batch is run padded (time-major, sorted by length): at a step past a
sequence's end its state is carried unchanged and its output is zero, which for
the reverse direction means each sequence starts from ``h0`` at its own last step.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _mm(a, w, precision):  # a @ w^T
    return jnp.matmul(a, w.T, precision=precision)


def _step(mode, xp, h, c, w_hh, b_hh, w_hr, precision):
    """One time step from the input's projection ``xp`` (B, G): (h', c')."""
    hh = _mm(h, w_hh, precision)
    if b_hh is not None:
        hh = hh + b_hh
    if mode == "LSTM":
        i, f, g, o = jnp.split(xp + hh, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h if w_hr is None else _mm(h, w_hr, precision)), c
    if mode == "GRU":
        xr, xz, xn = jnp.split(xp, 3, axis=-1)
        hr, hz, hn = jnp.split(hh, 3, axis=-1)
        r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        return (1 - z) * n + z * h, c
    act = jnp.tanh if mode == "RNN_TANH" else jax.nn.relu
    return act(xp + hh), c


def _unpack(weights, has_bias, proj):
    """One layer-direction's parameters, in torch's order, as five (some None)."""
    it = iter(weights)
    w_ih, w_hh = next(it), next(it)
    b_ih, b_hh = (next(it), next(it)) if has_bias else (None, None)
    return w_ih, w_hh, b_ih, b_hh, (next(it) if proj else None)


def _direction(mode, x, valid, h0, c0, weights, precision):
    """One layer in one direction: a scan over x (T, B, I) from its first step.
    Returns (ys, h, c)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xp = _mm(x, w_ih, precision)  # (T, B, G): every step's input projection at once
    if b_ih is not None:
        xp = xp + b_ih

    def body(carry, step):
        h, c = carry
        xt, ok = step
        h2, c2 = _step(mode, xt, h, c, w_hh, b_hh, w_hr, precision)
        if ok is None:
            return (h2, c2), h2
        # past a sequence's end: state carried, output zero (torch's packed RNN)
        h2 = jnp.where(ok, h2, h)
        c2 = None if c is None else jnp.where(ok, c2, c)
        return (h2, c2), jnp.where(ok, h2, 0)

    (h, c), ys = lax.scan(body, (h0, c0), (xp, valid))
    return ys, h, c


def _layer(mode, x, valid, h0, c0, params, precision):
    """One layer, both directions at once where bidirectional: the reverse one
    runs on the time-reversed input, batched with the forward one (vmap), so a
    layer is one scan. Returns (output (T, B, D*H), h (D, B, H), c)."""
    if len(params) == 1:
        c0 = None if c0 is None else c0[0]
        y, h, c = _direction(mode, x, valid, h0[0], c0, params[0], precision)
        return y, h[None], (None if c is None else c[None])
    xs = jnp.stack([x, x[::-1]])
    valids = None if valid is None else np.stack([valid, valid[::-1]])
    stacked = jax.tree.map(lambda *a: jnp.stack(a), *params)

    def one(x, valid, h0, c0, weights):
        return _direction(mode, x, valid, h0, c0, weights, precision)

    ys, h, c = jax.vmap(one)(xs, valids, h0, c0, stacked)
    return jnp.concatenate([ys[0], ys[1][::-1]], axis=-1), h, c


def packed_positions(batch_sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(time, batch) of each row of a packed batch's data, in packed order."""
    t = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    b = np.concatenate([np.arange(n) for n in batch_sizes]) if batch_sizes else t
    return t, b


def rnn_fn(
    input,
    hx,
    cx,
    keep,
    sorted_indices,
    unsorted_indices,
    *weights,
    mode,
    num_layers,
    directions,
    has_bias,
    proj,
    layout,
    batch_sizes,
    hidden,
    precision,
):
    """torch's ``_VF.rnn_tanh/rnn_relu/lstm/gru`` as one function.

    ``layout``: "seq" (T, B, I), "batch" (B, T, I), "unbatched" (T, I) or
    "packed" (data (N, I) with static ``batch_sizes``). ``keep``: the dropout
    masks between layers, already scaled, (L-1, T, B, D*H_out), or None.
    Returns output, h_n (and c_n) flattened into one vector.
    """
    valid = None
    if layout == "packed":
        t, b = packed_positions(batch_sizes)
        steps, batch = len(batch_sizes), batch_sizes[0]
        x = jnp.zeros((steps, batch, input.shape[-1]), input.dtype).at[t, b].set(input)
        lengths = np.bincount(b, minlength=batch)
        valid = (np.arange(steps)[:, None] < lengths[None, :])[..., None]
    elif layout == "batch":
        x = jnp.swapaxes(input, 0, 1)
    elif layout == "unbatched":
        x = input[:, None]
    else:
        x = input
    batch = x.shape[1]
    size_h = weights[-1].shape[0] if proj else hidden
    if hx is None:
        hx = jnp.zeros((num_layers * directions, batch, size_h), x.dtype)
    elif layout == "unbatched":
        hx = hx[:, None]
    if mode == "LSTM":
        if cx is None:
            cx = jnp.zeros((num_layers * directions, batch, hidden), x.dtype)
        elif layout == "unbatched":
            cx = cx[:, None]
    if sorted_indices is not None:  # torch's permute_hidden
        hx = jnp.take(hx, sorted_indices, axis=1)
        cx = None if cx is None else jnp.take(cx, sorted_indices, axis=1)
    per = len(weights) // (num_layers * directions)
    hs, cs = [], []
    for layer in range(num_layers):
        if layer and keep is not None:  # torch: dropout on each layer's output but
            x = x * keep[layer - 1]  # the last, in training
        first = layer * directions
        params = [
            _unpack(weights[k * per : (k + 1) * per], has_bias, proj)
            for k in range(first, first + directions)
        ]
        h0 = hx[first : first + directions]
        c0 = None if cx is None else cx[first : first + directions]
        x, h, c = _layer(mode, x, valid, h0, c0, params, precision)
        hs.append(h)
        cs.append(c)
    h_n = jnp.concatenate(hs)
    c_n = jnp.concatenate(cs) if mode == "LSTM" else None
    if unsorted_indices is not None:
        h_n = jnp.take(h_n, unsorted_indices, axis=1)
        c_n = None if c_n is None else jnp.take(c_n, unsorted_indices, axis=1)
    if layout == "packed":
        x = x[t, b]
    elif layout == "batch":
        x = jnp.swapaxes(x, 0, 1)
    elif layout == "unbatched":
        x, h_n = x[:, 0], h_n[:, 0]
        c_n = None if c_n is None else c_n[:, 0]
    parts = [x, h_n] if c_n is None else [x, h_n, c_n]
    return jnp.concatenate([p.ravel() for p in parts])


def cell_fn(input, hx, cx, w_ih, w_hh, b_ih, b_hh, *, mode, unbatched, precision):
    """torch's ``_VF.rnn_tanh_cell/rnn_relu_cell/lstm_cell/gru_cell``: one step.

    Returns h' (B, H), or for an LSTM cell h' and c' flattened into one vector."""
    x = input[None] if unbatched else input
    zeros = jnp.zeros((x.shape[0], w_hh.shape[1]), x.dtype)
    h = zeros if hx is None else (hx[None] if unbatched else hx)
    c = None
    if mode == "LSTM":
        c = zeros if cx is None else (cx[None] if unbatched else cx)
    xp = _mm(x, w_ih, precision)
    if b_ih is not None:
        xp = xp + b_ih
    h, c = _step(mode, xp, h, c, w_hh, b_hh, None, precision)
    if c is None:
        return h[0] if unbatched else h
    return jnp.concatenate([h.ravel(), c.ravel()])


def part_fn(flat, *, start, shape):
    """One result's elements out of a flat vector of several."""
    return lax.slice_in_dim(flat, start, start + math.prod(shape)).reshape(shape)


def dropout_keep_fn(u, *, p, scale):
    """Dropout's kept elements (``u``: uniform draws), scaled by 1 / (1 - p)."""
    return (u >= p).astype(u.dtype) * scale
