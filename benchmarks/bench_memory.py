"""Long runs: resident memory per epoch over 30 epochs on ``digits``.

Run: python benchmarks/bench_memory.py [--epochs 30] [--batch-size 4]

Trains the Blitz's LeNet on the bundled ``digits`` twice, each in a fresh process
so neither's memory counts in the other's: in compat eager (``zero_grad``,
forward, ``backward``, ``step`` per batch through a ``DataLoader``), and in the
functional core (:func:`jaxblitz.train.fit`, one
compiled ``lax.scan`` per epoch), and prints the resident set size (RSS, from
``/proc/self/statm``) after every epoch. Memory should stay flat: nothing grows
with the autograd tape, the compilation cache or the data iterator. The growth
reported is from the end of epoch 2 (warm: everything compiled) to the last.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compat import blitz_net  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def compat_epochs(train_set, epochs: int, batch_size: int, lr: float, report) -> None:
    import jaxblitz.compat as torch
    import jaxblitz.compat.nn.functional as F
    from jaxblitz.compat import nn, optim
    from jaxblitz.compat.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    net = blitz_net(torch, nn, F, in_channels=1)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    dataset = TensorDataset(
        torch.from_numpy(train_set.images), torch.from_numpy(train_set.labels)
    )
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    for epoch in range(epochs):
        t0, total, n = time.perf_counter(), 0.0, 0
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels)
            loss.backward()
            optimizer.step()
            total, n = total + loss.item(), n + 1
        report("compat eager", epoch, total / n, time.perf_counter() - t0)


def core_epochs(train_set, epochs: int, batch_size: int, lr: float, report) -> None:
    from jaxblitz import train

    config = train.Config(dataset="digits", batch_size=batch_size, lr=lr, epochs=epochs)
    # One fit per epoch would re-create the device copy of the data; fit's own
    # on_epoch_end hook reports from inside the one call instead.
    t = [time.perf_counter()]

    def on_epoch_end(epoch, state, metrics):
        report("core scan", epoch, metrics["loss"], time.perf_counter() - t[0])
        t[0] = time.perf_counter()
        return {}

    train.fit(config, train_set, log=lambda line: None, on_epoch_end=on_epoch_end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.001)  # the Blitz's SGD
    parser.add_argument("--face", choices=FACES, help="run one face in this process")
    args = parser.parse_args()
    if args.face is None:  # each face in its own process
        for face in FACES:
            flags = [f"--epochs={args.epochs}", f"--batch-size={args.batch_size}"]
            flags.append(f"--lr={args.lr}")
            cmd = [sys.executable, __file__, *flags, "--face", face]
            subprocess.run(cmd, check=True)
        return

    from jaxblitz import data

    train_set = data.load("digits", "train")
    rows: dict[str, list[float]] = {}

    def report(face: str, epoch: int, loss: float, wall: float) -> None:
        gc.collect()
        mib = rss_mib()
        rows.setdefault(face, []).append(mib)
        print(
            f"{face:12s} epoch {epoch + 1:2d}: loss {loss:.3f}, RSS {mib:7.1f} MiB, "
            f"{wall:5.1f} s",
            flush=True,
        )

    print(f"{args.face}: start RSS {rss_mib():.1f} MiB", flush=True)
    FACES[args.face](train_set, args.epochs, args.batch_size, args.lr, report)
    for face, mib in rows.items():
        mid = len(mib) // 2
        print(
            f"{face}: RSS epoch 1 {mib[0]:.1f} MiB, epoch 2 {mib[min(1, mid)]:.1f}, "
            f"epoch {mid + 1} {mib[mid]:.1f}, epoch {len(mib)} {mib[-1]:.1f}; growth "
            f"epoch 2->{len(mib)} {mib[-1] - mib[min(1, mid)]:+.1f} MiB, second half "
            f"{mib[-1] - mib[mid]:+.1f} MiB, largest epoch-to-epoch "
            f"{np.diff(mib[1:]).max() if len(mib) > 2 else 0.0:+.1f} MiB\n"
        )


FACES = {"compat": compat_epochs, "core": core_epochs}


if __name__ == "__main__":
    main()
