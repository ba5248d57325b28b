"""Blitz 4's LeNet, side by side in one run: PyTorch eager, jaxblitz, compat.

Run: python benchmarks/run.py [--quick] [--repeats 3] [--batches all]
         [--out benchmarks/results.json]

Measures, on the same machine and after warm-up, training images/s at batch 4,
32, 128 and 512 (the Blitz's Net, SGD lr 0.001 momentum 0.9, CIFAR-shaped random
data) for PyTorch eager (when the ``torch`` extra is installed), the jaxblitz step
loop (a jitted step per batch) and scan epoch (the batches as one compiled
``lax.scan``; at batch 4 also ``scan_1thread``, on one XLA thread in a worker
process, as ``jaxblitz-train`` runs it there), the scan data-parallel over every
core as a CPU device (``sharded``), compat eager, compat lazy (``compat_lazy``:
one program per step) and compat compiled (batch 4, and 128 on a GPU or TPU,
when present); eval images/s at batch 1000 (a 10,000-image pass per turn);
compile times; the machine's matmul GFLOP/s, and each figure as a fraction of
the FLOP limit (3.9 MFLOP per training image, 1.3 per inference). Prints a
table, ratios to PyTorch, and writes JSON. The candidates for one batch size
take turns, round by round, so noise hits them alike. Measure on a quiet
machine: a second busy process slows both sides 2-4x.

On a GPU machine the same command runs unchanged: jaxblitz on JAX's GPU (XLA's
convolutions, whole batches, kernels.im2col_backend), compat on its ``cuda``
device, and PyTorch on CUDA beside them when it is a CUDA build (else on the CPU,
as the table's header says); the one-thread and sharded-over-cores candidates
are CPU-only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import jax

# Every core a CPU device (before JAX starts), for the "sharded" candidate: the
# data-parallel loop over all cores. One-device candidates use the first device;
# measured in separate processes, the setting leaves their speed as it was.
CORES = (
    len(os.sched_getaffinity(0))
    if hasattr(os, "sched_getaffinity")
    else (os.cpu_count() or 1)
)
jax.config.update("jax_num_cpu_devices", CORES)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_compat import (  # noqa: E402
    device_for,
    eager_step,
    lazy_step,
    make_step,
    warm_up,
)

from jaxblitz import cli, evaluate, models, parallel, runtime, train  # noqa: E402
from jaxblitz.data import epoch_order  # noqa: E402

TRAIN_FLOP = 3.9e6  # per image: forward 1.30 MFLOP (conv1 0.71, conv2 0.48, fc 0.12)
EVAL_FLOP = 1.3e6
BATCHES = (4, 32, 128, 512)
ALL_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # --batches all


def _batches(text: str) -> tuple[int, ...]:
    if text == "all":
        return ALL_BATCHES
    try:
        batches = tuple(int(b) for b in text.split(","))
    except ValueError:
        batches = ()
    if not batches or min(batches) < 1:
        raise argparse.ArgumentTypeError(
            f"expected 'all' or batch sizes like 4,32,128; got {text!r}"
        )
    return batches


def repeat(fn, repeats: int) -> list[float]:
    """Seconds per call of ``fn`` (already warm), ``repeats`` times."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def summary(images: int, times: list[float]) -> dict:
    rates = [images / t for t in times]
    return {"best": max(rates), "median": statistics.median(rates), "worst": min(rates)}


def matmul_size() -> int:
    """The square matmul that measures the FLOP peak: 2048 on a CPU, 8192 on an
    accelerator (at 2048 a GPU's product is too short to time past dispatch)."""
    return 8192 if on_accelerator() else 2048


def matmul_gflops(repeats: int) -> float:
    n = matmul_size()
    a = jax.random.normal(jax.random.key(0), (n, n))
    f = jax.jit(lambda a: a @ a)
    f(a).block_until_ready()
    best = min(repeat(lambda: f(a).block_until_ready(), repeats * 3))
    return 2 * n**3 / best / 1e9


def steps_for(batch: int, quick: bool) -> int:
    images = 2000 if quick else 8000
    return max(8, images // batch)


def round_robin(runners: dict, repeats: int) -> dict:
    """Seconds per call of each warm runner, ``repeats`` rounds taking turns.

    Every round runs each candidate once, so a noisy stretch of the shared machine
    slows all of them alike and the ratios between them stay fair.
    """
    times = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    return times


def jax_runners(
    batch: int, quick: bool, loops=("scan", "step"), sharded: bool = True
) -> tuple[dict, dict]:
    """Warm epoch runners (images, fn) for the scan and step loops, compile times.

    ``loops``: names of ``train``'s loops, or a dict name -> a loop with
    ``train.run_steps``'s signature.
    """
    steps = steps_for(batch, quick)
    n = steps * batch
    rng = np.random.default_rng(0)
    data = (
        jnp.asarray(rng.standard_normal((n, 3, 32, 32), dtype=np.float32)),
        jnp.asarray(rng.integers(0, 10, n), jnp.int32),
    )
    config = train.Config(batch_size=batch)
    tx = train.make_optimizer(config)
    idx, mask = epoch_order(jax.random.key(1), n, batch)
    runners, compile_s = {}, {}
    if not isinstance(loops, dict):
        known = {"scan": train.run_steps, "step": train.run_loop}
        loops = {name: known[name] for name in loops}
    for name, run in loops.items():
        box = {"state": train.init_state(config, 3)}

        def epoch(run=run, box=box):
            box["state"], losses = run(box["state"], data, idx, mask, tx)
            losses.block_until_ready()

        t0 = time.perf_counter()
        epoch()
        first = time.perf_counter() - t0
        second = min(repeat(epoch, 2))
        compile_s[name] = max(first - second, 0.0)
        runners[name] = (n, epoch)
    if sharded and jax.device_count() > 1 and batch % jax.device_count() == 0:
        # The batch split over all devices (on CPU: all cores), each device's
        # gradient chunked as on one device: jaxblitz-train --devices all.
        mesh = parallel.make_mesh("all")
        host = tuple(np.asarray(a) for a in data)
        run = parallel.Sharded(mesh).run("scan")
        box = {"state": parallel.replicate(train.init_state(config, 3), mesh)}
        idx_h, mask_h = np.asarray(idx), np.asarray(mask)

        def sharded(box=box):
            box["state"], losses = run(box["state"], host, idx_h, mask_h, tx)
            losses.block_until_ready()

        sharded()
        runners["sharded"] = (n, sharded)
    return runners, compile_s


def one_thread_worker(batch: int, quick: bool) -> None:
    """Child process: the scan epoch on one XLA thread, one epoch per "go" line.

    XLA:CPU's pool is sized once per process (``runtime.set_cpu_threads``), so the
    ``scan_1thread`` candidate lives in this child; the parent sends "go" on its
    turn and waits, so the two never run at once.
    """
    runtime.set_cpu_threads(1)
    runners, _ = jax_runners(batch, quick, loops=("scan",), sharded=False)
    images, epoch = runners["scan"]
    print(images, flush=True)
    for _ in sys.stdin:
        epoch()
        print("done", flush=True)


def one_thread_runner(batch: int, quick: bool):
    """The ``scan_1thread`` candidate: (images, fn) driving a worker process."""
    command = [sys.executable, __file__, "--one-thread-worker", str(batch)]
    worker = subprocess.Popen(
        command + (["--quick"] if quick else []),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    images = int(worker.stdout.readline())

    def epoch():
        worker.stdin.write("go\n")
        worker.stdin.flush()
        if worker.stdout.readline() != "done\n":
            raise RuntimeError("the one-thread benchmark worker stopped")

    epoch()
    return images, epoch, worker


def on_accelerator() -> bool:
    """Whether JAX runs on a GPU (or TPU) here: then PyTorch runs beside it on CUDA
    where it can, and compat on its ``cuda`` device (``bench_compat.device_for``)."""
    return jax.default_backend() != "cpu"


def torch_style_runner(lib: str, batch: int, quick: bool):
    """The Blitz's own loop body (bench_compat.make_step) in torch or compat."""
    if lib == "torch":
        try:
            import torch
            import torch.nn.functional as F
            from torch import nn, optim
        except ImportError:
            return None
    else:
        import jaxblitz.compat as torch
        import jaxblitz.compat.nn.functional as F
        from jaxblitz.compat import nn, optim
    if lib == "compiled" and not hasattr(torch, "compile"):
        return None
    step = make_step(torch, nn, F, optim, batch, lib == "compiled", device_for(torch))
    if lib == "compat_lazy":  # compat's lazy execution: one program per step
        step = lazy_step(step)
    elif lib == "compat":  # eager, whatever the device's default
        step = eager_step(step)
    steps = steps_for(batch, quick) // (4 if lib != "torch" and batch == 4 else 1)
    warm_up(step)

    def run():
        return [step(i) for i in range(steps)]

    run.step = step  # for callers that time the same step another way
    return steps * batch, run


def bench_train(batch: int, repeats: int, quick: bool) -> dict:
    runners, compile_s = jax_runners(batch, quick)
    worker = None
    one_thread = not on_accelerator() and cli.cpu_threads(batch) == 1
    if one_thread and CORES > 1:  # what jaxblitz-train runs on a CPU
        images, epoch, worker = one_thread_runner(batch, quick)
        runners = {"scan": runners.pop("scan"), "scan_1thread": (images, epoch)} | (
            runners
        )
    libs = ("torch",)
    if batch == 4 or on_accelerator() and batch == 128:
        libs = ("torch", "compat", "compat_lazy", "compiled")
    for lib in libs:
        runner = torch_style_runner(lib, batch, quick)
        if runner is not None:
            runners[lib] = runner
    try:
        times = round_robin({k: fn for k, (_, fn) in runners.items()}, repeats)
    finally:
        if worker is not None:
            worker.stdin.close()
            worker.wait(timeout=60)
    out = {k: summary(runners[k][0], times[k]) for k in runners}
    for name in ("scan", "step"):
        out[name]["compile_s"] = compile_s[name] if name == "scan" else None
    out.setdefault("torch", None)
    return out


EVAL_BATCHES = 10  # one turn: a 10,000-image test set in batches of 1000


def bench_eval(repeats: int) -> dict:
    """Eval images/s at batch 1000, each turn a pass over a 10,000-image test set.

    A pass, not one call: a single 1000-image call right after another library's
    turn measured jaxblitz 30-40 % below its steady rate (its thread pool and
    caches cold), PyTorch's unchanged; evaluating a test set runs batches back to
    back, as :func:`jaxblitz.evaluate.predict` and the Blitz's test loop do.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal((EVAL_BATCHES, 1000, 3, 32, 32), dtype=np.float32)
    params = train.init_state(train.Config(), 3).params
    xj = [jnp.asarray(batch) for batch in x]
    runners = {}
    plain = jax.jit(lambda p, x: jnp.argmax(models.lenet(p, x), -1))
    for name, f in (
        ("jaxblitz", evaluate.predict_batch),
        ("jaxblitz_unchunked", plain),
    ):
        f(params, xj[0]).block_until_ready()
        runners[name] = lambda f=f: jax.block_until_ready([f(params, b) for b in xj])
    try:
        import torch
        import torch.nn.functional as F
        from torch import nn, optim

        device = device_for(torch)
        net = make_step(torch, nn, F, optim, device=device).net
        xt = [torch.from_numpy(batch).to(device) for batch in x]

        def torch_eval():
            with torch.no_grad():
                for batch in xt:
                    net(batch).argmax(1)
            if device == "cuda":  # CUDA runs asynchronously: wait for the pass
                torch.cuda.synchronize()

        torch_eval()
        runners["torch"] = torch_eval
    except ImportError:
        pass
    times = round_robin(runners, repeats * 2)
    return {name: summary(1000 * EVAL_BATCHES, t) for name, t in times.items()}


def torch_version() -> str:
    """``, PyTorch 2.x on cuda (card)`` for the table's header; '' without it."""
    try:
        import torch
    except ImportError:
        return ""
    device = device_for(torch)
    card = f" ({torch.cuda.get_device_name()})" if device == "cuda" else ""
    return f", PyTorch {torch.__version__} on {device}{card}"


BEGIN = "<!-- benchmarks/run.py: generated from here -->"
END = "<!-- benchmarks/run.py: generated up to here -->"


def write_markdown(path: Path, generated: str) -> None:
    """Put the table between the markers in ``path``; the rest is kept as written."""
    text = path.read_text() if path.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + generated + rest.split(END, 1)[1]
    else:
        text = f"# Benchmarks\n\n{generated}\n"
    path.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer images per run")
    parser.add_argument(
        "--batches",
        type=_batches,
        default=BATCHES,
        help="training batch sizes, comma-separated, or 'all' for every power of "
        "two from 1 to 1024 (default 4,32,128,512)",
    )
    parser.add_argument("--out", default=str(Path(__file__).parent / "results.json"))
    parser.add_argument(
        "--markdown",
        default=str(Path(__file__).parents[1] / "BENCHMARKS.md"),
        help="where to write the table ('' for nowhere)",
    )
    parser.add_argument("--one-thread-worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one_thread_worker:
        jax.config.update("jax_num_cpu_devices", 1)
        one_thread_worker(args.one_thread_worker, args.quick)
        return 0

    peak = matmul_gflops(args.repeats)
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].device_kind}, jax {jax.__version__}{torch_version()}",
        "matmul_gflops": peak,
        "train": {},
    }
    rows = []
    for batch in args.batches:
        entry = bench_train(batch, args.repeats, args.quick)
        results["train"][batch] = entry
        done = ", ".join(f"{k} {r['median']:,.0f}" for k, r in entry.items() if r)
        print(f"batch {batch} (images/s): {done}", file=sys.stderr, flush=True)
        for name, r in entry.items():
            if r:
                rows.append(("train", batch, name, r, TRAIN_FLOP, entry["torch"]))
    evals = bench_eval(args.repeats)
    results["eval_1000"] = evals
    for name, r in evals.items():
        rows.append(("eval", 1000, name, r, EVAL_FLOP, evals.get("torch")))

    header = (
        f"{results['machine']}; matmul {peak:.0f} GFLOP/s ({matmul_size()}x"
        f"{matmul_size()} float32, JAX's default precision); "
        f"{results['date']}"
    )
    table = [
        "| what | batch | who | images/s (median) | best | x PyTorch | % FLOP peak |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, batch, name, r, flop, ref in rows:
        ratio = f"{r['median'] / ref['median']:.2f}" if ref else "-"
        table.append(
            f"| {kind} | {batch} | {name} | {r['median']:,.0f} | {r['best']:,.0f} | "
            f"{ratio} | {100 * r['median'] * flop / 1e9 / peak:.1f} % |"
        )
    compiles = [
        f"scan epoch compile time at batch {batch}: {e['scan']['compile_s']:.2f} s"
        for batch, e in results["train"].items()
    ]
    print(header, *table, *compiles, sep="\n")
    if args.markdown:
        generated = (
            f"{BEGIN}\nLatest `python benchmarks/run.py` "
            f"({'--quick, ' if args.quick else ''}{args.repeats} repeats): "
            f"{header}.\n\n"
            + "\n".join(table)
            + "\n\n"
            + "\n".join(f"- {c}" for c in compiles)
            + f"\n{END}"
        )
        write_markdown(Path(args.markdown), generated)
        print(f"wrote {args.markdown}")
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
