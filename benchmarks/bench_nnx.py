"""Blitz 4's training, the Flax NNX face vs the functional core, in one run.

Run: python benchmarks/bench_nnx.py [--batches 4 128] [--repeats 5]

Per batch size, images/s of:

- ``core fit`` / ``nnx fit``: :func:`jaxblitz.train.fit` and
  :func:`jaxblitz.nnx.fit` (the Net split once, the core's compiled ``lax.scan``
  epoch), the second epoch of each (the first compiles);
- ``core step``: the core's Python loop over its jitted step
  (``train.jit_step``);
- ``nnx jit`` / ``nnx cached``: a Python loop over :func:`jaxblitz.nnx.train_step`
  (``nnx.jit``, ``nnx.Optimizer``), called plainly and through
  ``nnx.cached_partial`` (Flax's performance guide).

The candidates take turns in every round, so the shared machine's noise hits all
alike; prints medians and each one's ratio to ``core fit`` and ``core step``.
"""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from jaxblitz import nnx as jnnx
from jaxblitz import train
from jaxblitz.data import Dataset, epoch_order


def dataset(rows: int) -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset(
        rng.uniform(-1, 1, (rows, 3, 32, 32)).astype(np.float32),
        rng.integers(0, 10, rows).astype(np.int32),
        tuple("abcdefghij"),
    )


def candidates(batch: int, rows: int) -> dict:
    """name -> a function that trains one epoch of ``rows`` images, returns
    images/s."""
    data = dataset(rows)
    config = train.Config(dataset="x", batch_size=batch, epochs=2, log_every=10**9)
    quiet = dict(log=lambda s: None)

    def core_fit():
        return train.fit(config, data, **quiet)[1][1]["images_per_s"]

    def nnx_fit():
        return jnnx.fit(config, data, **quiet)[1][1]["images_per_s"]

    idx, mask = epoch_order(train.data_key(config, 0), rows, batch)
    tx = train.make_optimizer(config)
    images, labels = jnp.asarray(data.images), jnp.asarray(data.labels)
    batches = [
        (images[i], labels[i], jnp.asarray(m)) for i, m in zip(idx, mask, strict=True)
    ]
    state = [train.init_state(config, 3)]

    def core_step():
        s, t0 = state[0], time.perf_counter()
        for i in range(len(idx)):
            s, loss = train.jit_step(s, (images, labels), idx[i], mask[i], tx)
        loss.block_until_ready()
        state[0] = s
        return rows / (time.perf_counter() - t0)

    net = jnnx.init_net(config, 3)
    optimizer = jnnx.make_optimizer(net, config)
    with nnx.set_graph_mode(True), nnx.set_graph_updates(True):
        cached = nnx.cached_partial(jnnx.train_step, net, optimizer)

    def nnx_jit():
        t0 = time.perf_counter()
        for x, y, m in batches:
            loss = jnnx.train_step(net, optimizer, x, y, m)
        loss.block_until_ready()
        return rows / (time.perf_counter() - t0)

    def nnx_cached():
        t0 = time.perf_counter()
        for x, y, m in batches:
            loss = cached(x, y, m)
        loss.block_until_ready()
        return rows / (time.perf_counter() - t0)

    return {
        "core fit": core_fit,
        "nnx fit": nnx_fit,
        "core step": core_step,
        "nnx jit": nnx_jit,
        "nnx cached": nnx_cached,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, nargs="+", default=[4, 128])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--rows", type=int, default=None, help="images per epoch")
    args = p.parse_args()
    print(f"jax {jax.__version__}, {jax.default_backend()}, {args.repeats} rounds")
    for batch in args.batches:
        rows = args.rows or (2000 if batch <= 8 else 128 * 40)
        runs = candidates(batch, rows)
        for fn in runs.values():  # compile
            fn()
        rates = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, fn in runs.items():
                rates[name].append(fn())
        med = {name: statistics.median(r) for name, r in rates.items()}
        print(f"\nbatch {batch} ({rows} images per round)")
        print("| who | images/s (median) | best | x core fit | x core step |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, r in rates.items():
            print(
                f"| {name} | {med[name]:,.0f} | {max(r):,.0f} | "
                f"{med[name] / med['core fit']:.2f} | "
                f"{med[name] / med['core step']:.2f} |"
            )


if __name__ == "__main__":
    main()
