"""Blitz 4's start: time to the first finished training step in a fresh process.

Run: python benchmarks/bench_startup.py [--repeats 3]

What a user waits for before their script's first step is done: the import, the
Blitz's CIFAR ``Net()``, ``optim.SGD``, and one step at batch 4 (zero_grad,
forward, loss, backward, step, ``loss.item()``), each in a new Python process.
PyTorch eager against compat cold (an empty XLA cache folder: every op's program
compiled), cold without the background warm-ups (``JAXBLITZ_WARM=0``: the
backward's and the optimizer's programs compiled when first called, on the main
thread; see ``jaxblitz.compat._eager._warm``) and warm (a second process, the programs
read from that folder, as a user's second run is), and compat's lazy execution
cold and warm (``JAXBLITZ_COMPAT_LAZY=1``: the step is one program, compiled at
``loss.item()``). The candidates take turns,
round by round; medians. Prints each phase and the ratios to PyTorch.

jaxblitz's modules are byte-compiled first, as ``pip install`` of a wheel does
(and as Python does on a first import unless ``PYTHONDONTWRITEBYTECODE`` is set,
as it is on this project's machines): PyTorch's were at its install, and
compiling jaxblitz's ~110 source files again in every process added ~0.24 s to
compat's import here.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
if sys.argv[1] == "torch":
    import torch, torch.nn as nn, torch.nn.functional as F
else:
    import jaxblitz.compat as torch
    import jaxblitz.compat.nn as nn
    import jaxblitz.compat.nn.functional as F
t1 = time.perf_counter()
sys.path.insert(0, sys.argv[2])  # the Blitz's Net, as the other benchmarks build it
from bench_compat import blitz_net_class
Net = blitz_net_class(torch, nn, F)
skipped = time.perf_counter() - t1  # not the user's: their script defines Net
t1 += skipped
net = Net()
t2 = time.perf_counter()
optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(4, 3, 32, 32), torch.tensor([1, 2, 3, 4])
optimizer.zero_grad()
loss = criterion(net(x), y)
loss.backward()
optimizer.step()
loss.item()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - skipped - t0, "model": t2 - t1,
                  "first_step": t3 - t2, "total": t3 - t0 - skipped}))
"""


def run(lib: str, cache: str, warm: str = "1", lazy: str = "0") -> dict:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        JAXBLITZ_XLA_CACHE=cache,
        JAXBLITZ_WARM=warm,
        JAXBLITZ_COMPAT_LAZY=lazy,
    )
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, lib, os.path.dirname(os.path.abspath(__file__))],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    spec = importlib.util.find_spec("jaxblitz")
    if spec is None or not spec.submodule_search_locations:
        parser.error("jaxblitz is not installed: pip install -e .")
    compileall.compile_dir(spec.submodule_search_locations[0], quiet=1)
    results: dict[str, list[dict]] = {
        "torch": [],
        "compat cold": [],
        "compat cold, JAXBLITZ_WARM=0": [],
        "compat warm": [],
        "compat lazy cold": [],
        "compat lazy warm": [],
    }
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            results["compat cold, JAXBLITZ_WARM=0"].append(run("compat", cache, "0"))
        with tempfile.TemporaryDirectory() as cache:
            results["torch"].append(run("torch", cache))
            results["compat cold"].append(run("compat", cache))
            results["compat warm"].append(run("compat", cache))
        with tempfile.TemporaryDirectory() as cache:
            results["compat lazy cold"].append(run("compat", cache, lazy="1"))
            results["compat lazy warm"].append(run("compat", cache, lazy="1"))
    phases = ("import", "model", "first_step", "total")
    print(f"| who | {' | '.join(phases)} (s, median) | x PyTorch's total |")
    print("| --- |" + " ---: |" * (len(phases) + 1))
    torch_total = statistics.median(r["total"] for r in results["torch"])
    for who, runs in results.items():
        medians = [statistics.median(r[p] for r in runs) for p in phases]
        cells = " | ".join(f"{m:.2f}" for m in medians)
        print(f"| {who} | {cells} | {medians[-1] / torch_total:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
