"""Blitz 4, "Training a classifier": ``torch.utils.data``.

``Dataset``, ``TensorDataset``, ``ConcatDataset`` (``a + b``), ``Subset``,
``StackDataset``, ``IterableDataset`` and ``ChainDataset``, ``random_split``, the
samplers (:mod:`._samplers`, ``DistributedSampler``), ``get_worker_info`` and
``DataLoader``, whose default
collation stacks samples on the host with NumPy and moves each batch to JAX
once. With ``num_workers=N`` the samples are read by N worker processes as in
torch (:mod:`._pool`, :mod:`._worker`: ``worker_init_fn``, the workers' seeds,
``timeout``, ``prefetch_factor``, ``persistent_workers``, ``in_order``); they
come back as NumPy and are collated here, so a batch is the one
``num_workers=0`` gives.
"""

from __future__ import annotations

import bisect
import itertools
import math
import multiprocessing
import numbers
import sys
import warnings
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from jaxblitz.compat import _not_offered
from jaxblitz.compat.tensor import Tensor, creation
from jaxblitz.compat.utils import _distributed_sampler as distributed
from jaxblitz.compat.utils import _samplers as sampler
from jaxblitz.compat.utils._distributed_sampler import (  # noqa: F401 (torch's)
    DistributedSampler,
)
from jaxblitz.compat.utils._samplers import (  # noqa: F401 (torch's)
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    check_batch_size,
    check_drop_last,
)
from jaxblitz.compat.utils._worker import (  # noqa: F401 (torch.utils.data's)
    WorkerInfo,
    get_worker_info,
)

# torch.utils.data.distributed and .sampler: `from torch.utils.data.sampler import
# ...` ports to these names, found here (this module is not a package).
sys.modules[__name__ + ".distributed"] = distributed
sys.modules[__name__ + ".sampler"] = sampler


class Dataset:
    """Subclass and define ``__getitem__`` (and ``__len__``)."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Subclass and define ``__iter__``: a stream of samples, no indices. With
    ``DataLoader(num_workers=N)`` each worker iterates its own copy, which
    shards itself with ``get_worker_info()`` (or ``worker_init_fn``)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(
            "Subclasses of IterableDataset should implement __iter__."
        )

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """The samples of the iterable ``datasets``, one after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Sample ``i`` is a tuple (``*args``) or dict (``**kwargs``) of the datasets'
    samples ``i``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via "
                "``kwargs``) like input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args or kwargs

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class TensorDataset(Dataset):
    def __init__(self, *tensors: Tensor):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors
        self._host = [np.asarray(t._data) for t in tensors]

    def __getitem__(self, index: int) -> tuple:
        n = len(self)
        if isinstance(index, int) and not -n <= index < n:
            raise IndexError(
                f"index {index} is out of bounds for dimension 0 with size {n}"
            )
        return tuple(_HostTensor(h[index]) for h in self._host)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    """The samples of ``datasets``, one after another."""

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError(
                    "absolute value of index should not exceed dataset length"
                )
            index += len(self)
        i = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[i - 1] if i else 0
        return self.datasets[i][index - start]


class Subset(Dataset):
    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int], generator: Any = None):
    """torch's ``random_split``: lengths, or fractions that sum to 1."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [math.floor(len(dataset) * frac) for frac in lengths]
        for i in range(len(dataset) - sum(counts)):  # the rest, round-robin
            counts[i % len(counts)] += 1
        for i, n in enumerate(counts):
            if n == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an "
                    "empty dataset.",
                    UserWarning,
                    stacklevel=2,
                )
        lengths = counts
    if any(isinstance(n, bool) or not isinstance(n, numbers.Integral) for n in lengths):
        raise TypeError(
            f"random_split: lengths must be ints, or fractions that sum to 1; got "
            f"{list(lengths)}"
        )
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
    return value._host()


def _stacked(arrays: list[np.ndarray]) -> Tensor:
    """``torch.stack`` of same-shaped samples, with its error where they differ."""
    for i, array in enumerate(arrays):
        if array.shape != arrays[0].shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(arrays[0].shape)} at entry 0 and {list(array.shape)} at "
                f"entry {i}"
            )
    return creation.tensor(np.stack(arrays))


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def default_collate(batch: list[Any]) -> Any:
    """torch's rules: stack tensors/arrays, numbers -> tensor, recurse into
    tuples, lists and dicts."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stacked([_host(v) for v in batch])
    if isinstance(elem, np.ndarray):
        return _stacked(batch)
    if isinstance(elem, np.number | np.bool_):  # torch.as_tensor: NumPy's dtype
        return creation.tensor(np.array(batch))
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
        # torch collates each field as the tuple zip gives (strings stay a tuple)
        items = [default_collate(items) for items in zip(*batch, strict=True)]
        return type(elem)(*items) if _is_namedtuple(elem) else items
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
        f"or lists; found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    """torch's conversion of one sample when ``batch_size=None``: arrays and
    NumPy scalars become tensors, tuples lists, and the rest is kept."""
    if isinstance(data, np.ndarray | np.number | np.bool_):
        return creation.tensor(np.asarray(data))
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple | list):
        return [default_convert(d) for d in data]
    return data


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
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Any = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        batch_sampler: Any = None,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ):
        # torch's checks and words (DataLoader.__init__ and BatchSampler).
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to "
                "disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if isinstance(dataset, IterableDataset):
            for name, given in [("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)]:  # fmt: skip
                if given not in (None, False):
                    raise ValueError(
                        "DataLoader with IterableDataset: expected unspecified "
                        f"{name} option, but got {name}={given}"
                    )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        elif batch_size is not None:
            check_batch_size(batch_size)
        check_drop_last(drop_last)
        self.batch_sampler = batch_sampler
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.num_workers, self.generator = (
            drop_last,
            num_workers,
            generator,
        )
        self.sampler = sampler
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.prefetch_factor, self.persistent_workers = (
            prefetch_factor,
            persistent_workers,
        )
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.in_order = in_order
        self.multiprocessing_context = _context(multiprocessing_context, num_workers)
        # torch: without batching, each sample goes through ``default_convert``
        batching = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn or (
            default_collate if batching else default_convert
        )
        self._pool: Any = None  # the workers, kept with persistent_workers
        # torch: what len(loader) last read of an IterableDataset (None: never);
        # an iteration that yields more batches warns
        self._IterableDataset_len_called: int | None = None

    def _order(self) -> list[int]:
        if self.sampler is not None:
            return list(self.sampler)
        n = len(self.dataset)
        if self.shuffle:
            return np.asarray(creation.randperm(n, generator=self.generator)).tolist()
        return list(range(n))

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or self.batch_size is not None

    def _tasks(self) -> Iterator[Any]:
        """What each batch reads: a list of indices (one index without batching)."""
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield list(indices)
            return
        order = self._order()
        if self.batch_size is None:
            yield from order
            return
        for start in range(0, len(order), self.batch_size):
            indices = order[start : start + self.batch_size]
            if self.drop_last and len(indices) < self.batch_size:
                return
            yield indices

    def _fetch(self, task: Any) -> Any:
        if self._auto_collation:
            return self.collate_fn([self.dataset[i] for i in task])
        return self.collate_fn(self.dataset[task])

    def _from_iterable(self) -> Iterator[Any]:
        """torch's fetcher for an IterableDataset: batches of the stream."""
        samples = iter(self.dataset)
        if self.batch_size is None:
            yield from map(self.collate_fn, samples)
            return
        while batch := list(itertools.islice(samples, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield self.collate_fn(batch)

    def __iter__(self) -> Iterator[Any]:
        self._check_pinning()
        if isinstance(self.dataset, IterableDataset):
            if self.num_workers == 0 and self.timeout != 0:
                raise AssertionError(
                    "_SingleProcessDataLoaderIter requires timeout == 0"
                )
            if self.num_workers > 0 and self.prefetch_factor <= 0:
                raise AssertionError(
                    "prefetch_factor must be greater than 0 for "
                    "MultiProcessingDataLoaderIter"
                )
            batches = (
                self._from_workers() if self.num_workers else self._from_iterable()
            )
            return self._counted(batches, self._IterableDataset_len_called)
        if self.num_workers == 0:
            if self.timeout != 0:  # torch's single-process iterator refuses it too
                raise AssertionError(
                    "_SingleProcessDataLoaderIter requires timeout == 0"
                )
            return map(self._fetch, self._tasks())
        if self.prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for "
                "MultiProcessingDataLoaderIter"
            )
        return self._from_workers()

    def _counted(self, batches: Iterator[Any], reported: int | None) -> Iterator[Any]:
        """An IterableDataset's batches, with torch's warning once more come
        than ``len(loader)`` (read before ``iter``) said."""
        for n, batch in enumerate(batches, 1):
            if reported is not None and n > reported:
                message = (
                    f"Length of IterableDataset {self.dataset} was reported to be "
                    f"{reported}(when accessing len(dataloader)), but {n} samples "
                    "have been fetched. "
                )
                if self.num_workers > 0:
                    message += (
                        "For multiprocessing data-loading, this could be caused by "
                        "not properly configuring the IterableDataset replica at "
                        "each worker. Please see https://pytorch.org/docs/stable/"
                        "data.html#torch.utils.data.IterableDataset for examples."
                    )
                warnings.warn(message, stacklevel=2)
            yield batch

    def _from_workers(self) -> Iterator[Any]:
        from jaxblitz.compat.utils import _pool

        # The default collation runs here, on the samples as NumPy: the batches
        # num_workers=0 gives. A collate_fn of the user's runs in the worker.
        in_parent = self.collate_fn in (default_collate, default_convert)
        if isinstance(self.dataset, IterableDataset):
            yield from self._streams(in_parent)
            return
        tasks = self._tasks()
        first = next(tasks, _pool.END)  # draws the shuffle, as num_workers=0 does
        if first is _pool.END:
            return
        pool = self._pool
        if pool is None:
            base_seed = _base_seed(self.generator)  # worker i: base_seed + i
            pool = _pool.start(self, base_seed, None if in_parent else self.collate_fn)
            if self.persistent_workers:
                self._pool = pool
        else:
            pool.epoch += 1
        try:
            yield from _pool.batches(
                pool,
                itertools.chain([first], tasks),
                prefetch=self.prefetch_factor,
                in_order=self.in_order,
                timeout=self.timeout,
                finish=self.collate_fn if in_parent else _same,
            )
        finally:
            if not self.persistent_workers:
                pool.close()

    def _streams(self, in_parent: bool) -> Iterator[Any]:
        """An IterableDataset read by the workers, each from its own copy."""
        from jaxblitz.compat.utils import _pool

        pool = self._pool
        if pool is None:
            collate = None if in_parent else self.collate_fn
            pool = _pool.start(self, _base_seed(self.generator), collate, True)
            if self.persistent_workers:
                self._pool = pool
        else:
            pool.epoch += 1  # each worker makes its iterator anew
        try:
            yield from _pool.streams(
                pool,
                self.batch_size,
                prefetch=self.prefetch_factor,
                in_order=self.in_order,
                timeout=self.timeout,
                finish=self.collate_fn if in_parent else _same,
            )
        finally:
            if not self.persistent_workers:
                pool.close()

    def _check_pinning(self) -> None:
        """torch's warnings: compat never pins host memory."""
        if not self.pin_memory:
            return
        from jaxblitz.compat import accelerator

        if self.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used "
                f"as the device,ignore pin_memory_device='{self.pin_memory_device}'.",
                stacklevel=3,
            )
        if not accelerator.is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        else:
            warnings.warn(
                "'pin_memory' argument is set as true but jaxblitz.compat does not pin "
                "host memory: batches are copied to the device by .to(device) as "
                "without it.",
                stacklevel=3,
            )

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)  # a TypeError where the stream has no length
            self._IterableDataset_len_called = n
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _same(batch: Any) -> Any:
    return batch


# generator -> (its key's bits, how many worker starts have seen that key)
_starts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _base_seed(generator: Any) -> int:
    """The workers' base seed, a new one each time workers start.

    torch draws it from the loader's generator (the global one by default).
    Here it comes from that generator's state without advancing it, and from
    how many starts have seen that state: ``torch.manual_seed`` still makes it
    repeat, and ``num_workers`` changes no other random number.
    """
    import jax

    g = generator or creation.default_generator
    key = g._key
    raw = np.asarray(jax.random.key_data(key) if creation._typed(key) else key)
    bits = tuple(int(b) for b in raw.ravel())
    last, n = _starts.get(g, (None, -1))
    n = n + 1 if last == bits else 0
    _starts[g] = (bits, n)
    return int(np.random.default_rng([*bits, n]).integers(0, 1 << 63))


def _context(context: Any, num_workers: int) -> Any:
    """torch's checks of ``multiprocessing_context``, as a context object."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError(
            "multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}"
        )
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                "multiprocessing_context option should specify a valid start method "
                f"in {methods!r}, but got multiprocessing_context={context!r}"
            )
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a "
            "string specifying the start method, but got "
            f"multiprocessing_context={context}"
        )
    if context.get_start_method() == "fork":
        raise NotImplementedError(
            "DataLoader(multiprocessing_context='fork') is not supported by "
            "jaxblitz.compat: a forked copy of a process that runs JAX deadlocks at "
            "its first JAX call. Its workers start as fresh processes, as with "
            "'spawn' or 'forkserver' (either is accepted), and get the dataset by "
            "cloudpickle, so lambdas and classes defined in __main__ still work."
        )
    return context


# torch's DataPipes (deprecated there): refused by name, with the reason
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.utils.data",
    _not_offered.each(
        """DFIterDataPipe DataChunk IterDataPipe MapDataPipe argument_validation
        functional_datapipe guaranteed_datapipes_determinism non_deterministic
        runtime_validation runtime_validation_disabled""",
        "DataPipes (deprecated in torch, moved to torchdata) are not offered: "
        "use Dataset or IterableDataset with DataLoader",
    ),
)
