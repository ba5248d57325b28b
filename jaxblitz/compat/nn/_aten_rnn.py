"""Blitz 3, "Neural Networks" (beyond it: the sequence tutorials): the recurrent
ATen ops under their ``torch.*`` names -- the cells ``torch.rnn_tanh_cell``,
``rnn_relu_cell``, ``lstm_cell``, ``gru_cell`` (batched ``(B, I)`` input, ``hx``
given) and the whole-sequence ``torch.lstm``, ``gru``, ``rnn_tanh``,
``rnn_relu`` on a padded ``(T, B, I)`` or ``(B, T, I)`` input with the flat
weight list ``nn.LSTM._flat_weights`` holds. They run the very step and scan
functions ``nn.RNNCell``/``nn.LSTM`` run; a packed sequence (the ``data,
batch_sizes`` overload) is refused: pass a PackedSequence to ``nn.LSTM``.

This module loads after the Tensor class (it needs ``compat.nn``).
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import _rnn_scan
from jaxblitz.compat.nn.rnn import _NODE as _SEQUENCE_NODE
from jaxblitz.compat.nn.rnn import _dropout_keep, _split
from jaxblitz.compat.nn.rnn_cell import _NODE as _CELL_NODE
from jaxblitz.compat.ops._declare import declare
from jaxblitz.compat.ops._funnel import _require_tensors
from jaxblitz.compat.tensor import Tensor

# -- cells ---------------------------------------------------------------------------


def _hx_tensor(name: str, hx: Any) -> None:
    if not isinstance(hx, Tensor):
        raise TypeError(
            f"{name}(): argument 'hx' (position 2) must be Tensor, not "
            f"{type(hx).__name__}"
        )


def _cell(
    name: str,
    mode: str,
    input: Tensor,
    states: tuple,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> Tensor:
    """ATen's ``check_rnn_cell_forward_input/hidden``, then one step."""
    _require_tensors(name, input)
    if input.size(1) != w_ih.size(1):  # a 1-D input: torch's IndexError here
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected "
            f"{w_ih.size(1)}"
        )
    for i, hx in enumerate(states):
        if input.size(0) != hx.size(0):
            raise RuntimeError(
                f"Input batch size {input.size(0)} doesn't match hidden{i} batch "
                f"size {hx.size(0)}"
            )
        if hx.size(1) != w_hh.size(1):
            raise RuntimeError(
                f"hidden{i} has inconsistent hidden_size: got {hx.size(1)}, "
                f"expected {w_hh.size(1)}"
            )
    if input.dim() != 2 or any(hx.dim() != 2 for hx in states):
        raise NotImplementedError(
            f"torch.{name} of inputs of {input.dim()} dims is not supported by "
            "jaxblitz.compat: it takes (batch, input_size) and (batch, hidden_size)"
        )
    return apply(
        _CELL_NODE[mode],
        _rnn_scan.cell_fn,
        input,
        *states,
        *([None] if len(states) == 1 else []),
        w_ih,
        w_hh,
        b_ih,
        b_hh,
        mode=mode,
        unbatched=False,
        precision=_precision.of("matmul", input, w_ih),
    )


@declare
def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``torch.rnn_tanh_cell``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    if _autocast.on:
        return _autocast.run(
            "rnn_tanh_cell", rnn_tanh_cell, input, hx, w_ih, w_hh, b_ih, b_hh
        )
    _hx_tensor("rnn_tanh_cell", hx)
    return _cell("rnn_tanh_cell", "RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)


@declare
def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """``torch.rnn_relu_cell``: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    if _autocast.on:
        return _autocast.run(
            "rnn_relu_cell", rnn_relu_cell, input, hx, w_ih, w_hh, b_ih, b_hh
        )
    _hx_tensor("rnn_relu_cell", hx)
    return _cell("rnn_relu_cell", "RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)


@declare
def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    if _autocast.on:
        return _autocast.run("gru_cell", gru_cell, input, hx, w_ih, w_hh, b_ih, b_hh)
    _hx_tensor("gru_cell", hx)
    return _cell("gru_cell", "GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)


@declare
def lstm_cell(
    input: Tensor,
    hx: Any,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell(input, (h, c), ...)``: ``(h', c')``."""
    if _autocast.on:
        return _autocast.run("lstm_cell", lstm_cell, input, hx, w_ih, w_hh, b_ih, b_hh)
    states = tuple(hx)
    if len(states) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    both = _cell("lstm_cell", "LSTM", input, states, w_ih, w_hh, b_ih, b_hh)
    shape = (input.shape[0], w_hh.shape[1])
    h, c = _split("SplitWithSizesBackward0", both, [shape, shape])
    return h, c


# -- whole sequences -----------------------------------------------------------------


def _refuse_packed(name: str, mode: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.{name} of a packed sequence (data, batch_sizes) is not supported by "
        f"jaxblitz.compat: pass a PackedSequence to nn.{_MODULE[mode]}"
    )


def _sequence(
    name: str,
    mode: str,
    input: Tensor,
    states: tuple,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple:
    """One ``nn.LSTM``/``GRU``/``RNN`` forward from ATen's arguments."""
    _require_tensors(name, input)
    weights = list(params)
    if input.dim() != 3:
        raise NotImplementedError(
            f"torch.{name} of a {input.dim()}-D input is not supported by "
            f"jaxblitz.compat: it takes (T, B, I) or, batch_first, (B, T, I) "
            f"(nn.{_MODULE[mode]} also takes an unbatched input)"
        )
    directions = 2 if bidirectional else 1
    layers = num_layers * directions
    proj = mode == "LSTM" and states[0].size(2) != states[1].size(2)
    per = (4 if has_biases else 2) + (1 if proj else 0)
    if any(h.size(0) < layers for h in states):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) != layers * per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    hidden = weights[1].shape[1] if not proj else weights[-1].shape[1]
    out_size = weights[-1].shape[0] if proj else hidden
    width = directions * out_size
    steps, batch = input.shape[:2]
    if batch_first:
        steps, batch = batch, steps
    keep = None
    if train and dropout > 0 and num_layers > 1:
        keep = _dropout_keep((num_layers - 1, steps, batch, width), dropout, input)
    flat = apply(
        _SEQUENCE_NODE[mode],
        _rnn_scan.rnn_fn,
        input,
        states[0],
        states[1] if mode == "LSTM" else None,
        keep,
        None,
        None,
        *weights,
        mode=mode,
        num_layers=num_layers,
        directions=directions,
        has_bias=bool(has_biases),
        proj=proj,
        layout="batch" if batch_first else "seq",
        batch_sizes=None,
        hidden=hidden,
        precision=_precision.of("matmul", input, weights[0]),
    )
    shapes = [(*input.shape[:-1], width), (layers, batch, out_size)]
    if mode == "LSTM":
        shapes.append((layers, batch, hidden))
    return tuple(_split("SplitWithSizesBackward0", flat, shapes))


_MODULE = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


@declare
def lstm(
    input: Tensor,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple:
    """``torch.lstm(input, (h0, c0), params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first)``: ``(output, h_n, c_n)``."""
    if isinstance(hx, Tensor):  # (data, batch_sizes, hx, params, ...)
        raise _refuse_packed("lstm", "LSTM")
    states = tuple(hx)
    if len(states) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return _sequence(
        "lstm",
        "LSTM",
        input,
        states,
        params,
        has_biases,
        num_layers,
        dropout,
        train,
        bidirectional,
        batch_first,
    )


def _plain_sequence(name: str, mode: str) -> Any:
    def sequence(
        input: Tensor,
        hx: Tensor,
        params: Any,
        has_biases: bool,
        num_layers: int,
        dropout: float,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple:
        if isinstance(params, Tensor):  # (data, batch_sizes, hx, params, ...)
            raise _refuse_packed(name, mode)
        _hx_tensor(name, hx)
        return _sequence(
            name,
            mode,
            input,
            (hx,),
            params,
            has_biases,
            num_layers,
            dropout,
            train,
            bidirectional,
            batch_first,
        )

    sequence.__name__ = sequence.__qualname__ = name
    sequence.__doc__ = (
        f"``torch.{name}(input, hx, params, has_biases, num_layers, dropout, train, "
        "bidirectional, batch_first)``: ``(output, h_n)``."
    )
    return sequence


gru = declare.alias("gru", _plain_sequence("gru", "GRU"))
rnn_tanh = declare.alias("rnn_tanh", _plain_sequence("rnn_tanh", "RNN_TANH"))
rnn_relu = declare.alias("rnn_relu", _plain_sequence("rnn_relu", "RNN_RELU"))
