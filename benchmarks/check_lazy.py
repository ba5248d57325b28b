"""compat's lazy execution against its eager mode on this machine's device.

Run: python benchmarks/check_lazy.py [--epochs N]

Trains Blitz 4's Net on the bundled digits (32x32 RGB, batch 4, SGD with
momentum, the Blitz's loop) twice from the same seed, on compat's ``cuda``
device where JAX has a GPU (else the CPU): once eagerly, once lazily. Prints
each mode's final running loss, test accuracy, time and programs launched per
step, and the largest difference between the two modes' weights. XLA may
compile a sum with the op that feeds it and add in another order (on a GPU
also pick other convolution kernels), so last bits move, and over hundreds of
SGD steps the two runs drift apart as two GPUs' can: the test accuracies must
agree within one point. Exits 1 when they do not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_compat import blitz_net, device_for  # noqa: E402


def train(lazy_on: bool, epochs: int) -> dict:
    import jaxblitz.compat as torch
    import jaxblitz.compat.nn.functional as F
    from jaxblitz.compat import lazy, nn, optim
    from jaxblitz.compat.vision import datasets, transforms

    lazy.set_lazy(False)
    device = device_for(torch)
    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)]
    )
    trainset = datasets.Digits(train=True, transform=transform)
    testset = datasets.Digits(train=False, transform=transform)
    load = torch.utils.data.DataLoader
    trainloader = load(trainset, batch_size=4, shuffle=True)
    testloader = load(testset, batch_size=4, shuffle=False)
    torch.manual_seed(0)
    net = blitz_net(torch, nn, F).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    lazy.set_lazy(lazy_on)
    lazy.metrics(reset=True)
    steps, losses = 0, []
    start = time.perf_counter()
    for _ in range(epochs):
        for inputs, labels in trainloader:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            steps += 1
    seconds = time.perf_counter() - start
    done = lazy.metrics(reset=True)
    correct = total = 0
    with torch.no_grad():
        for images, labels in testloader:
            predicted = net(images.to(device)).argmax(1)
            correct += (predicted == labels.to(device)).sum().item()
            total += labels.size(0)
    lazy.set_lazy(False)
    weights = {k: v.cpu().numpy().copy() for k, v in net.state_dict().items()}
    return {
        "device": device,
        "loss": float(np.mean(losses[-100:])),
        "accuracy": 100.0 * correct / total,
        "ms/step": seconds / steps * 1e3,
        "syncs/step": done.get("syncs", 0) / steps,
        "weights": weights,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)
    runs = {name: train(name == "lazy", args.epochs) for name in ("eager", "lazy")}
    for name, run in runs.items():
        print(
            f"{name:5s} on {run['device']}: running loss {run['loss']:.4f}, "
            f"accuracy {run['accuracy']:.1f} %, {run['ms/step']:.2f} ms/step "
            f"(data loading included), {run['syncs/step']:.2f} syncs/step"
        )
    eager, lazy = runs["eager"]["weights"], runs["lazy"]["weights"]
    diff = max(float(np.abs(eager[k] - lazy[k]).max()) for k in eager)
    gap = abs(runs["eager"]["accuracy"] - runs["lazy"]["accuracy"])
    same = gap <= 1.0
    print(f"largest weight difference, lazy vs eager: {diff:.3g}")
    print(f"accuracies {'agree' if same else 'DIFFER'}: {gap:.1f} points apart")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
