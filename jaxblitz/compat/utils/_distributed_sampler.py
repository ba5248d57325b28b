"""Blitz 5, "Data parallelism": ``torch.utils.data.distributed.DistributedSampler``.

Each of ``num_replicas`` processes reads its own ``rank``'s share of the dataset.
compat starts no process group, so ``num_replicas`` and ``rank`` are given (as a
script launched by hand does); then every index is PyTorch's, shuffled ones too:
PyTorch shuffles with ``torch.randperm`` under a CPU generator seeded with
``seed + epoch``, which :func:`torch_randperm` reproduces (MT19937 and PyTorch's
swap loop), so replicas run by compat and by PyTorch split one dataset alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from jaxblitz.compat import distributed as dist
from jaxblitz.compat.utils._samplers import Sampler

__all__ = ["DistributedSampler"]

# torch's randperm_cpu uses the loop below for n under this bound
_SMALL = np.iinfo(np.uint32).max // 20


def _mt19937(seed: int, count: int) -> np.ndarray:
    """The first ``count`` 32-bit outputs of PyTorch's CPU generator after
    ``manual_seed(seed)`` (MT19937 seeded with the seed's low 32 bits)."""
    key = np.random.RandomState(seed & 0xFFFFFFFF).get_state()[1]
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}
    return bits.random_raw(count)


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed))``."""
    if n >= _SMALL:
        raise NotImplementedError(
            f"DistributedSampler: shuffling {n} samples (over {_SMALL}) is not "
            "supported by jaxblitz.compat"
        )
    order = list(range(n))
    draws = _mt19937(seed, max(n - 1, 0)).tolist()
    for i in range(n - 1):  # torch: z = generator->random() % (n - i); swap
        z = draws[i] % (n - i) + i
        order[i], order[z] = order[z], order[i]
    return order


class DistributedSampler(Sampler):
    """``rank``'s share of ``dataset``: padded (or cut, with ``drop_last``) to a
    multiple of ``num_replicas``, then every ``num_replicas``-th index."""

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = dist.get_world_size()  # torch's error: no process group
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval "
                f"[0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = torch_randperm(n, self.seed + self.epoch)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                reps = math.ceil(padding_size / len(indices))
                indices += (indices * reps)[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match total_size "
                f"({self.total_size})"
            )
        indices = indices[self.rank : self.total_size : self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match "
                f"num_samples ({self.num_samples})"
            )
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """A new shuffle each epoch: the order is ``seed + epoch``'s."""
        self.epoch = epoch
