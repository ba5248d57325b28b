"""compat's ``torch.utils.data`` samplers and stream datasets against PyTorch:
lengths, orders where they are not random, what random orders may hold, errors
in PyTorch's words, and ``DataLoader`` with ``sampler=``, ``batch_sampler=`` and
an ``IterableDataset``."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import jaxblitz.compat as ct
import jaxblitz.compat.utils.data as data

pt = pytest.importorskip("torch")
real = pt.utils.data


def test_a_sequential_sampler_and_batch_samplers_give_pytorchs_indices():
    for size, batch, drop in [
        (10, 3, False),
        (10, 3, True),
        (9, 3, True),
        (2, 5, False),
    ]:
        ours = data.BatchSampler(data.SequentialSampler(range(size)), batch, drop)
        theirs = real.BatchSampler(real.SequentialSampler(range(size)), batch, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(data.BatchSampler([4, 1, 3], 2, False)) == [[4, 1], [3]]


def test_random_samplers_permute_repeat_and_draw_within_range():
    ct.manual_seed(0)
    once = list(data.RandomSampler(range(7)))
    assert sorted(once) == list(range(7))
    more = list(data.RandomSampler(range(7), num_samples=17))
    assert len(more) == 17 and sorted(more[:14]) == sorted(list(range(7)) * 2)
    assert len(set(more[14:])) == 3
    drawn = list(data.RandomSampler(range(5), replacement=True, num_samples=500))
    assert len(drawn) == 500 and set(drawn) == set(range(5))
    subset = list(data.SubsetRandomSampler([10, 20, 30, 40]))
    assert sorted(subset) == [10, 20, 30, 40]
    assert len(data.RandomSampler(range(7), num_samples=3)) == 3


def test_random_samplers_repeat_under_a_seed_and_match_the_shuffling_loader():
    g = ct.Generator().manual_seed(4)
    first = list(data.RandomSampler(range(20), generator=g))
    g.manual_seed(4)
    assert list(data.RandomSampler(range(20), generator=g)) == first
    dataset = data.TensorDataset(ct.arange(20))
    ct.manual_seed(9)
    shuffled = [int(v) for (b,) in data.DataLoader(dataset, batch_size=4, shuffle=True)
                for v in b]  # fmt: skip
    ct.manual_seed(9)
    loader = data.DataLoader(dataset, batch_size=4, sampler=data.RandomSampler(dataset))
    assert [int(v) for (b,) in loader for v in b] == shuffled


def test_a_weighted_random_sampler_draws_in_proportion_and_without_replacement():
    ct.manual_seed(1)
    drawn = list(data.WeightedRandomSampler([0.0, 1.0, 3.0], 40_000))
    counts = collections.Counter(drawn)
    assert counts[0] == 0 and abs(counts[2] / 40_000 - 0.75) < 0.02
    once = list(data.WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False))
    assert sorted(once) == [0, 1, 2, 3]
    assert len(data.WeightedRandomSampler([1.0, 2.0], 5)) == 5


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d.RandomSampler(range(3), replacement=1),
        lambda d: d.RandomSampler(range(3), num_samples=0),
        lambda d: d.RandomSampler([], num_samples=None),
        lambda d: d.WeightedRandomSampler([1.0], 0),
        lambda d: d.WeightedRandomSampler([1.0], 2, replacement=None),
        lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2),
        lambda d: d.BatchSampler(range(3), 0, False),
        lambda d: d.BatchSampler(range(3), True, False),
        lambda d: d.BatchSampler(range(3), 2, 1),
    ],
)
def test_sampler_arguments_are_checked_as_in_pytorch(make):
    with pytest.raises((TypeError, ValueError)) as theirs:
        make(real)
    with pytest.raises(type(theirs.value)) as ours:
        make(data)
    assert str(ours.value) == str(theirs.value)


def test_a_custom_sampler_and_batch_sampler_drive_the_loader():
    class Evens(data.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    dataset = data.TensorDataset(ct.arange(10) * 10)
    loader = data.DataLoader(dataset, batch_size=2, sampler=Evens(10))
    assert [b[0].tolist() for b in loader] == [[0, 20], [40, 60], [80]]
    assert len(loader) == 3
    batches = data.BatchSampler(Evens(10), 2, drop_last=True)
    loader = data.DataLoader(dataset, batch_sampler=batches)
    assert [b[0].tolist() for b in loader] == [[0, 20], [40, 60]] and len(loader) == 2


class Stream(data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))

    def __len__(self):
        return self.end - self.start


class TorchStream(real.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))

    def __len__(self):
        return self.end - self.start


@pytest.mark.parametrize("batch_size, drop_last", [(None, False), (1, False),
                                                   (3, False), (3, True)])  # fmt: skip
def test_an_iterable_dataset_loads_as_in_pytorch(batch_size, drop_last):
    options = dict(batch_size=batch_size, drop_last=drop_last)
    ours = data.DataLoader(Stream(0, 4) + Stream(10, 14), **options)
    theirs = real.DataLoader(TorchStream(0, 4) + TorchStream(10, 14), **options)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert [np.asarray(b).tolist() for b in got] == [
        np.asarray(b).tolist() for b in want
    ]
    if batch_size is None:
        assert got == [0, 1, 2, 3, 10, 11, 12, 13]  # no batching: the samples


def test_iterable_datasets_refuse_what_pytorch_refuses():
    for d, stream in ((data, Stream), (real, TorchStream)):
        for option in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
            name = next(iter(option))
            with pytest.raises(ValueError, match=f"expected unspecified {name} option"):
                d.DataLoader(stream(0, 3), **option)
        with pytest.raises(AssertionError, match="ConcatDataset does not support"):
            d.ConcatDataset([stream(0, 2)])
        with pytest.raises(AssertionError, match="ChainDataset only supports"):
            list(d.ChainDataset([stream(0, 2), [1, 2]]))


def test_a_stack_dataset_zips_datasets_as_in_pytorch():
    a, b = data.TensorDataset(ct.arange(3)), [10, 20, 30]
    assert data.StackDataset(a, b)[1][1] == 20 and len(data.StackDataset(a, b)) == 3
    assert data.StackDataset(x=a, y=b)[2]["y"] == 30
    for d in (data, real):
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            d.StackDataset([1, 2], [1])
        with pytest.raises(ValueError, match="At least one dataset should be passed"):
            d.StackDataset()
        with pytest.raises(ValueError, match="but both types are given"):
            d.StackDataset([1], y=[2])
    loader = data.DataLoader(data.StackDataset(x=a, y=b), batch_size=2)
    first = next(iter(loader))
    assert first["x"][0].tolist() == [0, 1] and first["y"].tolist() == [10, 20]


def test_the_data_namespace_offers_pytorchs_samplers_and_datasets():
    for name in ("Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
                 "IterableDataset", "ChainDataset", "StackDataset", "ConcatDataset",
                 "Subset", "random_split"):  # fmt: skip
        assert hasattr(data, name), name
    assert issubclass(data.RandomSampler, data.Sampler)
    assert issubclass(data.ChainDataset, data.IterableDataset)
