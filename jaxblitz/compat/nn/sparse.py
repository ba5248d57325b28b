"""Blitz 3, "Neural Networks": ``torch.nn.Embedding`` and
``torch.nn.functional.embedding``, a lookup table of rows (the tutorials' word
embeddings): one recorded op, ``EmbeddingBackward0``, whose gradient skips
``padding_idx``'s row and, with ``scale_grad_by_freq``, is divided by how often
each index occurs in the batch."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

from jaxblitz.compat import _dtype, creation
from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.autograd.graph import apply, run
from jaxblitz.compat.nn.module import Module, Parameter
from jaxblitz.compat.tensor import Tensor

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


def _index_range_fn(indices):
    return jnp.min(indices), jnp.max(indices)


def _renorm_fn(weight, indices, *, max_norm, norm_type):
    # torch's embedding_renorm_: rows looked up whose norm exceeds max_norm
    used = jnp.zeros(weight.shape[0], bool).at[indices.ravel()].set(True)
    norms = jnp.linalg.norm(weight, ord=norm_type, axis=1)
    scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1)
    return weight * scale[:, None].astype(weight.dtype)


# -- torch.nn.functional -------------------------------------------------------------


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
    if input.numel():
        low, high = (int(v) for v in run(_index_range_fn, input._data))
        if low < 0 or high >= weight.shape[0]:
            raise IndexError("index out of range in self")
    if max_norm is not None:  # torch renormalises the weight in place first
        with no_grad():
            renormed = run(
                _renorm_fn,
                weight._data,
                input._data,
                max_norm=float(max_norm),
                norm_type=float(norm_type),
            )
            weight.copy_(Tensor._wrap(renormed))
    return apply(
        "EmbeddingBackward0",
        _embedding_fn,
        weight,
        input,
        padding_idx=padding_idx,
        scale=bool(scale_grad_by_freq),
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
