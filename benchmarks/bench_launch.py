"""Where a small step's time goes besides arithmetic: launches, indexing, layouts.

Run: python benchmarks/bench_launch.py [--repeats 5] [--out launch.json]

Written for the GPU leads of BENCHMARKS.md ("On a GPU"), and runs on any backend.
Everything below takes turns round by round (``run.round_robin``), so the ratios
inside one run are fair:

- **train, batch 4, us/step**: ``scan`` (the epoch as one program, what
  ``jaxblitz-train`` runs); ``step`` (``train.run_loop``: a jitted step per batch,
  each step's indices handed over from host memory); ``step_device_idx`` (the
  same step, the indices sliced from a device array each step, as ``run_loop``
  did before: two eager launches a step); compat eager, compat compiled and
  PyTorch's Blitz loop (on CUDA where JAX has a GPU); ``compiled_nosync``: the
  compiled step without the Blitz's ``loss.item()`` each step (one wait at the
  end), which tells the host's share of a compiled step from the program's.
- **eval, batch 1000, us/batch** (a pass of 10 batches a turn): the XLA
  convolutions as written (``xla``, NCHW), the same with the activations kept
  channels-last inside (``xla_nhwc``), the im2col kernels whole (``im2col``) and
  in chunks (``im2col_chunk50``), against PyTorch (and PyTorch channels-last).

Also ``tiny_program_us_per_call``: what one launch of a trivial program costs.
``--profile`` adds, on a GPU or TPU, the device's kernels per eval batch and per
step from a ``jax.profiler`` trace. The GPU figures, and a run under
``XLA_FLAGS=--xla_gpu_enable_command_buffer=`` (CUDA graphs off: slower), are in
BENCHMARKS.md, "Launches on the GPU".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, str(Path(__file__).parent))
from bench_compat import device_for, make_step  # noqa: E402
from run import jax_runners, round_robin, torch_style_runner  # noqa: E402

from jaxblitz import models, train  # noqa: E402


def lenet_nhwc(params, x):
    """The Blitz's forward with ``lax.conv`` on channels-last activations: the
    input turned NHWC once, HWIO weights, pooled NHWC; back to torch's (C, H, W)
    order only for ``fc1``'s 400 features. Same logits as ``models.lenet``."""

    def stage(p, h):
        w = jnp.transpose(p["weight"], (2, 3, 1, 0))  # OIHW -> HWIO
        h = lax.conv_general_dilated(
            h, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        h = jax.nn.relu(h + p["bias"])
        return lax.reduce_window(
            h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
        )

    h = stage(params["conv2"], stage(params["conv1"], jnp.transpose(x, (0, 2, 3, 1))))
    h = jnp.transpose(h, (0, 3, 1, 2)).reshape(x.shape[0], -1)
    h = jax.nn.relu(models.linear(params["fc1"], h))
    h = jax.nn.relu(models.linear(params["fc2"], h))
    return models.linear(params["fc3"], h)


def eval_runners(batches: int = 10) -> dict:
    """Warm eval passes over ``batches`` batches of 1000: name -> fn."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batches, 1000, 3, 32, 32), dtype=np.float32)
    params = train.init_state(train.Config(), 3).params
    xj = [jnp.asarray(b) for b in x]
    forwards = {
        "xla": lambda p, b: models.lenet(p, b, impl="xla"),
        "xla_nhwc": lenet_nhwc,
        "im2col": lambda p, b: models.lenet(p, b, impl="im2col"),
        "im2col_chunk50": lambda p, b: models.lenet(p, b, impl="im2col", chunk=50),
    }
    runners, reference = {}, None
    for name, forward in forwards.items():
        f = jax.jit(lambda p, b, forward=forward: jnp.argmax(forward(p, b), -1))
        logits = np.asarray(jax.jit(forward)(params, xj[0]))
        if reference is None:
            reference = logits
        err = float(np.max(np.abs(logits - reference)) / np.max(np.abs(reference)))
        print(f"eval {name}: logits within {err:.1e} of xla's", file=sys.stderr)
        f(params, xj[0]).block_until_ready()
        runners[name] = lambda f=f: jax.block_until_ready([f(params, b) for b in xj])
    try:
        import torch
        from torch import nn, optim
        from torch.nn import functional as F
    except ImportError:
        return runners
    device = device_for(torch)
    for name, layout in (("torch", None), ("torch_channels_last", "cl")):
        net = make_step(torch, nn, F, optim, device=device).net
        xt = [torch.from_numpy(b).to(device) for b in x]
        if layout:
            net = net.to(memory_format=torch.channels_last)
            xt = [b.contiguous(memory_format=torch.channels_last) for b in xt]

        def run(net=net, xt=xt):
            with torch.no_grad():
                for b in xt:
                    net(b).argmax(1)
            if device == "cuda":
                torch.cuda.synchronize()

        run()
        runners[name] = run
    return runners


def step_device_idx(state, data, idx, mask, tx):
    """``train.run_loop`` as it was: each step's indices sliced from the device
    arrays ``idx`` and ``mask``, two eager programs a step."""
    losses = []
    for i in range(idx.shape[0]):
        state, loss = train.jit_step(state, data, idx[i], mask[i], tx)
        losses.append(loss)
    return state, jnp.stack(losses)


def step_runners(batch: int = 4) -> dict:
    """Warm training runners at ``batch``: name -> (steps, fn)."""
    loops = {
        "scan": train.run_steps,
        "step": train.run_loop,
        "step_device_idx": step_device_idx,
    }
    runners = {
        name: (images // batch, fn)
        for name, (images, fn) in jax_runners(batch, True, loops, False)[0].items()
    }
    for lib in ("compat", "compiled", "torch"):
        runner = torch_style_runner(lib, batch, True)
        if runner is not None:
            images, fn = runner
            runners[lib] = (images // batch, fn)
    if "compiled" in runners:
        compiled = runners["compiled"][1].step  # the same warm step, unwaited
        count = runners["compiled"][0]

        def compiled_nosync():  # no loss.item() a step: one wait at the end
            for i in range(count):
                loss = compiled.train_step(*compiled.batch(i))
            loss.item()

        runners["compiled_nosync"] = (count, compiled_nosync)
    return runners


def launch_runners(calls: int = 1000) -> dict:
    """A tiny jitted program (``x + 1`` on 4 floats) called ``calls`` times:
    ``launch`` waits once at the end, ``launch_sync`` after every call."""
    f = jax.jit(lambda x: x + 1)
    x = jnp.zeros(4)
    f(x).block_until_ready()

    def launch():
        y = x
        for _ in range(calls):
            y = f(y)
        y.block_until_ready()

    def launch_sync():
        for _ in range(calls):
            f(x).block_until_ready()

    return {"launch": launch, "launch_sync": launch_sync}


def print_device_kernels(run, per: int, top: int = 12) -> None:
    """Profile one ``run()`` and print, per ``per``-th of it, the time of each
    line of the accelerator's trace (its streams) and its ``top`` kernels; on a
    CPU, where XLA's kernels run on host threads, say so and print nothing."""
    with tempfile.TemporaryDirectory() as folder:
        run()
        jax.profiler.start_trace(folder)
        run()
        jax.profiler.stop_trace()
        (path,) = Path(folder).rglob("*.xplane.pb")
        data = jax.profiler.ProfileData.from_file(str(path))
    planes = [
        p for p in data.planes if p.name.startswith(("/device:GPU", "/device:TPU"))
    ]
    if not planes:
        print("  (no accelerator in the trace: see bench_breakdown.py on a CPU)")
        return
    kernels: collections.Counter = collections.Counter()
    for plane in planes:
        for line in plane.lines:
            events = list(line.events)
            busy = sum(e.duration_ns for e in events) / per / 1e3
            print(
                f"  {plane.name} / {line.name}: {len(events) / per:.1f} events, "
                f"{busy:.1f} us"
            )
            if "stream" in line.name.lower():
                for e in events:
                    kernels[e.name] += e.duration_ns
    for name, ns in kernels.most_common(top):
        print(f"  {ns / per / 1e3:8.1f} us  {name[:100]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", help="also write the figures here as JSON")
    parser.add_argument(
        "--profile", action="store_true", help="also print the accelerator's kernels"
    )
    args = parser.parse_args()
    out = {
        "device": jax.devices()[0].device_kind,
        "jax": jax.__version__,
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
    }
    print(f"{out['device']}, jax {out['jax']}, XLA_FLAGS={out['XLA_FLAGS']!r}")
    times = round_robin(launch_runners(), args.repeats)
    out["tiny_program_us_per_call"] = {k: 1e3 * min(t) for k, t in times.items()}
    steps = step_runners()
    times = round_robin({k: fn for k, (_, fn) in steps.items()}, args.repeats)
    out["train_b4_us_per_step"] = {
        k: 1e6 * min(t) / steps[k][0] for k, t in times.items()
    }
    evals = eval_runners()
    times = round_robin(evals, args.repeats)
    out["eval_b1000_us_per_batch"] = {k: 1e6 * min(t) / 10 for k, t in times.items()}
    for what in (
        "tiny_program_us_per_call",
        "train_b4_us_per_step",
        "eval_b1000_us_per_batch",
    ):
        print(f"{what} (min of {args.repeats}):")
        for k, us in out[what].items():
            print(f"  {k:22s} {us:10.1f}")
    if args.profile:
        print("eval b1000, xla, one pass of 10 batches, per batch:")
        print_device_kernels(evals["xla"], 10)
        print("train b4, step, per step:")
        print_device_kernels(steps["step"][1], steps["step"][0])
        print("train b4, compat compiled, per step:")
        print_device_kernels(steps["compiled"][1], steps["compiled"][0])
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
