"""Blitz 4's training step, compat eager vs PyTorch eager, in one run.

Run: python benchmarks/bench_compat.py [--steps 300] [--repeats 5] [--batches 4,32]

The Blitz's CIFAR-10 ``Net`` at batch 4 (or at each of ``--batches`` in turn, with
``--steps`` scaled to about as many images a round): ``zero_grad``, forward,
``CrossEntropyLoss``, ``backward``, ``SGD(lr=0.001, momentum=0.9).step()`` and
``loss.item()``, on CIFAR-shaped random batches. The same script runs for both
libraries (only the imports differ); prints ms/step (min and median of
``--repeats`` rounds in which they take turns) and the ratio compat / PyTorch.
Beside them, the core's own jitted step with one ``float(loss)`` a step, the
Blitz loop's sync: the ceiling of any front end over this engine with that loop.
Where JAX runs on a GPU, both run there, as the Blitz's "Training on GPU" does
(PyTorch on CUDA when it is a CUDA build).
"""

import argparse
import statistics
import time

import numpy as np


def blitz_net_class(torch, nn, F, in_channels: int = 3):
    """The Blitz's ``Net`` class, written once for torch and compat alike (and
    for the tests: ``tests/compat/blitz_net.py``, ``tests/test_models.py``)."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(in_channels, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return Net


def blitz_net(torch, nn, F, in_channels: int = 3):
    """The Blitz's ``Net()``, for torch or compat."""
    return blitz_net_class(torch, nn, F, in_channels)()


def device_for(torch) -> str:
    """Where the Blitz's step runs for ``torch`` (PyTorch or compat): "cuda" when
    JAX runs on a GPU and ``torch`` sees one (compat's cuda is JAX's GPU; PyTorch
    must be a CUDA build), else "cpu", so the two share a kind of device."""
    import jax

    gpu = jax.default_backend() == "gpu" and torch.cuda.is_available()
    return "cuda" if gpu else "cpu"


def make_step(
    torch, nn, F, optim, batch: int = 4, compiled: bool = False, device: str = "cpu"
):
    """The Blitz's training step on ``device`` ("cuda": Blitz 4's "Training on
    GPU", the net and the batches moved there with ``.to(device)``)."""
    net = blitz_net(torch, nn, F).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    rng = np.random.default_rng(0)
    images = [
        torch.tensor(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)).to(
            device
        )
        for _ in range(64)
    ]
    labels = [torch.tensor(rng.integers(0, 10, batch)).to(device) for _ in range(64)]

    def train_step(inputs, targets):
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss

    if compiled:  # jaxblitz.compat.compile: the same body as one XLA program
        train_step = torch.compile(train_step)

    def step(i):
        return train_step(images[i % 64], labels[i % 64]).item()

    step.net = net  # for callers that also time inference
    step.batch = lambda i: (images[i % 64], labels[i % 64])
    step.train_step = train_step  # the CompiledFunction when compiled
    step.settle = lambda: None
    if torch.__name__.startswith("jaxblitz"):
        # compat compiles a repeated backward graph as one program on a spare
        # core (compat/_eager/_fused.py): warm-up waits for it, as a long
        # training loop would have it.
        from jaxblitz.compat._eager import _fused

        step.settle = _fused.wait
    return step


def in_mode(step, lazy_on: bool):
    """``step`` run with compat's lazy execution on or off, whatever the default
    (lazy on a GPU or TPU, eager on the CPU), and the mode left as it was around
    it, so the candidates can take turns in one process."""
    from jaxblitz.compat import lazy

    def run(i):
        was = lazy.is_lazy()
        lazy.set_lazy(lazy_on)
        try:
            return step(i)
        finally:
            lazy.set_lazy(was)

    run.settle = step.settle
    for name in ("net", "batch", "train_step"):
        if hasattr(step, name):
            setattr(run, name, getattr(step, name))
    return run


def lazy_step(step):
    """``step`` run lazily (see :func:`in_mode`)."""
    return in_mode(step, True)


def eager_step(step):
    """``step`` run eagerly (see :func:`in_mode`)."""
    return in_mode(step, False)


def core_step(batch: int):
    """The core's own jitted training step (``jaxblitz.train.train_step``, the
    Blitz's net, loss and SGD with momentum, state donated) under the Blitz
    loop's one sync a step (``float(loss)``, as ``loss.item()``): what any
    front end over this engine can reach with that loop, its Python aside."""
    import functools

    import jax

    from jaxblitz import train

    config = train.Config(batch_size=batch)
    tx = train.make_optimizer(config)
    box = {"state": train.init_state(config, 3)}
    run = jax.jit(functools.partial(train.train_step, tx=tx), donate_argnums=0)
    rng = np.random.default_rng(0)
    images = [
        jax.device_put(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32))
        for _ in range(64)
    ]
    labels = [
        jax.device_put(rng.integers(0, 10, batch).astype(np.int32)) for _ in range(64)
    ]
    mask = jax.device_put(np.ones(batch, np.float32))

    def step(i):
        box["state"], loss = run(box["state"], images[i % 64], labels[i % 64], mask)
        return float(loss)

    return step


def programs_per_step(step, steps: int = 8) -> float:
    """XLA programs ``step`` launches, averaged over ``steps`` warm steps: in
    eager mode every compiled call compat makes (``lazy.jit``) and its fused
    backward, in lazy mode every graph run (a sync) and call run at once."""
    from jaxblitz.compat import lazy
    from jaxblitz.compat._eager import _fused

    count = [0]
    call, fused = lazy.jit.__call__, _fused._program

    def counted(self, *args, **kwargs):
        if not lazy.is_lazy():
            count[0] += 1
        return call(self, *args, **kwargs)

    def counted_fused(*args, **kwargs):
        count[0] += 1
        return fused(*args, **kwargs)

    lazy.jit.__call__, _fused._program = counted, counted_fused
    lazy.metrics(reset=True)
    try:
        for i in range(steps):
            step(i)
    finally:
        lazy.jit.__call__, _fused._program = call, fused
    done = lazy.metrics(reset=True)
    return (count[0] + done.get("syncs", 0) + done.get("eager calls", 0)) / steps


WARM_STEPS = 64  # past compat's fused-backward threshold (_fused.REPEATS)


def warm_up(step) -> None:
    """Run ``step`` to its steady state: compilation, caches, fused backward."""
    for i in range(WARM_STEPS):
        step(i)
    getattr(step, "settle", lambda: None)()
    for i in range(8):
        step(i)


def time_steps(steps: dict, counts: dict, repeats: int) -> dict:
    """min and median ms/step of each step function, measured round-robin.

    Each repeat runs every candidate once in turn, so a noisy stretch of the
    shared machine hits all of them alike and the ratios stay comparable.
    """
    for step in steps.values():
        warm_up(step)
    runs = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            for i in range(counts[name]):
                step(i)
            runs[name].append((time.perf_counter() - start) / counts[name] * 1e3)
    return {name: (min(r), statistics.median(r)) for name, r in runs.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--batches", default="4", help="comma-separated batch sizes (default: 4)"
    )
    args = parser.parse_args()
    for batch in (int(b) for b in args.batches.split(",")):
        # about as many images a round at every batch size, at least 20 steps
        compare(batch, max(20, args.steps * 4 // batch), args.repeats)


def compare(batch: int, count: int, repeats: int) -> None:
    import jaxblitz.compat as ctorch
    import jaxblitz.compat.nn.functional as cF
    from jaxblitz.compat import nn as cnn
    from jaxblitz.compat import optim as coptim

    device = device_for(ctorch)
    steps = {
        "compat eager": eager_step(
            make_step(ctorch, cnn, cF, coptim, batch, False, device)
        )
    }
    steps["compat lazy"] = lazy_step(
        make_step(ctorch, cnn, cF, coptim, batch, False, device)
    )
    try:
        import torch
        import torch.nn.functional as F
        from torch import nn, optim

        tdevice = device_for(torch)
        steps["torch eager"] = make_step(torch, nn, F, optim, batch, False, tdevice)
    except ImportError:
        tdevice = None
        print("PyTorch is not installed: no ratio")
    steps["core step"] = core_step(batch)
    times = time_steps(steps, dict.fromkeys(steps, count), repeats)
    programs = {n: programs_per_step(steps[n]) for n in ("compat eager", "compat lazy")}
    on = f"compat on {device}" + (f", PyTorch on {tdevice}" if tdevice else "")
    print(f"batch {batch} ({on}):")
    for name, (best, median) in times.items():
        launched = f"  ({programs[name]:g} programs/step)" if name in programs else ""
        print(f"  {name:13s}: min {best:.3f}  median {median:.3f} ms/step{launched}")
    if "torch eager" in times:
        ratio = times["compat eager"][0] / times["torch eager"][0]
        median = times["compat eager"][1] / times["torch eager"][1]
        print(f"  torch threads: {torch.get_num_threads()}")
        print(f"  compat / torch: {ratio:.2f}x (min), {median:.2f}x (median)")
        lazy_ratio = times["torch eager"][0] / times["compat lazy"][0]
        print(f"  compat lazy speed-up over torch: {lazy_ratio:.2f}x (min)")
        core = times["torch eager"][0] / times["core step"][0]
        print(
            f"  core step speed-up over torch: {core:.2f}x (min): the ceiling of "
            "any front end over this engine with one sync a step"
        )


if __name__ == "__main__":
    main()
