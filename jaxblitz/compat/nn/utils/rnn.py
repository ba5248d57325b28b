"""Blitz 3, "Neural Networks" (beyond it: the sequence tutorials):
``torch.nn.utils.rnn`` -- padding and packing batches of sequences of different
lengths for the recurrent layers.

    padded = pad_sequence(sequences)                      # (T, B, *)
    packed = pack_padded_sequence(padded, lengths, enforce_sorted=False)
    output, h_n = lstm(packed)                            # a PackedSequence
    output, lengths = pad_packed_sequence(output)

Lengths are read on the host, as torch requires them there (on the CPU): the
rows a packed batch takes from a padded one are then fixed, and each function is
one recorded op gathering or scattering them, so gradients flow through.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxblitz.compat.autograd.graph import apply
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedSequence(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequence):
    """``torch.nn.utils.rnn.PackedSequence``: a packed batch's ``data`` (the
    sequences' steps interleaved, longest first), ``batch_sizes`` (a CPU int64
    tensor: how many sequences are still running at each step) and the
    permutation that sorted the batch by length (``sorted_indices``) and its
    inverse. Made by :func:`pack_padded_sequence` or :func:`pack_sequence`."""

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # torch: PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        order, inverse = (
            None if t is None else t.to(data.device)
            for t in (self.sorted_indices, self.unsorted_indices)
        )
        return type(self)(data, self.batch_sizes, order, inverse)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtype.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtype.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtype.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (a 1-D int64 tensor)."""
    if permutation is None:
        return None
    return apply("ScatterBackward0", _invert_fn, permutation)


def _int64(values: Any) -> Tensor:
    return creation.tensor(np.asarray(values, dtype=np.int64))


def _host_ints(values: Any) -> np.ndarray:
    if isinstance(values, TensorBase):
        values = values.tolist()
    return np.asarray(values, dtype=np.int64).reshape(-1)


# -- pure JAX functions --------------------------------------------------------------


def _invert_fn(p):
    return jnp.zeros_like(p).at[p].set(jnp.arange(p.shape[0], dtype=p.dtype))


def _pad_fn(*seqs, batch_first, value, left, length):
    rows = []
    for s in seqs:
        fill = jnp.full((length - s.shape[0], *s.shape[1:]), value, seqs[0].dtype)
        s = s.astype(seqs[0].dtype)
        rows.append(jnp.concatenate([fill, s] if left else [s, fill]))
    return jnp.stack(rows, axis=0 if batch_first else 1)


def _pack_fn(x, order, *, time, batch):
    if order is not None:
        x = jnp.take(x, order, axis=1)
    return x[np.asarray(time), np.asarray(batch)]


def _unpack_fn(data, order, *, time, batch, shape, value):
    out = jnp.full(shape, value, data.dtype).at[np.asarray(time), np.asarray(batch)]
    out = out.set(data)
    return out if order is None else jnp.take(out, order, axis=1)


def _positions(batch_sizes: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    t = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    b = np.concatenate([np.arange(n) for n in batch_sizes])
    return tuple(t.tolist()), tuple(b.tolist())


# -- torch.nn.utils.rnn --------------------------------------------------------------


def pad_sequence(
    sequences: Any,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Sequences of shape (L_i, *) padded to the longest: (T, B, *) or (B, T, *)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of "
            f"type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        for dim, (want, got) in enumerate(zip(trailing, s.shape[1:], strict=False)):
            if want != got:
                raise RuntimeError(
                    f"The size of tensor a ({want}) must match the size of tensor b "
                    f"({got}) at non-singleton dimension {dim + 1}"
                )
    length = max(s.shape[0] for s in sequences)
    return apply(
        "CopySlices",
        _pad_fn,
        *sequences,
        batch_first=bool(batch_first),
        value=padding_value,
        left=padding_side == "left",
        length=length,
    )


def pack_padded_sequence(
    input: Tensor,
    lengths: Any,
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """A padded batch (T, B, *) (or (B, T, *)) and its lengths, packed."""
    lengths = _host_ints(lengths)
    sorted_indices = order = None
    if not enforce_sorted:
        perm = np.argsort(-lengths, kind="stable")  # torch.sort, descending
        lengths = lengths[perm]
        sorted_indices = order = _int64(perm).to(input.device)
    if input.dim() < 2:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        )
    batch = input.shape[0 if batch_first else 1]
    if len(lengths) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(lengths)} (batch_size={batch})"
        )
    if enforce_sorted and np.any(np.diff(lengths) > 0):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when "
            "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
            "pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability."
        )
    if lengths.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element "
            "in 'lengths' that is <= 0"
        )
    steps = input.shape[1 if batch_first else 0]
    if lengths.max() > steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length ({lengths.max()}) is longer than the "
            f"padded input's {steps} steps"
        )
    batch_sizes = (np.arange(lengths[0])[:, None] < lengths[None, :]).sum(1)
    time, rows = _positions(batch_sizes)
    if batch_first:
        input = input.transpose(0, 1)
    data = apply(
        "PackPaddedSequenceBackward0", _pack_fn, input, order, time=time, batch=rows
    )
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of :func:`pack_padded_sequence`: (padded, lengths), in the
    batch's original order."""
    batch_sizes = _host_ints(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {steps}"
            )
        steps = total_length
    data = sequence.data
    time, rows = _positions(batch_sizes)
    shape = (steps, int(batch_sizes[0]), *data.shape[1:])
    padded = apply(
        "PadPackedSequenceBackward0",
        _unpack_fn,
        data,
        sequence.unsorted_indices,
        time=time,
        batch=rows,
        shape=shape,
        value=padding_value,
    )
    lengths = _int64((np.arange(batch_sizes[0])[None, :] < batch_sizes[:, None]).sum(0))
    if sequence.unsorted_indices is not None:
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True):
    """Sequences of shape (L_i, *), packed: ``pad_sequence`` then
    ``pack_padded_sequence``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(
        pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted
    )


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """A padded batch back into its sequences, each of its own length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = _host_ints(lengths)
    return [seq[:n] for seq, n in zip(padded_sequences, lengths, strict=False)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """A packed batch back into its sequences."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
