"""Blitz 3, "Neural Networks" (beyond it: the sequence tutorials): ``torch.nn``'s
single-step recurrent cells, ``RNNCell``, ``LSTMCell`` and ``GRUCell``.

Parameters as torch's (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``),
every one drawn U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). A step is one
recorded op (the same step function as :mod:`.rnn`'s scans); an LSTM cell's
``(h', c')`` are read out of it by two ``SplitWithSizesBackward0`` nodes.
"""

from __future__ import annotations

from typing import Any

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import _rnn_scan
from jaxblitz.compat.nn._linear import check_dtypes
from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.nn.rnn import _reset_uniform, _split, _uniform_parameters
from jaxblitz.compat.tensor import Tensor

_NODE = {
    "RNN_TANH": "RnnTanhCellBackward0",
    "RNN_RELU": "RnnReluCellBackward0",
    "LSTM": "LstmCellBackward0",
    "GRU": "GruCellBackward0",
}


class RNNCellBase(Module):
    """What the three cells share: torch's ``nn.RNNCellBase``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = num_chunks * hidden_size
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if bias else [])
        shapes = [(gates, input_size), (gates, hidden_size), (gates,), (gates,)]
        params = _uniform_parameters(shapes[: len(names)], hidden_size, device, dtype)
        for name, param in zip(names, params, strict=True):
            setattr(self, name, param)
        if not bias:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def reset_parameters(self) -> None:
        _reset_uniform(self)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _step(self, mode: str, input: Tensor, states: tuple, what: str) -> Tensor:
        """torch's checks (dims, then ``check_rnn_cell_forward_*``), one step."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        for i, state in enumerate(states):
            if state is not None and state.dim() not in (1, 2):
                which = f"hx[{i}]" if what == "hx" else "hidden"
                raise ValueError(
                    f"{name}: Expected {which} to be 1D or 2D, got {state.dim()}D "
                    "instead"
                )
        unbatched = input.dim() == 1
        size = input.shape[-1]
        batch = 1 if unbatched else input.shape[0]
        if size != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {size} expected "
                f"{self.input_size}"
            )
        for i, state in enumerate(states):
            if state is None:
                continue
            shape = (1, *state.shape) if unbatched else tuple(state.shape)
            if shape[0] != batch:
                raise RuntimeError(
                    f"Input batch size {batch} doesn't match hidden{i} batch size "
                    f"{shape[0]}"
                )
            if shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {shape[1]}, "
                    f"expected {self.hidden_size}"
                )
        # torch: linear(input, w_ih, b_ih) + linear(hx, w_hh, b_hh), no promotion
        check_dtypes(input, self.weight_ih, self.bias_ih)
        if states[0] is not None:
            check_dtypes(states[0], self.weight_hh, self.bias_hh)
        return apply(
            _NODE[mode],
            _rnn_scan.cell_fn,
            input,
            *states,
            *([None] if len(states) == 1 else []),
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
            mode=mode,
            unbatched=unbatched,
            precision=_precision.of("matmul", input, self.weight_ih),
        )


class RNNCell(RNNCellBase):
    """``nn.RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, (hx,), "hidden")


class LSTMCell(RNNCellBase):
    """``nn.LSTMCell(input_size, hidden_size, bias=True)``: returns (h', c')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        states = (None, None) if hx is None else tuple(hx)
        both = self._step("LSTM", input, states, "hx")  # h' and c', flat
        shape = (self.hidden_size,) if input.dim() == 1 else (input.shape[0], -1)
        shape = (*shape[:-1], self.hidden_size)
        h, c = _split("SplitWithSizesBackward0", both, [shape, shape])
        return h, c


class GRUCell(RNNCellBase):
    """``nn.GRUCell(input_size, hidden_size, bias=True)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRU", input, (hx,), "hidden")
