"""Where a Blitz training step's time goes, phase by phase: compat eager, compat
lazy and PyTorch, in one run.

Run: python benchmarks/bench_phases.py [--batch 4] [--steps 400] [--profile N]

Each phase of the Blitz's step (``zero_grad``, the forward, the loss,
``backward``, ``optimizer.step()``, ``loss.item()``) is timed on its own, step
after step, and the medians are printed in microseconds. In lazy mode the first
five phases only record work and ``item`` runs the step's one program, so the
split says how much of a step is compat's Python and how much is running the
program (on a CPU: computing it; on a GPU: launching it and waiting). The three
candidates take turns in rounds. ``--profile N`` prints compat's N most costly
functions (cProfile, own time) over the lazy steps' recording phases.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_compat import blitz_net, device_for  # noqa: E402

PHASES = ("zero_grad", "forward", "loss", "backward", "step", "item")


def make(torch, nn, F, optim, batch: int):
    """The Blitz's net, loss and optimizer on the step's device, and batches."""
    device = device_for(torch)
    net = blitz_net(torch, nn, F).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    rng = np.random.default_rng(0)
    shape = (batch, 3, 32, 32)
    xs = [
        torch.tensor(rng.standard_normal(shape, dtype=np.float32)).to(device)
        for _ in range(8)
    ]
    ys = [torch.tensor(rng.integers(0, 10, batch)).to(device) for _ in range(8)]

    def phases(i: int, profile=None) -> list[float]:
        """One step, timed phase by phase (seconds)."""
        t = [time.perf_counter()]
        if profile is not None:
            profile.enable()
        optimizer.zero_grad()
        t.append(time.perf_counter())
        out = net(xs[i % 8])
        t.append(time.perf_counter())
        loss = criterion(out, ys[i % 8])
        t.append(time.perf_counter())
        loss.backward()
        t.append(time.perf_counter())
        optimizer.step()
        t.append(time.perf_counter())
        if profile is not None:
            profile.disable()
        loss.item()
        t.append(time.perf_counter())
        return [b - a for a, b in zip(t, t[1:], strict=False)]

    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0)
    args = parser.parse_args()

    import jaxblitz.compat as ctorch
    from jaxblitz.compat import lazy, nn, optim
    from jaxblitz.compat.nn import functional as F

    candidates = {}
    for name, on in (("compat eager", False), ("compat lazy", True)):
        lazy.set_lazy(on)
        candidates[name] = (on, make(ctorch, nn, F, optim, args.batch))
    try:
        import torch

        candidates["PyTorch"] = (
            None,
            make(torch, torch.nn, torch.nn.functional, torch.optim, args.batch),
        )
        print(f"PyTorch {torch.__version__} on {device_for(torch)}")
    except ImportError:
        print("PyTorch is not installed: compat only")
    import jax

    print(f"jax {jax.__version__} on {jax.default_backend()}, batch {args.batch}")

    times = {name: [] for name in candidates}
    for _ in range(args.rounds):
        for name, (on, phases) in candidates.items():
            if on is not None:
                lazy.set_lazy(on)
            for i in range(args.steps // 4):  # warm: compiles, caches
                phases(i)
            times[name].extend(phases(i) for i in range(args.steps))
    lazy.set_lazy("auto")

    width = max(map(len, candidates))
    print(f"{'us/step (median)':<{width}} " + " ".join(f"{p:>9}" for p in PHASES))
    for name, rows in times.items():
        med = [statistics.median(col) * 1e6 for col in zip(*rows, strict=True)]
        total = statistics.median(sum(r) for r in rows) * 1e6
        cells = " ".join(f"{m:9.0f}" for m in med)
        print(f"{name:<{width}} {cells}  total {total:7.0f}")

    if args.profile:
        lazy.set_lazy(True)
        on, phases = candidates["compat lazy"]
        profile = cProfile.Profile()
        for i in range(args.steps):
            phases(i, profile)
        lazy.set_lazy("auto")
        print(f"\ncompat lazy, recording phases, {args.steps} steps:")
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
