"""compat's recurrent ATen ops (torch.rnn_tanh_cell, lstm_cell, gru_cell and the
whole-sequence torch.lstm, gru, rnn_tanh, rnn_relu) against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as c

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _arrays(*shapes):
    return [RNG.standard_normal(s).astype(np.float32) for s in shapes]


def _run(T, call, arrays):
    xs = [T.tensor(a.tolist(), requires_grad=True) for a in arrays]
    out = call(T, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
    return outs, [x.grad for x in xs]


def _same(call, arrays):
    theirs, their_grads = _run(torch, call, arrays)
    ours, our_grads = _run(c, call, arrays)
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours, strict=True):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)
    for a, b in zip(their_grads, our_grads, strict=True):
        np.testing.assert_allclose(b.tolist(), a.tolist(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "gates", "bias"),
    [
        ("rnn_tanh_cell", 1, True),
        ("rnn_relu_cell", 1, False),
        ("gru_cell", 3, True),
    ],
)
def test_cell_matches_torch(name, gates, bias):
    arrays = _arrays((2, 3), (2, 4), (4 * gates, 3), (4 * gates, 4))
    if bias:
        arrays += _arrays((4 * gates,), (4 * gates,))
    _same(lambda T, *xs: getattr(T, name)(*xs), arrays)


def test_lstm_cell_matches_torch():
    arrays = _arrays((2, 3), (2, 4), (2, 4), (16, 3), (16, 4), (16,), (16,))
    _same(lambda T, x, h, c_, *w: T.lstm_cell(x, [h, c_], *w), arrays)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x, h, w, u: T.rnn_tanh_cell(x[0], h[0], w, u),
        lambda T, x, h, w, u: T.rnn_tanh_cell(x, h[:1], w, u),
        lambda T, x, h, w, u: T.rnn_tanh_cell(x, h[:, :3], w, u),
        lambda T, x, h, w, u: T.rnn_tanh_cell(x[:, :2], h, w, u),
        lambda T, x, h, w, u: T.rnn_tanh_cell(x, None, w, u),
        lambda T, x, h, w, u: T.lstm_cell(x, [h], w, u),
    ],
)
def test_cell_errors_match_torch(call):
    arrays = _arrays((2, 3), (2, 4), (4, 3), (4, 4))
    with pytest.raises(Exception) as theirs:
        call(torch, *[torch.tensor(a.tolist()) for a in arrays])
    with pytest.raises(type(theirs.value)) as ours:
        call(c, *[c.tensor(a.tolist()) for a in arrays])
    if type(theirs.value) is not TypeError:
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("mode", "module", "layers", "bidirectional", "batch_first", "bias"),
    [
        ("lstm", "LSTM", 2, True, True, False),
        ("gru", "GRU", 1, False, False, True),
        ("rnn_tanh", "RNN", 2, True, False, True),
        ("rnn_relu", "RNN", 1, False, True, False),
    ],
)
def test_sequence_op_matches_torch(
    mode, module, layers, bidirectional, batch_first, bias
):
    kwargs = {"nonlinearity": "relu"} if mode == "rnn_relu" else {}
    m = getattr(torch.nn, module)(
        3,
        4,
        layers,
        bias=bias,
        batch_first=batch_first,
        bidirectional=bidirectional,
        **kwargs,
    )
    weights = [w.detach().numpy() for w in m._flat_weights]
    states = layers * (2 if bidirectional else 1)
    arrays = _arrays((5, 2, 3), (states, 5 if batch_first else 2, 4))
    if mode == "lstm":
        arrays += _arrays((states, 5 if batch_first else 2, 4))
    n = 3 if mode == "lstm" else 2
    flags = (bias, layers, 0.0, True, bidirectional, batch_first)

    def call(T, *xs):
        hx = tuple(xs[1:n]) if mode == "lstm" else xs[1]
        return getattr(T, mode)(xs[0], hx, list(xs[n:]), *flags)

    _same(call, arrays + weights)


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
def test_lstm_with_projections_matches_torch():
    m = torch.nn.LSTM(3, 4, 2, proj_size=2)
    weights = [w.detach().numpy() for w in m._flat_weights]
    arrays = _arrays((5, 2, 3), (2, 2, 2), (2, 2, 4)) + weights
    _same(
        lambda T, x, h, c_, *w: T.lstm(
            x, (h, c_), w, True, 2, 0.0, False, False, False
        ),
        arrays,
    )


def test_sequence_dropout_between_layers_keeps_the_shapes():
    m = c.nn.GRU(3, 4, 2)
    out, h = c.gru(
        c.randn(5, 2, 3),
        c.zeros(2, 2, 4),
        m._flat_weights,
        True,
        2,
        0.5,
        True,
        False,
        False,
    )
    assert tuple(out.shape) == (5, 2, 4) and tuple(h.shape) == (2, 2, 4)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x, h, w: T.gru(x, h, w[:2], True, 1, 0.0, False, False, False),
        lambda T, x, h, w: T.gru(x, h, w, True, 2, 0.0, False, False, False),
        lambda T, x, h, w: T.lstm(x, (h,), w, True, 1, 0.0, False, False, False),
    ],
)
def test_sequence_errors_match_torch(call):
    m = torch.nn.GRU(3, 4)
    weights = [w.detach().numpy() for w in m._flat_weights]
    arrays = _arrays((5, 2, 3), (1, 2, 4))
    for lib in (torch, c):
        args = [lib.tensor(a.tolist()) for a in arrays]
        with pytest.raises(RuntimeError) as raised:
            call(lib, *args, [lib.tensor(w.tolist()) for w in weights])
        if lib is torch:
            theirs = str(raised.value)
    assert str(raised.value) == theirs


def test_packed_and_unbatched_sequences_are_refused():
    x, h = c.zeros(5, 3), c.zeros(1, 4)
    weights = c.nn.GRU(3, 4)._flat_weights
    with pytest.raises(NotImplementedError, match="nn.GRU"):
        c.gru(x, h, weights, True, 1, 0.0, False, False, False)
    with pytest.raises(NotImplementedError, match="PackedSequence"):
        c.gru(x, c.tensor([3, 2]), h, weights, True, 1, 0.0, False, False)
