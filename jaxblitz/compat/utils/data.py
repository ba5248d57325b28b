"""Blitz 4, "Training a classifier": ``torch.utils.data``.

``Dataset``, ``TensorDataset``, ``Subset``, ``random_split`` and a single-process
``DataLoader`` (``num_workers`` is accepted and ignored) whose default collation
stacks samples on the host with NumPy and moves each batch to JAX once.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from jaxblitz.compat import creation
from jaxblitz.compat.tensor import Tensor


class Dataset:
    """Subclass and define ``__getitem__`` (and ``__len__``)."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    def __init__(self, *tensors: Tensor):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors
        self._host = [np.asarray(t._data) for t in tensors]

    def __getitem__(self, index: int) -> tuple:
        return tuple(_HostTensor(h[index]) for h in self._host)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int], generator: Any = None):
    if sum(lengths) != len(dataset):
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    order = np.asarray(creation.randperm(len(dataset), generator=generator))
    out, start = [], 0
    for n in lengths:
        out.append(Subset(dataset, order[start : start + n].tolist()))
        start += n
    return out


def _HostTensor(array: np.ndarray) -> Tensor:  # noqa: N802
    """A Tensor whose storage is a NumPy array (cheap to collate)."""
    return creation.from_numpy(np.array(array))


def _host(value: Any) -> np.ndarray:
    s = value._s
    return s.numpy if s.numpy is not None else np.asarray(s.array)


def default_collate(batch: list[Any]) -> Any:
    """torch's rules: stack tensors/arrays, numbers -> tensor, recurse into
    tuples, lists and dicts."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return creation.tensor(np.stack([_host(v) for v in batch]))
    if isinstance(elem, np.ndarray):
        return creation.tensor(np.stack(batch))
    if isinstance(elem, bool | np.bool_):
        return creation.tensor(batch)
    if isinstance(elem, numbers.Integral):
        return creation.tensor(batch, dtype=creation._dtype.int64)
    if isinstance(elem, numbers.Real):
        return creation.tensor(batch, dtype=creation._dtype.float64)
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, dict):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple | list):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(items)) for items in zip(*batch, strict=True)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
        f"or lists; found {type(elem)}"
    )


class DataLoader:
    """``DataLoader(dataset, batch_size=1, shuffle=False, num_workers=0, ...)``."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool = False,
        sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        drop_last: bool = False,
        generator: Any = None,
        **_: Any,
    ):
        if batch_size is not None and batch_size < 1:
            raise ValueError(
                "batch_size should be a positive integer value, but got "
                f"batch_size={batch_size}"
            )
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.num_workers, self.generator = (
            drop_last,
            num_workers,
            generator,
        )
        self.sampler = sampler
        self.collate_fn = collate_fn or default_collate

    def _order(self) -> list[int]:
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        if self.shuffle:
            return np.asarray(creation.randperm(n, generator=self.generator)).tolist()
        return list(range(n))

    def __iter__(self) -> Iterator[Any]:
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield self.dataset[i]
            return
        for start in range(0, len(order), self.batch_size):
            indices = order[start : start + self.batch_size]
            if self.drop_last and len(indices) < self.batch_size:
                return
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
