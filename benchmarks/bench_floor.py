"""The matmul floor of a training step: the Blitz Net's matmuls and nothing else.

Run: python benchmarks/bench_floor.py [--repeats 5] [--chunks 4 8 16 64]

Times, inside one compiled ``lax.scan``, only the matrix products a training step
of the Blitz's Net needs: conv1 forward and weight gradient (its input gradient is
not needed), conv2 forward, weight and input gradients, and the three linear
layers' forward, weight and input gradients -- 3.2 MFLOP per image. The operands
are built once and stay in cache (one chunk of images, reused every iteration;
the weights change each iteration so nothing is hoisted), in the two layouts the
library uses:

- ``nhwc``: ``patches (images*Ho*Wo, k*k*C) @ W (k*k*C, O)`` (the NHWC
  alternative, measured slower in whole steps);
- ``cm`` (channel-major): ``W (O, C*k*k) @ patches (C*k*k, images*Ho*Wo)``
  (``lenet``'s training path, and conv2 in inference; inference builds conv1 from
  row patches, ``kernels.conv2d_rows_cm``, not timed here).

A real step also builds the patches, pools, takes the loss and updates the
weights, none of which count as FLOPs, so the figures here bound from above what
any formulation that uses XLA's matmuls at these shapes can reach on this
machine. Prints images/s, GFLOP/s and the fraction of the machine's 2048x2048
matmul rate.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from run import matmul_gflops  # noqa: E402

CONV1 = 784 * 75 * 6 * 2  # FLOP per image of one conv1 product (28x28 outputs)
CONV2 = 100 * 150 * 16 * 2  # conv2 (10x10 outputs)
FC = (400 * 120 + 120 * 84 + 84 * 10) * 2  # the three linear layers, forward
STEP_FLOP = 2 * CONV1 + 3 * CONV2 + 3 * FC  # about 3.2 MFLOP per image


def _operands(layout: str, chunk: int, rng: np.random.Generator):
    def normal(*shape):
        return jnp.asarray(rng.standard_normal(shape, dtype=np.float32))

    if layout == "nhwc":
        patches = (normal(chunk * 784, 75), normal(chunk * 100, 150))
        weights = {"conv1": normal(75, 6), "conv2": normal(150, 16)}
    else:
        patches = (normal(75, chunk * 784), normal(150, chunk * 100))
        weights = {"conv1": normal(6, 75), "conv2": normal(16, 150)}
    weights.update(fc1=normal(120, 400), fc2=normal(84, 120), fc3=normal(10, 84))
    return patches, normal(chunk, 400), weights


def _products(layout: str, patches, x, w) -> dict:
    """The step's matmuls; returns a gradient-shaped array per weight."""
    p1, p2 = patches
    if layout == "nhwc":
        g1, g2 = (p1 @ w["conv1"]) * 0.5, (p2 @ w["conv2"]) * 0.5
        d_p2 = g2 @ w["conv2"].T  # conv2's input gradient (as patches)
        grads = {"conv1": p1.T @ g1, "conv2": p2.T @ g2}
    else:
        g1, g2 = (w["conv1"] @ p1) * 0.5, (w["conv2"] @ p2) * 0.5
        d_p2 = w["conv2"].T @ g2
        grads = {"conv1": g1 @ p1.T, "conv2": g2 @ p2.T}
    h1 = x @ w["fc1"].T
    h2 = h1 @ w["fc2"].T
    d3 = (h2 @ w["fc3"].T) * 0.5
    d2 = d3 @ w["fc3"]
    d1 = d2 @ w["fc2"]
    d_x = d1 @ w["fc1"]  # the flattened conv output's gradient
    grads.update(fc1=d1.T @ x, fc2=d2.T @ h1, fc3=d3.T @ h2)
    # Keep the input gradients alive (XLA would drop unused products).
    grads["conv2"] = grads["conv2"] + 1e-9 * (jnp.sum(d_p2) + jnp.sum(d_x))
    return grads


def measure(layout: str, chunk: int, repeats: int, images: int = 2048) -> float:
    """Best seconds per image for the step's matmuls alone."""
    patches, x, weights = _operands(layout, chunk, np.random.default_rng(0))
    steps = max(images // chunk, 1)

    def body(w, _):
        grads = _products(layout, patches, x, w)
        return jax.tree.map(lambda a, g: a - 1e-9 * g, w, grads), None

    run = jax.jit(lambda w: jax.lax.scan(body, w, None, length=steps)[0])
    jax.block_until_ready(run(weights))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(weights))
        best = min(best, (time.perf_counter() - t0) / (steps * chunk))
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chunks", type=int, nargs="+", default=[4, 8, 16, 64])
    args = parser.parse_args(argv)
    peak = matmul_gflops(args.repeats)
    print(f"machine matmul: {peak:.0f} GFLOP/s (2048x2048 float32)")
    print(f"the step's matmuls: {STEP_FLOP / 1e6:.2f} MFLOP per image")
    print("layout  images/chunk     us/image     images/s   GFLOP/s   % of peak")
    for chunk in args.chunks:
        for layout in ("nhwc", "cm"):
            seconds = measure(layout, chunk, args.repeats)
            gflops = STEP_FLOP / seconds / 1e9
            print(
                f"{layout:6s}  {chunk:12d}  {seconds * 1e6:11.1f}  {1 / seconds:11,.0f}"
                f"  {gflops:8.1f}  {gflops / peak:9.0%}"
            )


if __name__ == "__main__":
    main()
