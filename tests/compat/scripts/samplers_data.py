"""A data pipeline in the shape of the torch.utils.data documentation and the
data-loading tutorial: a map-style Dataset with the samplers (Sequential,
Random, SubsetRandom, WeightedRandom, BatchSampler) on a seeded torch.Generator,
an IterableDataset sharded with get_worker_info, ChainDataset, StackDataset,
random_split and DataLoader with a collate_fn. Random orders are printed as
sorted sets, which do not depend on the random stream."""

import math

import torch
from torch.utils.data import (
    BatchSampler,
    ChainDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
    random_split,
)

torch.manual_seed(0)


class Squares(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.x[i] ** 2


ds = Squares(10)
print("len", len(ds), "item 3", [float(v) for v in ds[3]])

g = torch.Generator().manual_seed(42)
seq = list(SequentialSampler(ds))
print("sequential", seq)
rand = list(RandomSampler(ds, generator=g))
print("random is a permutation", sorted(rand) == list(range(10)), len(rand))
with_repl = list(RandomSampler(ds, replacement=True, num_samples=25, generator=g))
print("with replacement", len(with_repl), all(0 <= i < 10 for i in with_repl))
subset = list(SubsetRandomSampler([1, 3, 5, 7], generator=g))
print("subset random", sorted(subset))
weights = [0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0]
weighted = list(WeightedRandomSampler(weights, 30, replacement=True, generator=g))
print("weighted", len(weighted), sorted(set(weighted)))
no_repl = list(WeightedRandomSampler(weights, 3, replacement=False, generator=g))
print("weighted without replacement", sorted(no_repl))
batches = list(BatchSampler(SequentialSampler(ds), batch_size=4, drop_last=False))
print("batches", batches)
print("drop_last", list(BatchSampler(range(10), batch_size=4, drop_last=True)))
print(
    "batch sampler len",
    len(BatchSampler(range(10), 3, False)),
    len(BatchSampler(range(10), 3, True)),
)

loader = DataLoader(
    ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1)
)
seen = []
for xb, yb in loader:
    seen.extend(xb.int().tolist())
    print("batch", tuple(xb.shape), tuple(yb.shape), xb.dtype)
print("shuffled epoch covers all", sorted(seen) == list(range(10)))
print("loader len", len(loader))

sampled = DataLoader(
    ds, batch_size=5, sampler=SubsetRandomSampler(range(0, 10, 2), generator=g)
)
xs = [x for xb, _ in sampled for x in xb.int().tolist()]
print("sampler loader", sorted(xs))

bs_loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 3, False))
print("batch_sampler sizes", [len(xb) for xb, _ in bs_loader])


def collate_pad(batch):
    """Pads variable-length rows to the longest one and returns their lengths."""
    rows = [torch.arange(int(x) % 4 + 1) for x, _ in batch]
    lengths = torch.tensor([len(r) for r in rows])
    out = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out, lengths


for padded, lengths in DataLoader(ds, batch_size=4, collate_fn=collate_pad):
    print("collate", tuple(padded.shape), lengths.tolist(), int(padded.sum()))


class Range(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


it = Range(3, 10)
print("main process", get_worker_info() is None)
for workers in [0, 2]:
    got = [int(v) for v in DataLoader(it, num_workers=workers)]
    print("iterable workers", workers, sorted(got), sum(got))
batched = [b.tolist() for b in DataLoader(Range(0, 7), batch_size=3)]
print("iterable batches", batched)

chain = ChainDataset([Range(0, 3), Range(10, 12)])
print("chain", list(chain))

tensors = TensorDataset(torch.arange(6).view(3, 2), torch.tensor([0, 1, 0]))
stack = StackDataset(tensors, torch.arange(3) * 10)
print(
    "stack",
    len(stack),
    [t.tolist() if t.dim() else int(t) for t in stack[1][0]],
    int(stack[1][1]),
)
named = StackDataset(a=torch.arange(3), b=torch.arange(3) * 2)
print("stack dict", sorted(named[2]), int(named[2]["b"]))
for batch in DataLoader(named, batch_size=2):
    print("stack batch", sorted(batch), batch["a"].tolist(), batch["b"].tolist())
    break

train, val = random_split(
    range(10), [7, 3], generator=torch.Generator().manual_seed(42)
)
print("split lengths", len(train), len(val))
print("split is a partition", sorted(list(train) + list(val)) == list(range(10)))
parts = random_split(
    Squares(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0)
)
print("fraction split", [len(p) for p in parts])
print("sums", sum(int(p[i][0]) for p in parts for i in range(len(p))))
