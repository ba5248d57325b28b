"""Blitz 3, "Neural Networks" (beyond it: the sequence tutorials): ``torch.nn.RNN``,
``LSTM``, ``GRU`` and ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Parameters are torch's, by name and shape (``weight_ih_l0``, ``bias_hh_l1_reverse``,
``weight_hr_l0`` ...), drawn as torch's ``reset_parameters`` draws them
(U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every one) from compat's
generator, so state dicts move both ways. A forward is one recorded op for the
whole stack (``LstmBackward0`` ...: one ``lax.scan`` per layer and direction, see
:mod:`._rnn_scan`), whose results -- output, h_n, c_n -- are read out of it by
``SplitWithSizesBackward0`` nodes. A :class:`~.utils.rnn.PackedSequence` in gives
one out, as in torch.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from jaxblitz.compat import _autocast
from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.backends import _precision
from jaxblitz.compat.nn import _rnn_scan
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.nn.utils.rnn import PackedSequence
from jaxblitz.compat.tensor import Tensor, _dtype, _host_random, creation
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import from_host

_NODE = {
    "RNN_TANH": "RnnTanhBackward0",
    "RNN_RELU": "RnnReluBackward0",
    "LSTM": "LstmBackward0",
    "GRU": "GruBackward0",
}


def _reset_uniform(module: Module) -> None:
    """``reset_parameters`` of the recurrent layers and cells: every parameter
    drawn again from U(-1/sqrt(hidden), 1/sqrt(hidden)), as torch's."""
    params = list(module.parameters())
    shapes = [tuple(p.shape) for p in params]
    fresh = _uniform_parameters(shapes, module.hidden_size, None, params[0].dtype)
    for p, new in zip(params, fresh, strict=True):
        p.data = new.data.to(p.device)


def _uniform_parameters(
    shapes: list[tuple[int, ...]], hidden_size: int, device: Any, dtype: Any
) -> list[Parameter]:
    """torch's ``reset_parameters``: every parameter U(-1/sqrt(hidden), +...), in
    registration order, one draw on the host from compat's generator."""
    dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
    if not dt.is_floating_point:
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients"
        )
    device = _dtype.factory_device(device)  # torch.empty's: the default device
    if device.type == "meta":  # torch's meta kernels draw nothing
        return [Parameter(creation.empty(s, dtype=dt, device=device)) for s in shapes]
    bound = 1.0 / math.sqrt(hidden_size)
    sizes = [math.prod(s) for s in shapes]
    key = creation.default_generator.next_key()
    flat = _host_random.uniform(key, (sum(sizes),), dt.np, -bound, bound)
    params, start = [], 0
    with x64(True):  # a float64 layer is float64
        for shape, n in zip(shapes, sizes, strict=True):
            values = flat[start : start + n].reshape(shape)
            params.append(Parameter(Tensor._wrap(from_host(values)).to(device)))
            start += n
    return params


def _split(name: str, flat: Tensor, shapes: list[tuple[int, ...]]) -> list[Tensor]:
    """The results packed in ``flat`` (see ``_rnn_scan.rnn_fn``), one node each."""
    out, start = [], 0
    for shape in shapes:
        out.append(apply(name, _rnn_scan.part_fn, flat, start=start, shape=shape))
        start += math.prod(shape)
    return out


def _dropout_keep(shape: tuple[int, ...], p: float, like: Tensor) -> Tensor:
    u = creation.rand(*shape, dtype=like.dtype, device=_dtype.tensor_device(like))
    scale = 0.0 if p == 1 else 1.0 / (1 - p)  # torch: p=1 multiplies by zero
    return apply("DropoutBackward0", _rnn_scan.dropout_keep_fn, u, p=p, scale=scale)


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: torch's ``nn.RNNBase``."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        # torch's checks, in torch's order and words (nn.modules.rnn.RNNBase)
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so "
                "non-zero dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                UserWarning,
                stacklevel=3,
            )
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(
                    f"{name} should be of type bool, got: {type(value).__name__}"
                )
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(
                    f"{name} should be of type int, got: {type(value).__name__}"
                )
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _rnn_scan.GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        gates = _rnn_scan.GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        names, shapes = [], []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                group = [("weight_ih", (gates, layer_input))]
                group.append(("weight_hh", (gates, real_hidden)))
                if bias:
                    group += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                if proj_size:
                    group.append(("weight_hr", (proj_size, hidden_size)))
                self._all_weights.append([n + suffix for n, _ in group])
                names += [n + suffix for n, _ in group]
                shapes += [s for _, s in group]
        self._flat_weights_names = names
        for name, param in zip(
            names, _uniform_parameters(shapes, hidden_size, device, dtype), strict=True
        ):
            setattr(self, name, param)

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """torch: packs the weights for cuDNN; nothing to do here."""

    def reset_parameters(self) -> None:
        _reset_uniform(self)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks, as torch's RNNBase -------------------------------------------------
    def _check_input(self, input: Tensor, dims: int, expected: int) -> None:
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                f"convert model: model.to({input.dtype})"
            )
        if dims != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {dims}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def _check_states(self, h: Any, c: Any, batch: int, unbatched: bool) -> None:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        lstm = self.mode == "LSTM"
        wants = (
            (h, (layers, batch, self.proj_size or self.hidden_size), 0),
            (c, (layers, batch, self.hidden_size), 1),
        )
        for state, want, which in wants:
            if state is None:
                continue
            seen = tuple(state.shape)
            seen = (seen[0], 1, *seen[1:]) if unbatched else seen
            if seen != want:
                what = f"hidden[{which}] size" if lstm else "hidden size"
                raise RuntimeError(f"Expected {what} {want}, got {list(seen)}")
        weight = self._flat_weights[1]
        for state in (h, c):
            if state is not None and state.dtype != weight.dtype:
                # torch: the h @ W_hh^T product refuses it
                raise RuntimeError(
                    "mat1 and mat2 must have the same dtype, but got "
                    f"{state.dtype.scalar_type} and {weight.dtype.scalar_type}"
                )

    # -- forward ----------------------------------------------------------------------
    def _prepare(self, input: Any, hx: Any) -> tuple:
        """torch's forward up to the ``_VF`` call, its checks in its order:
        (data, h0, c0, layout, batch_sizes, sorted_indices, unsorted_indices)."""
        lstm = self.mode == "LSTM"
        h, c = (None, None) if hx is None else (hx if lstm else (hx, None))
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = tuple(int(b) for b in batch_sizes.tolist())
            self._check_input(data, data.dim(), 2)
            self._check_states(h, c, batch_sizes[0], False)
            return data, h, c, "packed", batch_sizes, sorted_indices, unsorted_indices
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{'LSTM' if lstm else 'RNN'}: Expected input to be 2D or 3D, got "
                f"{input.dim()}D{'' if lstm else ' tensor'} instead"
            )
        batched = input.dim() == 3
        if hx is not None:
            want, kind = (3, "batched 3-D") if batched else (2, "unbatched 2-D")
            if lstm and (h.dim() != want or c.dim() != want):
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {want}-D but got "
                    f"({h.dim()}-D, {c.dim()}-D) tensors"
                )
            if not lstm and h.dim() != want:
                raise RuntimeError(
                    f"For {kind} input, hx should also be {want}-D but got "
                    f"{h.dim()}-D tensor"
                )
        self._check_input(input, 3, 3)
        batch = 1 if not batched else input.shape[0 if self.batch_first else 1]
        self._check_states(h, c, batch, not batched)
        layout = ("batch" if self.batch_first else "seq") if batched else "unbatched"
        return input, h, c, layout, None, None, None

    def forward(self, input: Any, hx: Any = None) -> Any:
        lstm = self.mode == "LSTM"
        data, h, c, layout, batch_sizes, sorted_i, unsorted_i = self._prepare(input, hx)
        directions = 2 if self.bidirectional else 1
        width = directions * (self.proj_size or self.hidden_size)  # output features
        if layout == "packed":
            steps, batch = len(batch_sizes), batch_sizes[0]
        elif layout == "unbatched":
            steps, batch = data.shape[0], 1
        else:
            steps, batch = data.shape[1], data.shape[0]
            if layout == "seq":
                steps, batch = batch, steps
        keep = None
        if self.training and self.dropout > 0 and self.num_layers > 1:
            shape = (self.num_layers - 1, steps, batch, width)
            keep = _dropout_keep(shape, self.dropout, data)
        weights = self._flat_weights
        if _autocast.on:  # torch's fused recurrent kernels are on its lists
            data, h, c, *weights = _autocast.cast(
                self.mode.lower(), data, h, c, *weights
            )
        flat = apply(
            _NODE[self.mode],
            _rnn_scan.rnn_fn,
            data,
            h,
            c,
            keep,
            sorted_i,
            unsorted_i,
            *weights,
            mode=self.mode,
            num_layers=self.num_layers,
            directions=directions,
            has_bias=self.bias,
            proj=bool(self.proj_size),
            layout=layout,
            batch_sizes=batch_sizes,
            hidden=self.hidden_size,
            precision=_precision.of("matmul", data, weights[0]),
        )
        layers = self.num_layers * directions
        state_h = (layers, batch, self.proj_size or self.hidden_size)
        state_c = (layers, batch, self.hidden_size)
        if layout == "unbatched":
            state_h, state_c = (layers, state_h[2]), (layers, state_c[2])
        shapes = [(*data.shape[:-1], width), state_h] + ([state_c] if lstm else [])
        parts = _split("SplitWithSizesBackward0", flat, shapes)
        output = parts[0]
        if layout == "packed":
            output = PackedSequence(output, input.batch_sizes, sorted_i, unsorted_i)
        return output, (tuple(parts[1:]) if lstm else parts[1])


class RNN(RNNBase):
    """``nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', ...)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(
                "proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        if len(args) > 3:
            self_nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self_nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self_nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self_nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self_nonlinearity}'. Select from 'tanh' or "
                "'relu'."
            )
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nonlinearity


class LSTM(RNNBase):
    """``nn.LSTM(input_size, hidden_size, num_layers=1, ..., proj_size=0)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """``nn.GRU(input_size, hidden_size, num_layers=1, ...)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(
                "proj_size argument is only supported for LSTM, not RNN or GRU"
            )
        super().__init__("GRU", *args, **kwargs)
