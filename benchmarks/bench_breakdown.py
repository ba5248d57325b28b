"""Where a small-batch training step's time goes: the scan step taken apart.

Run: python benchmarks/bench_breakdown.py [--batch 4] [--steps 2000] [--repeats 5]
         [--threads 1]

The training step ``jaxblitz-train`` runs at ``--batch`` (the scan epoch, on
``--threads`` XLA threads as the CLI picks them) is timed whole and in cumulative
stages, each as its own compiled ``lax.scan`` over the same batches so the
differences are what each stage adds:

- ``gather``: the loop and the next batch's gather only;
- ``forward``: + LeNet's forward and the loss;
- ``backward``: + the gradient (``value_and_grad``, gradients summed in the carry);
- ``step``: + the optimizer update (SGD with momentum): the real step.

Also: the number of kernels (XLA fusions and library calls) in the step's loop
body, so the per-step time can be read against the per-kernel cost; the same
step called from Python once per batch (``jit_step``: the launch cost); compat's
``torch.compile`` step, whole and as its jitted program alone (the difference is
compat's per-call Python work); and PyTorch eager's step when installed. Prints
microseconds per step (medians; the candidates take turns round by round).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="default: the CLI's")
    parser.add_argument(
        "--kernels", type=int, default=25, help="list the N slowest kernels (0: none)"
    )
    parser.add_argument(
        "--eval", action="store_true", help="take evaluation at --batch apart instead"
    )
    args = parser.parse_args(argv)

    from jaxblitz import cli

    threads = args.threads or cli.cpu_threads(args.batch)
    if threads:
        cli.set_cpu_threads(threads)
        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass

    import jax
    import jax.numpy as jnp

    from jaxblitz import kernels, train
    from jaxblitz.data import epoch_order

    if args.eval:
        return eval_breakdown(args, threads)
    b, s = args.batch, args.steps
    n = b * s
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.standard_normal((n, 3, 32, 32), dtype=np.float32))
    labels = jnp.asarray(rng.integers(0, 10, n), jnp.int32)
    idx, mask = epoch_order(jax.random.key(1), n, b)
    config = train.Config(batch_size=b)
    tx = train.make_optimizer(config)
    state0 = train.init_state(config, 3)
    chunk = kernels.grad_chunk(b)

    def stage_loop(stage: str):
        def body(carry, xs):
            state, acc, (x, y) = carry
            next_idx, m = xs
            if stage == "gather":
                out = jnp.sum(x[:, 0, 0, 0]) + jnp.sum(y)
            elif stage == "forward":
                out = train._masked_sum(state.params, x, y, m)
            elif stage == "backward":
                loss, grads, _ = train.batch_sums(state.params, x, y, m, chunk)
                acc = jax.tree.map(jnp.add, acc, grads)
                out = loss
            else:
                state, out = train.train_step(state, x, y, m, tx, chunk)
            return (state, acc, (images[next_idx], labels[next_idx])), out

        @jax.jit
        def run(state, idx, mask):
            zero = jax.tree.map(jnp.zeros_like, state.params)
            first = (images[idx[0]], labels[idx[0]])
            carry, out = jax.lax.scan(
                body, (state, zero, first), (jnp.roll(idx, -1, axis=0), mask)
            )
            return carry[:2], out

        def epoch():
            jax.block_until_ready(run(state0, idx, mask))

        return run, epoch

    stages = ("gather", "forward", "backward", "step")
    runners, kernel_counts = {}, {}
    for stage in stages:
        run, epoch = stage_loop(stage)
        text = run.lower(state0, idx, mask).compile().as_text()
        kernel_counts[stage] = count_loop_kernels(text)
        epoch()
        runners[stage] = epoch

    box = {"state": jax.tree.map(jnp.copy, state0)}

    def jit_steps():
        state = box["state"]
        for i in range(s):
            state, loss = train.jit_step(state, (images, labels), idx[i], mask[i], tx)
        loss.block_until_ready()
        box["state"] = state

    jit_steps()
    runners["jit_step"] = jit_steps

    step_count = {name: s for name in runners}
    program_calls = None
    for lib in ("torch", "compat_compiled"):
        made = torch_style(lib, b)
        if made is not None:
            step_fn, calls = made
            reps = max(1, s // 4)
            runners[lib] = lambda f=step_fn, r=reps: [f(i) for i in range(r)]
            step_count[lib] = reps
            if calls is not None:
                program_calls = calls

    times = {name: [] for name in runners}
    for _ in range(args.repeats):
        for name, fn in runners.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) / step_count[name] * 1e6)
    if program_calls is not None:  # compat compiled, with its program timed inside
        reps = step_count["compat_compiled"]
        times["compat_program"] = [
            program_calls(reps) / reps * 1e6 for _ in range(args.repeats)
        ]
    med = {k: statistics.median(v) for k, v in times.items()}

    print(
        f"batch {b}, {threads or 'all'} XLA thread(s), {jax.devices()[0].platform}, "
        f"medians of {args.repeats} rounds, microseconds per step"
    )
    prev = 0.0
    for stage in stages:
        print(
            f"  {stage:16s} {med[stage]:8.1f} us  (+{med[stage] - prev:6.1f})  "
            f"{kernel_counts[stage]} kernels in the loop body"
        )
        prev = med[stage]
    per_kernel = med["step"] / max(kernel_counts["step"], 1)
    print(f"  step / kernel    {per_kernel:8.2f} us")
    for name in ("jit_step", "compat_compiled", "compat_program", "torch"):
        if name in med:
            print(f"  {name:16s} {med[name]:8.1f} us")
    if args.kernels:
        box = {"state": jax.tree.map(jnp.copy, state0)}
        compiled = train.run_steps.lower(box["state"], (images, labels), idx, mask, tx)

        def epoch():  # the state is donated: carry it on
            box["state"], losses = train.run_steps(
                box["state"], (images, labels), idx, mask, tx
            )
            return losses

        print_kernels(
            epoch,
            compiled.compile().as_text(),
            s,
            args.kernels,
            "step",
        )
    return 0


def eval_breakdown(args, threads) -> int:
    """Evaluation (``evaluate.predict_batch``) at ``--batch``: time and kernels."""
    import jax
    import jax.numpy as jnp

    from jaxblitz import evaluate, train

    b, batches = args.batch, max(1, args.steps // max(args.batch, 1))
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.standard_normal((b, 3, 32, 32), dtype=np.float32))
    params = train.init_state(train.Config(batch_size=b), 3).params
    predict = jax.jit(evaluate.predict_batch)

    def run():
        out = None
        for _ in range(batches):
            out = predict(params, images)
        return out

    jax.block_until_ready(run())
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run())
        times.append((time.perf_counter() - t0) / batches * 1e6)
    med = statistics.median(times)
    print(
        f"eval batch {b}, {threads or 'all'} XLA thread(s), {jax.devices()[0].platform}"
        f": {med:.1f} us per batch ({b / med * 1e6:,.0f} images/s)"
    )
    if args.kernels:
        text = predict.lower(params, images).compile().as_text()
        print_kernels(run, text, batches, args.kernels, "batch")
    return 0


def print_kernels(run, hlo: str, per: int, top: int, unit: str) -> None:
    """Profile one ``run()`` with ``jax.profiler`` and print its ``top`` slowest
    kernels (XLA:CPU thunks) per ``unit``, with the shape and JAX op they come
    from; ``per``: how many units one run holds."""
    import tempfile

    import jax

    info = {}
    for line in hlo.splitlines():
        m = re.match(r"\s*(?:ROOT )?%([\w.-]+) = (\S+) ([\w-]+)\(", line)
        if m:
            op = re.search(r'op_name="([^"]*)"', line)
            info[m.group(1)] = (m.group(2).split("{")[0], op.group(1) if op else "")
    with tempfile.TemporaryDirectory() as folder:
        jax.block_until_ready(run())
        jax.profiler.start_trace(folder)
        jax.block_until_ready(run())
        jax.profiler.stop_trace()
        (path,) = Path(folder).rglob("*.xplane.pb")
        data = jax.profiler.ProfileData.from_file(str(path))
    total: dict[str, float] = {}
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                if (
                    event.name in info
                    and info[event.name][0]
                    and "while" not in (event.name)
                ):
                    total[event.name] = total.get(event.name, 0.0) + event.duration_ns
    spent = sum(total.values()) / per / 1e3
    print(
        f"  kernels: {len(total)} kinds, {spent:.1f} us per {unit} inside them; "
        f"the {min(top, len(total))} slowest:"
    )
    for name, ns in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        shape, op = info[name]
        where = op.split("/", 1)[-1][-70:]
        print(f"  {ns / per / 1e3:8.1f} us  {name[:28]:28s} {shape[:24]:24s} {where}")


def count_loop_kernels(hlo: str) -> int:
    """Kernels launched per iteration of the outermost while loop (the scan): the
    instructions of its body computation, and of computations it calls or loops
    over (counted once), other than parameters, tuples, constants, bitcasts and
    element reads, which cost no kernel."""
    comps = {}
    for block in re.split(r"\n\n+", hlo):
        head = re.match(r"(?:ENTRY\s+)?%([\w.-]+)\s*\(", block.strip())
        if head:
            comps[head.group(1)] = block
    free = {"parameter", "get-tuple-element", "tuple", "constant", "bitcast"}

    def count(name: str) -> int:
        total = 0
        for line in comps.get(name, "").splitlines()[1:]:
            op = re.search(r"=\s*[^=]*?\s([\w-]+)\(", line)
            if not op or op.group(1) in free:
                continue
            total += 1
            if op.group(1) in ("while", "call", "conditional"):
                for inner in re.findall(
                    r"(?:body|to_apply|branch_computations)=\{?%([\w.-]+)", line
                ):
                    total += count(inner)
        return total

    bodies = re.findall(r"while\(.*?body=%([\w.-]+)", hlo)
    return max((count(b) for b in bodies), default=0)  # the outermost loop's


def torch_style(lib: str, batch: int):
    """(step(i) -> loss, program(reps) or None) for PyTorch eager or compat's
    ``torch.compile``; None when the library is absent."""
    from bench_compat import make_step

    if lib == "torch":
        try:
            import torch
            import torch.nn.functional as F
            from torch import nn, optim
        except ImportError:
            return None
        return make_step(torch, nn, F, optim, batch), None
    import jax

    import jaxblitz.compat as torch
    import jaxblitz.compat.nn.functional as F
    from jaxblitz.compat import nn, optim

    step = make_step(torch, nn, F, optim, batch, compiled=True)
    for i in range(5):
        step(i)
    (entry,) = step.train_step._cache.values()  # its one compiled program
    real = entry.jitted
    inside = [0.0]

    def timed(*a):  # the jitted program's call, waited for
        t0 = time.perf_counter()
        out = jax.block_until_ready(real(*a))
        inside[0] += time.perf_counter() - t0
        return out

    entry.jitted = timed

    def program(reps):
        """The compiled steps again; returns the seconds inside the program."""
        inside[0] = 0.0
        for i in range(reps):
            step(i)
        return inside[0]

    return step, program


if __name__ == "__main__":
    sys.exit(main())
