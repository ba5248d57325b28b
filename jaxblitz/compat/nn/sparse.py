"""Blitz 3, "Neural Networks": ``torch.nn.Embedding`` and
``torch.nn.functional.embedding``, a lookup table of rows (the tutorials' word
embeddings): one recorded op, ``EmbeddingBackward0``, whose gradient skips
``padding_idx``'s row and, with ``scale_grad_by_freq``, is divided by how often
each index occurs in the batch. ``torch.nn.EmbeddingBag`` (the text classification
tutorial's model) sums, averages or takes the maximum of each bag's rows, one
recorded op, ``EmbeddingBagBackward0``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor, _dtype, creation
from jaxblitz.compat.tensor._checks import check_range, check_values, error

# -- pure JAX functions --------------------------------------------------------------


def _embedding_fn(weight, indices, *, padding_idx, scale):
    out = jnp.take(weight, indices, axis=0)  # (*indices.shape, dim)
    if padding_idx is None and not scale:
        return out
    factor = jnp.ones(indices.shape, weight.dtype)
    if padding_idx is not None:  # torch: no gradient flows to the padding row
        factor = jnp.where(indices == padding_idx, 0, factor)
    if scale:  # torch: each row's gradient divided by its count in the batch
        counts = jnp.zeros(weight.shape[0], weight.dtype).at[indices.ravel()].add(1)
        factor = factor / counts[indices]
    # The same value; the gradient multiplied by factor.
    const = lax.stop_gradient(out)
    return const + (out - const) * factor[..., None]


def _out_of_range(*_: Any) -> IndexError:
    return IndexError("index out of range in self")


def _renorm_fn(weight, indices, *, max_norm, norm_type):
    # torch's embedding_renorm_: rows looked up whose norm exceeds max_norm
    used = jnp.zeros(weight.shape[0], bool).at[indices.ravel()].set(True)
    norms = jnp.linalg.norm(weight, ord=norm_type, axis=1)
    scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1)
    return weight * scale[:, None].astype(weight.dtype)


def _bag_fn(weight, indices, offsets, per_sample_weights, *, mode, bags, padding_idx):
    # indices (N,), offsets (bags,): entry i belongs to the last bag starting at or
    # before it; entries past the last bag (include_last_offset) and padding_idx's
    # entries belong to none.
    positions = jnp.arange(indices.shape[0])
    bag = jnp.searchsorted(offsets, positions, side="right") - 1
    keep = bag < bags
    if padding_idx is not None:
        keep &= indices != padding_idx
    bag = jnp.where(keep, bag, bags)  # one extra segment, dropped below
    rows = jnp.take(weight, indices, axis=0)  # (N, dim)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    if mode == "max":
        if not indices.shape[0]:
            return jnp.zeros((bags, weight.shape[1]), weight.dtype)
        chosen = max_positions(rows, keep, bag, bags)  # (bags, dim)
        n = indices.shape[0]
        # the chosen row's value, its gradient to that row alone (ties and all)
        out = jnp.take_along_axis(rows, jnp.minimum(chosen, n - 1), axis=0)
        return jnp.where(chosen < n, out, 0)  # torch: an empty bag is zeros
    out = jax.ops.segment_sum(rows, bag, num_segments=bags + 1)[:bags]
    if mode == "mean":
        counts = jax.ops.segment_sum(keep.astype(weight.dtype), bag, bags + 1)[:bags]
        out = out / jnp.maximum(counts, 1)[:, None]
    return out


def max_positions(values, counted, owner, bags):
    """ATen's max of each bag, per column: the bag's first counted entry,
    replaced by each greater one -- a NaN first stays, a NaN later never
    replaces; of equal values the first. Returns positions in ``values``
    (n where the bag has no counted entry), (bags, dim); ``owner``: each
    entry's bag (``bags`` or more: none)."""
    n = values.shape[0]
    place = jnp.arange(n)
    if not bags:
        return jnp.zeros((0, values.shape[1]), place.dtype)
    first = jax.ops.segment_min(jnp.where(counted, place, n), owner, bags)
    nan = jnp.isnan(values)
    best = jax.ops.segment_max(
        jnp.where(counted[:, None] & ~nan, values, -jnp.inf), owner, bags
    )
    taken = counted[:, None] & (values == best[jnp.minimum(owner, bags - 1)])
    greatest = jax.ops.segment_min(jnp.where(taken, place[:, None], n), owner, bags)
    nan_first = nan[jnp.minimum(first, n - 1)] & (first < n)[:, None]
    chosen = jnp.where(nan_first, first[:, None], greatest)
    return jnp.minimum(chosen, n)  # an empty bag's segment_min is the int's max


def _first_not_zero(offsets):
    return offsets[:1] != 0, offsets[:1]


def _last_past(offsets, *, length):
    return offsets[-1:] > length, offsets[-1:]


def _last_short(offsets, *, length):
    return offsets[-1:] != length, offsets[-1:]


def _check_offsets(input: Tensor, offsets: Tensor, last_is_end: bool) -> None:
    """torch's checks of the offsets' values (the bags' count is their length:
    nothing else depends on them), then compat's refusal of a last offset that
    is not the indices' end where torch's kernels disagree on the last bag."""
    if not offsets.numel():
        return
    common = (
        "Int"
        if input.dtype is _dtype.int32 and offsets.dtype is _dtype.int32
        else "Long"
    )
    length = input.numel()
    check_values(
        [offsets],
        _first_not_zero,
        lambda value, _: RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
            f"to start from position 0. However, got {value}\n"
            f"[ torch.{common}Tensor{{}} ]"
        ),
        traced="embedding_bag (torch checks its offsets)",
    )
    check_values(
        [offsets],
        _last_past,
        lambda value, _: RuntimeError(
            f"offsets[-1] can not be greater than input's length {length} but got "
            f"offsets[-1] of {value}"
        ),
        traced="embedding_bag (torch checks its offsets)",
        length=length,
    )
    if last_is_end:
        check_values(
            [offsets],
            _last_short,
            error(
                "embedding_bag: include_last_offset=True with a last offset other "
                "than the number of indices is not supported by jaxblitz.compat "
                "(torch's kernels take the last bag to the end of the indices here, "
                "but for a plain sum)",
                NotImplementedError,
            ),
            traced="embedding_bag (the last offset)",
            length=length,
        )


# -- torch.nn.functional -------------------------------------------------------------


def _check_and_renorm(
    input: Tensor, weight: Tensor, max_norm: float | None, norm_type: float
) -> None:
    """torch's bounds check on the indices, then (with ``max_norm``) the in-place
    renormalisation of the rows they pick."""
    check_range(input, 0, weight.shape[0], _out_of_range)
    if max_norm is not None:  # torch renormalises the weight in place first
        with no_grad():
            renormed = run(
                _renorm_fn,
                weight._value(),
                input._value(),
                max_norm=float(max_norm),
                norm_type=float(norm_type),
            )
            weight.copy_(Tensor._wrap(renormed))


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    if padding_idx is not None:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % rows
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {input.type()} instead (while "
            "checking arguments for embedding)"
        )
    if sparse:
        raise NotImplementedError(
            "embedding: sparse=True (sparse gradients) is not supported by "
            "jaxblitz.compat"
        )
    _check_and_renorm(input, weight, max_norm, norm_type)
    return apply(
        "EmbeddingBackward0",
        _embedding_fn,
        weight,
        input,
        padding_idx=padding_idx,
        scale=bool(scale_grad_by_freq),
    )


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding_bag: scale_grad_by_freq=True and sparse=True are not "
            "supported by jaxblitz.compat"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is "
            f"only supported for mode='sum' (got mode='{mode}'). Please open a "
            "feature request on GitHub."
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is "
                "a mini-batch of fixed length sequences. However, found offsets of "
                f"type {type(offsets)}"
            )
        rows, length = input.shape
        offsets = creation.arange(0, rows * length, length)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None or offsets.dim() != 1:
            raise ValueError(
                "offsets has to be a 1D Tensor but got "
                f"{None if offsets is None else offsets.dim()}"
            )
    else:
        raise ValueError(
            "input has to be 1D or 2D Tensor, but got Tensor of dimension "
            f"{input.dim()}"
        )
    if input.dtype not in (_dtype.int64, _dtype.int32):
        got = (
            "CPUBoolType"
            if input.dtype is _dtype.bool
            else f"torch.{input.dtype.scalar_type}Tensor"
        )
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following "
            f"scalar types: Long, Int; but got {got} instead (while checking "
            "arguments for embedding_bag)"
        )
    if padding_idx is not None:
        padding_idx %= weight.shape[0]
    plain_sum = mode == "sum" and per_sample_weights is None and padding_idx is None
    _check_offsets(input, offsets, include_last_offset and not plain_sum)
    rows = weight.shape[0]
    check_range(
        input,
        0,
        rows,
        lambda value, i: RuntimeError(
            f"Index {i} of input takes value {value} which is not in the valid "
            f"range [0, {rows})"
        ),
    )
    if max_norm is not None:
        _check_and_renorm(input, weight, max_norm, norm_type)
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    return apply(
        "EmbeddingBagBackward0",
        _bag_fn,
        weight,
        input,
        offsets,
        per_sample_weights,
        mode=mode,
        bags=bags,
        padding_idx=padding_idx,
    )


# -- torch.nn.Embedding --------------------------------------------------------------


class Embedding(Module):
    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = (
            padding_idx,
            max_norm,
            norm_type,
        )
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
            weight = creation.randn(num_embeddings, embedding_dim, dtype=dt)
            self.weight = Parameter(
                weight.to(device) if device else weight, not _freeze
            )
            self._fill_padding_idx_with_zero()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def reset_parameters(self) -> None:
        with no_grad():
            self.weight.normal_()
        self._fill_padding_idx_with_zero()

    def forward(self, input: Tensor) -> Tensor:
        return embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )


# -- torch.nn.EmbeddingBag -----------------------------------------------------------


class EmbeddingBag(Module):
    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.mode = mode
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            dt = _dtype.to_dtype(dtype or _dtype.get_default_dtype())
            weight = creation.randn(num_embeddings, embedding_dim, dtype=dt)
            self.weight = Parameter(weight.to(device) if device else weight)
            Embedding._fill_padding_idx_with_zero(self)
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        Embedding.reset_parameters(self)

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        return embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        text += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
