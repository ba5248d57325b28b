"""Blitz 4, "Training a classifier": ``torch.utils.data``'s samplers -- the order
in which a ``DataLoader`` reads a map-style dataset.

Random orders are drawn from compat's generator (``torch.manual_seed`` repeats
them, with JAX's numbers, not PyTorch's; ``RandomSampler`` without a generator
draws what ``DataLoader(shuffle=True)`` does); ``DistributedSampler``
(:mod:`._distributed_sampler`) alone reproduces PyTorch's permutations exactly.
Lengths, argument checks and errors are PyTorch's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from jaxblitz.compat.tensor import _dtype, creation

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

T_co = TypeVar("T_co", covariant=True)


def check_batch_size(batch_size: Any) -> None:
    """torch's check of ``batch_size`` (a positive int), in its words:
    ``BatchSampler``'s and ``DataLoader``'s."""
    if (
        not isinstance(batch_size, int)
        or isinstance(batch_size, bool)
        or batch_size <= 0
    ):
        raise ValueError(
            "batch_size should be a positive integer value, but got "
            f"batch_size={batch_size}"
        )


def check_drop_last(drop_last: Any) -> None:
    """torch's check of ``drop_last`` (a bool), as :func:`check_batch_size`."""
    if not isinstance(drop_last, bool):
        raise ValueError(
            f"drop_last should be a boolean value, but got drop_last={drop_last}"
        )


def _ints(t: Any) -> list[int]:
    return np.asarray(t).tolist()


class Sampler(Generic[T_co]):
    """Subclass and define ``__iter__`` (and ``__len__``, for ``len(loader)``)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A permutation (repeated and cut to ``num_samples``), or ``num_samples``
    uniform draws with ``replacement``."""

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                "replacement should be a boolean value, but got "
                f"replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, g = len(self.data_source), self.generator
        if self.replacement:
            drawn = creation.randint(
                0, n, (self.num_samples,), dtype=_dtype.int64, generator=g
            )
            yield from _ints(drawn)
            return
        for _ in range(self.num_samples // n):
            yield from _ints(creation.randperm(n, generator=g))
        if self.num_samples % n:
            yield from _ints(creation.randperm(n, generator=g))[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """``indices`` in a random order."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = creation.randperm(len(self.indices), generator=self.generator)
        for i in _ints(order):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to
    ``weights`` (``torch.multinomial``)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if (
            not isinstance(num_samples, int)
            or isinstance(num_samples, bool)
            or num_samples <= 0
        ):
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                "replacement should be a boolean value, but got "
                f"replacement={replacement}"
            )
        weights_tensor = creation.as_tensor(weights, dtype=_dtype.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        from jaxblitz.compat.ops._multinomial import multinomial

        drawn = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from _ints(drawn)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """``sampler``'s indices in lists of ``batch_size`` (the last one shorter,
    or dropped with ``drop_last``)."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        check_batch_size(batch_size)
        check_drop_last(drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
