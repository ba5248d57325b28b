"""The "Changing default device" recipe, the reproducibility notes and the
torch.utils.benchmark recipe: torch.set_default_device and
torch.get_default_device, a `with torch.device(...)` block building a module,
torch.manual_seed / initial_seed and get_rng_state / set_rng_state,
torch.use_deterministic_algorithms (warn_only too) with cudnn's flags,
torch.Generator objects given to randn, rand, randint, randperm,
multinomial and a shuffling DataLoader (with the notes' seed_worker in two
workers), and benchmark.Timer's timeit, blocked_autorange and adaptive_autorange
over the recipe's batched dot products, with Compare.

Random draws differ between PyTorch and compat, so what is printed is what the
recipes promise: the same seed gives the same numbers, shapes and dtypes,
never the numbers themselves; nor times."""

import random

import numpy
import torch
import torch.utils.benchmark as benchmark
from torch.utils.data import DataLoader, TensorDataset

# -- default device --------------------------------------------------------------
print("default device", torch.get_default_device())
torch.set_default_device("cpu")
print(
    "after set",
    torch.get_default_device(),
    torch.ones(2).device,
    torch.arange(3).device,
    torch.empty(1).is_cpu,
)
with torch.device("cpu"):
    mod = torch.nn.Linear(4, 2)
    print("module in block", mod.weight.device, torch.zeros(1).device)
print("meta module", torch.nn.Linear(2, 2, device="meta").weight.device)
with torch.device("meta"):
    big = torch.nn.Linear(1000, 1000)
print("meta block", big.weight.is_meta, tuple(big.weight.shape), torch.ones(1).device)
torch.set_default_device(None)
print("reset", torch.get_default_device())

# -- seeds ------------------------------------------------------------------------
torch.manual_seed(0)
random.seed(0)
numpy.random.seed(0)  # noqa: NPY002 -- the notes' seeding
print("initial_seed", torch.initial_seed(), torch.random.initial_seed())
a = torch.rand(3)
torch.manual_seed(0)
b = torch.rand(3)
print("same seed same draws", torch.equal(a, b))
state = torch.get_rng_state()
c = torch.randn(2, 2)
torch.set_rng_state(state)
print("rng state", state.dtype, state.dim(), torch.equal(c, torch.randn(2, 2)))
print(
    "random module",
    torch.random.get_rng_state().dtype,
    torch.default_generator.initial_seed(),
)

# -- determinism ------------------------------------------------------------------
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
torch.use_deterministic_algorithms(True)
print(
    "deterministic",
    torch.are_deterministic_algorithms_enabled(),
    torch.is_deterministic_algorithms_warn_only_enabled(),
)
x = torch.arange(6.0).view(2, 3)
index = torch.tensor([0, 1, 0])
out = torch.zeros(2, 3).index_add_(0, torch.tensor([0, 1]), x)
print(
    "index_add under determinism",
    out.tolist(),
    torch.zeros(3).scatter_add_(0, index, torch.ones(3)).tolist(),
)
torch.use_deterministic_algorithms(True, warn_only=True)
print("warn only", torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False)
print(
    "off",
    torch.are_deterministic_algorithms_enabled(),
    torch.backends.cudnn.deterministic,
)

# -- generators ------------------------------------------------------------------
g = torch.Generator()
print("generator", g.device, g.manual_seed(2147483647) is g, g.initial_seed())
d1 = torch.randn(2, 3, generator=g)
g2 = torch.Generator().manual_seed(2147483647)
d2 = torch.randn(2, 3, generator=g2)
print("generators agree", torch.equal(d1, d2), d1.shape, d1.dtype)
saved = g.get_state()
p1 = torch.randperm(6, generator=g)
g.set_state(saved)
p2 = torch.randperm(6, generator=g)
print("randperm", p1.dtype, sorted(p1.tolist()), torch.equal(p1, p2))
r = torch.randint(0, 10, (5,), generator=g)
m = torch.multinomial(torch.tensor([0.0, 1.0, 3.0]), 4, replacement=True, generator=g)
print(
    "randint",
    r.dtype,
    bool(((r >= 0) & (r < 10)).all()),
    "multinomial",
    m.tolist().count(0),
    m.shape,
)
print("global untouched", torch.initial_seed())


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    numpy.random.seed(worker_seed)  # noqa: NPY002 -- the notes' seed_worker
    random.seed(worker_seed)


data = TensorDataset(torch.arange(12.0).view(12, 1), torch.arange(12))
orders = []
for _ in range(2):
    gen = torch.Generator()
    gen.manual_seed(0)
    loader = DataLoader(
        data,
        batch_size=4,
        shuffle=True,
        num_workers=2,
        worker_init_fn=seed_worker,
        generator=gen,
    )
    orders.append([y.tolist() for _, y in loader])
print(
    "loader",
    len(orders[0]),
    sorted(sum(orders[0], [])) == list(range(12)),
    "same order",
    orders[0] == orders[1],
)

# -- benchmark -------------------------------------------------------------------


def batched_dot_mul_sum(a, b):
    """Computes batched dot by multiplying and summing"""
    return a.mul(b).sum(-1)


def batched_dot_bmm(a, b):
    """Computes batched dot by reducing to ``bmm``"""
    a = a.reshape(-1, 1, a.shape[-1])
    b = b.reshape(-1, b.shape[-1], 1)
    return torch.bmm(a, b).flatten(-3)


x = torch.randn(100, 64)
assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))
t0 = benchmark.Timer(
    stmt="batched_dot_mul_sum(x, x)",
    setup="from __main__ import batched_dot_mul_sum",
    globals={"x": x},
)
t1 = benchmark.Timer(
    stmt="batched_dot_bmm(x, x)",
    globals={"x": x, "batched_dot_bmm": batched_dot_bmm},
    label="Batched dot",
    sub_label="[100, 64]",
    description="bmm",
    num_threads=1,
)
m0 = t0.timeit(20)
print(
    "timeit",
    type(m0).__name__,
    m0.number_per_run,
    len(m0.times),
    m0.mean > 0,
    m0.task_spec.stmt,
)
m1 = t1.blocked_autorange(min_run_time=0.05)
print(
    "blocked",
    type(m1).__name__,
    m1.label,
    m1.sub_label,
    m1.description,
    m1.num_threads,
    m1.median > 0,
    len(m1.times) >= 1,
)
m2 = t1.adaptive_autorange(max_run_time=0.05)
print("adaptive", type(m2).__name__, m2.iqr >= 0, m2.title)
results = []
for n in (1, 2):
    for f in ("batched_dot_mul_sum", "batched_dot_bmm"):
        results.append(
            benchmark.Timer(
                stmt=f"{f}(x, x)",
                globals={"x": x, f: globals()[f]},
                label="dots",
                sub_label=f"threads {n}",
                description=f,
                num_threads=n,
            ).timeit(5)
        )
compare = benchmark.Compare(results)
print("compare", type(compare).__name__, len(results), str(compare).count("dots") >= 1)
