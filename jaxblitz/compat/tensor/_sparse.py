"""Blitz 1, "Tensors": the sparse family of ``Tensor`` methods on compat's
tensors, which are all strided (dense). What torch answers for a strided
tensor, compat answers the same: ``to_dense()`` is the tensor itself,
``sparse_dim()`` is 0, and ``values()``, ``indices()``, ``coalesce()``...
raise torch's own error. Making a sparse tensor (``to_sparse()`` and its
layouts) is refused by name: compat has no sparse tensors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxblitz.compat._not_offered import REASONS, NotOffered
from jaxblitz.compat.tensor import _dtype

if TYPE_CHECKING:
    from jaxblitz.compat.tensor import Tensor

_SPARSE = REASONS["torch"]["sparse_coo_tensor"]


def _strided_only(name: str, layout: str) -> Callable[..., Any]:
    """The method ``name``, which torch has for ``layout`` tensors only."""

    def refuse(self: Tensor) -> Any:
        raise RuntimeError(f"{name} expected {layout} layout but got Strided")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``Tensor.{name}``: {layout}s only (compat has none)."
    return refuse


def _no_sparse(name: str) -> Callable[..., Any]:
    """``Tensor.{name}``, which makes a sparse tensor: refused."""

    def refuse(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise NotOffered(
            f"Tensor.{name} is not supported by jaxblitz.compat: {_SPARSE}"
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``Tensor.{name}``: refused (compat has no sparse tensors)."
    refuse.refused = True  # type: ignore[attr-defined] -- what the docs count
    return refuse


class SparseMixin:
    """The sparse family's methods, as torch has them for a strided tensor."""

    __slots__ = ()

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Any:
        """The tensor itself (torch: a strided tensor is already dense), or a copy
        in ``dtype``."""
        if dtype is not None and not isinstance(dtype, _dtype.dtype):
            raise TypeError(
                "to_dense(): argument 'dtype' (position 1) must be torch.dtype, "
                f"not {type(dtype).__name__}"
            )
        return self if dtype is None else self.to(dtype)  # type: ignore[attr-defined]

    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return self.dim()  # type: ignore[attr-defined]

    values = _strided_only("values", "sparse tensor")
    indices = _strided_only("indices", "sparse coordinate tensor")
    coalesce = _strided_only("coalesce", "sparse coordinate tensor")
    is_coalesced = _strided_only("is_coalesced", "sparse coordinate tensor")
    crow_indices = _strided_only("crow_indices", "sparse row compressed tensor")
    col_indices = _strided_only("col_indices", "sparse row compressed tensor")
    ccol_indices = _strided_only("ccol_indices", "sparse column compressed tensor")
    row_indices = _strided_only("row_indices", "sparse column compressed tensor")

    to_sparse = _no_sparse("to_sparse")
    to_sparse_coo = _no_sparse("to_sparse_coo")
    to_sparse_csr = _no_sparse("to_sparse_csr")
    to_sparse_csc = _no_sparse("to_sparse_csc")
    to_sparse_bsr = _no_sparse("to_sparse_bsr")
    to_sparse_bsc = _no_sparse("to_sparse_bsc")
