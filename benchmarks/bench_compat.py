"""Blitz 4's training step, compat eager vs PyTorch eager, in one run.

Run: python benchmarks/bench_compat.py [--steps 300] [--repeats 5]

The Blitz's CIFAR-10 ``Net`` at batch 4: ``zero_grad``, forward,
``CrossEntropyLoss``, ``backward``, ``SGD(lr=0.001, momentum=0.9).step()`` and
``loss.item()``, on CIFAR-shaped random batches. The same script runs for both
libraries (only the imports differ); prints ms/step (best of ``--repeats``) and
the ratio compat / PyTorch.
"""

import argparse
import time

import numpy as np


def make_step(torch, nn, F, optim, batch: int = 4, compiled: bool = False):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
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

    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    rng = np.random.default_rng(0)
    images = [
        torch.tensor(rng.standard_normal((batch, 3, 32, 32), dtype=np.float32))
        for _ in range(64)
    ]
    labels = [torch.tensor(rng.integers(0, 10, batch)) for _ in range(64)]

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
    return step


def time_steps(step, steps, repeats):
    for i in range(50):  # warm-up: compilation / caches
        step(i)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(steps):
            step(i)
        best = min(best, (time.perf_counter() - start) / steps)
    return best * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import jaxblitz.compat as ctorch
    import jaxblitz.compat.nn.functional as cF
    from jaxblitz.compat import nn as cnn
    from jaxblitz.compat import optim as coptim

    compat_ms = time_steps(make_step(ctorch, cnn, cF, coptim), args.steps, args.repeats)
    print(f"compat eager : {compat_ms:.3f} ms/step")
    try:
        import torch
        import torch.nn.functional as F
        from torch import nn, optim
    except ImportError:
        print("PyTorch is not installed: no ratio")
        return
    torch_ms = time_steps(make_step(torch, nn, F, optim), args.steps, args.repeats)
    print(
        f"torch eager  : {torch_ms:.3f} ms/step "
        f"(torch threads: {torch.get_num_threads()})"
    )
    print(f"ratio compat/torch: {compat_ms / torch_ms:.2f}x")


if __name__ == "__main__":
    main()
