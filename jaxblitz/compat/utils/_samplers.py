"""Blitz 4, "Training a classifier": ``torch.utils.data``'s samplers -- the order
in which a ``DataLoader`` reads a map-style dataset.

Random orders are drawn from compat's generator (``torch.manual_seed`` repeats
them, with JAX's numbers, not PyTorch's); ``DistributedSampler``
(:mod:`._distributed_sampler`) alone reproduces PyTorch's permutations exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["Sampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Subclass and define ``__iter__`` (and ``__len__``, for ``len(loader)``)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError
