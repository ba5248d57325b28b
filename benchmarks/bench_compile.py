"""Blitz 4's training step at batch 4: torch.compile'd compat vs the core vs eager.

Run: python benchmarks/bench_compile.py [--steps 200] [--repeats 7] [--cpu-threads 1]

One run, side by side, after warm-up: ms/step (min and median over ``--repeats``
rounds, each running every candidate for ``--steps`` steps in turn, so noise on
the shared machine hits all alike) for the Blitz's ``Net`` with
``CrossEntropyLoss`` and ``SGD(lr=0.001, momentum=0.9)``, each step ending with
``loss.item()`` as the Blitz's loop does:

- compat compiled: the unchanged torch-style step under ``torch.compile``;
- core step: ``jax.jit(train.train_step)`` on the same batches, state donated;
- core jit_step: ``train.jit_step``, batches indexed from device-resident data;
- compat eager, and PyTorch eager (when torch imports).

Prints the ratios the compile issue targets: compiled / core (goal <= 1.3x) and
PyTorch eager / compiled (goal >= 3x). ``--cpu-threads 1`` runs XLA on one
thread, as ``jaxblitz-train`` does at batch 4 (PyTorch keeps its own threads).
"""

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_compat import eager_step, make_step, time_steps  # noqa: E402

BATCH, POOL = 4, 32


def core_steps(images, labels):
    from jaxblitz import train

    config = train.Config(dataset="digits")
    tx = train.make_optimizer(config)
    box = {"state": train.init_state(config, in_channels=3)}
    xs = [jnp.asarray(x) for x in images]
    ys = [jnp.asarray(y, jnp.int32) for y in labels]
    mask = jnp.ones(BATCH)
    step_fn = jax.jit(train.train_step, static_argnames="tx", donate_argnums=0)

    def step(i):
        box["state"], loss = step_fn(box["state"], xs[i % POOL], ys[i % POOL], mask, tx)
        return float(loss)

    data = (jnp.concatenate(xs), jnp.concatenate(ys))
    idx = jnp.arange(POOL * BATCH).reshape(POOL, BATCH)
    box2 = {"state": train.init_state(config, in_channels=3)}

    def jit_step(i):
        box2["state"], loss = train.jit_step(
            box2["state"], data, idx[i % POOL], mask, tx
        )
        return float(loss)

    return step, jit_step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--cpu-threads",
        type=int,
        default=None,
        help="XLA:CPU threads (runtime.set_cpu_threads; default: one per core)",
    )
    args = parser.parse_args()
    if args.cpu_threads:
        from jaxblitz import runtime

        runtime.set_cpu_threads(args.cpu_threads)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((POOL, BATCH, 3, 32, 32), dtype=np.float32)
    labels = rng.integers(0, 10, (POOL, BATCH))

    import jaxblitz.compat as ctorch
    import jaxblitz.compat.nn.functional as cF
    from jaxblitz.compat import nn as cnn
    from jaxblitz.compat import optim as coptim

    core, core_jit = core_steps(images, labels)
    steps = {
        "compat compiled": make_step(ctorch, cnn, cF, coptim, BATCH, True),
        "core train_step (jit)": core,
        "core jit_step": core_jit,
        "compat eager": eager_step(make_step(ctorch, cnn, cF, coptim, BATCH)),
    }
    try:
        import torch
        import torch.nn.functional as F
        from torch import nn, optim

        steps["torch eager"] = make_step(torch, nn, F, optim, BATCH)
    except ImportError:
        print("PyTorch is not installed: no torch ratio")
    counts = {
        name: max(args.steps // 10, 10) if name == "compat eager" else args.steps
        for name in steps
    }
    times = time_steps(steps, counts, args.repeats)
    for name, (best, median) in times.items():
        print(f"{name:22s}: min {best:7.3f}  median {median:7.3f} ms/step")
    compiled = times["compat compiled"][0]
    core_best = min(times["core train_step (jit)"][0], times["core jit_step"][0])
    print(f"compiled / core step (min): {compiled / core_best:.2f}x (goal <= 1.3x)")
    print(f"compat eager / compiled: {times['compat eager'][0] / compiled:.1f}x")
    if "torch eager" in times:
        print(f"torch threads: {torch.get_num_threads()}")
        speedup = times["torch eager"][0] / compiled
        print(f"torch eager / compiled: {speedup:.2f}x (goal >= 3x)")


if __name__ == "__main__":
    main()
