"""Blitz 5, "Data parallelism": the batch split over devices with JAX sharding.

PyTorch's ``nn.DataParallel`` scatters each batch along dim 0 over the GPUs, runs a
replica of the model on each and gathers the outputs. In JAX the same thing is a
question of where the data lives: put the batch on a device mesh, sharded along a
``data`` axis, and keep the train state replicated. Training runs the *same*
:func:`jaxblitz.train.batch_sums` on every device's rows under ``jax.shard_map``,
its gradient chunked as on one device, and sums the gradients over the axis
before the step (:class:`Sharded` is the runner ``train.fit`` takes); for a
forward pass (:func:`per_device_view`) plain ``jax.jit`` splits the work by
itself (computation follows data). On a CPU, every core can be a device
(``JAX_NUM_CPU_DEVICES=2`` on two cores; BENCHMARKS.md has what it buys).

Batches that do not divide evenly (the Blitz's 30 rows over 8 GPUs: 4,4,4,4,4,4,4,2)
are padded to equal shards and the padding is masked out of the loss, so the loss
and gradients are the unpadded batch's.

Beyond one machine, :func:`initialize` starts JAX's multi-process runtime and every
process feeds only its own devices' rows of each batch::

    python -m jaxblitz.parallel launch --num-processes 2 -- --dataset digits
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import signal
import socket
import subprocess
import sys
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxblitz import kernels, train

AXIS = "data"


def make_mesh(devices: int | str | None = "all") -> Mesh:
    """A 1-D mesh with axis ``"data"`` over the first ``devices`` devices (or all)."""
    available = jax.devices()
    if devices in (None, "all"):
        n = len(available)
    else:
        try:
            n = int(devices)
        except (TypeError, ValueError):
            raise ValueError(
                f"devices must be a positive int or 'all', got {devices!r}."
            ) from None
        if n < 1:
            raise ValueError(f"devices must be a positive int or 'all', got {n}.")
    if n > len(available):
        raise ValueError(
            f"Asked for {n} devices but {len(available)} "
            f"{available[0].platform.upper()} device(s) are available. Use "
            "--devices all, or on CPU simulate more by setting "
            "JAX_NUM_CPU_DEVICES=8 before JAX starts."
        )
    if jax.process_count() > 1 and n != len(available):
        raise ValueError(
            f"With {jax.process_count()} processes the mesh must span all "
            f"{len(available)} devices (every process feeds its own); got {n}."
        )
    # Auto axes: XLA propagates the batch sharding through the model by itself.
    return jax.make_mesh(
        (n,), (AXIS,), axis_types=(AxisType.Auto,), devices=available[:n]
    )


def padded_size(batch_size: int, num_shards: int) -> int:
    """The smallest multiple of ``num_shards`` that holds ``batch_size`` rows."""
    return math.ceil(batch_size / num_shards) * num_shards


def shard_sizes(batch_size: int, num_shards: int) -> list[int]:
    """Real rows per device: DataParallel's split (30 over 8: 4,4,4,4,4,4,4,2).

    Rows are dealt in contiguous blocks of ``ceil(B / N)``, as ``torch.chunk`` does;
    devices past the end get only padding (10 over 8: 2,2,2,2,2,0,0,0).
    """
    if batch_size < 0 or num_shards < 1:
        raise ValueError(
            f"shard_sizes needs batch_size >= 0 and num_shards >= 1, got "
            f"{batch_size} and {num_shards}."
        )
    per = math.ceil(batch_size / num_shards)
    return [min(per, max(0, batch_size - i * per)) for i in range(num_shards)]


def replicate(tree, mesh: Mesh):
    """Every leaf of ``tree`` copied to every device of ``mesh``."""
    sharding = NamedSharding(mesh, P())

    def put(x):
        x = np.asarray(x) if jax.process_count() > 1 else x
        return jax.make_array_from_callback(np.shape(x), sharding, lambda i: x[i])

    return jax.tree.map(put, tree)


def to_host(tree):
    """NumPy copies of a replicated pytree (readable on every process)."""
    return jax.tree.map(lambda x: np.asarray(x.addressable_data(0)), tree)


def _global(mesh: Mesh, shape: tuple[int, ...], read, batch_axis: int):
    """A global array split over ``mesh`` along ``batch_axis``: each process
    reads only its own devices' blocks (``read`` gets the index up to that axis)."""
    spec = P(*([None] * batch_axis), AXIS, *([None] * (len(shape) - batch_axis - 1)))
    return jax.make_array_from_callback(
        shape,
        NamedSharding(mesh, spec),
        # JAX types the callback's index as optional; it never passes None.
        lambda index: read(index[: batch_axis + 1]),  # type: ignore[index]
    )


def shard_batches(mesh: Mesh, data, idx: np.ndarray, mask: np.ndarray):
    """``images[idx]``, ``labels[idx]`` and ``mask`` split along the batch axis B:
    ``(S, B, ...)`` for a stack of steps ``idx`` ``(S, B)``, ``(B, ...)`` for one
    step's ``idx`` ``(B,)``.

    ``data`` is the host ``(images, labels)``; each process reads only the rows
    that its own devices hold.
    """
    images, labels = data
    axis = idx.ndim - 1
    return (
        _global(
            mesh, (*idx.shape, *images.shape[1:]), lambda ix: images[idx[ix]], axis
        ),
        _global(mesh, idx.shape, lambda ix: labels[idx[ix]], axis),
        _global(mesh, idx.shape, lambda ix: mask[ix], axis),
    )


def _step(state, images, labels, mask, tx):
    """One device's rows: the loss and gradient sums chunked as on one device,
    summed over the mesh, then one step (torch: DataParallel's all-reduce)."""
    chunk = kernels.grad_chunk(images.shape[0], shard=True)
    sums = train.batch_sums(state.params, images, labels, mask, chunk)
    loss, grads, count = jax.lax.psum(sums, AXIS)
    return train.apply_mean(state, loss, grads, count, tx)


def _steps(state, images, labels, mask, tx):
    """:func:`_step` over the leading axis of a stack of batches."""
    return jax.lax.scan(lambda s, xs: _step(s, *xs, tx), state, (images, labels, mask))


@functools.lru_cache(maxsize=8)
def _runners(mesh: Mesh):
    """``(one, many)``: :func:`_step` and :func:`_steps` jitted for ``mesh``.

    The state is replicated; each device gets its rows of the batch (axis 0 of
    one step, axis 1 of a stack of steps) and results come back replicated.
    """

    def per_device(fn, batch_axis: int):
        rows = P(*([None] * batch_axis), AXIS)

        def run(state, images, labels, mask, tx):
            return jax.shard_map(
                partial(fn, tx=tx),
                mesh=mesh,
                in_specs=(P(), rows, rows, rows),
                out_specs=P(),
                # The gradient scan's carry starts replicated and sums per-device
                # terms: the psum in train_step restores replication, untracked.
                check_vma=False,
            )(state, images, labels, mask)

        return jax.jit(run, static_argnames="tx", donate_argnums=0)

    return per_device(_step, 0), per_device(_steps, 1)


class Sharded:
    """A runner for :func:`jaxblitz.train.fit` that trains data-parallel on
    ``mesh``: the state replicated, each step's batch gathered on the host and
    split over the devices (torch: ``nn.DataParallel(net)``)."""

    def __init__(self, mesh: Mesh):
        self.mesh = mesh
        self.devices = int(mesh.devices.size)

    def place(
        self, state: train.TrainState, images: np.ndarray, labels: np.ndarray
    ) -> tuple[train.TrainState, tuple[np.ndarray, np.ndarray]]:
        host = (np.asarray(images), np.asarray(labels, np.int32))
        return replicate(state, self.mesh), host

    def run(self, loop: str = "scan") -> train.Steps:
        """``run(state, data, idx, mask, tx)``, as ``train.run_steps``, where
        ``data`` is the host (NumPy) ``(images, labels)``."""
        mesh, n = self.mesh, self.devices

        def run(state, data, idx, mask, tx):
            idx, mask = np.asarray(idx), np.asarray(mask)
            if idx.shape[1] % n:
                raise ValueError(
                    f"A batch of {idx.shape[1]} rows does not split over {n} "
                    "devices; pad it: data.epoch_order(..., shards=n)."
                )
            one, many = _runners(mesh)
            if loop == "scan":
                return many(state, *shard_batches(mesh, data, idx, mask), tx=tx)
            # Each step's batch goes to the devices from the host: slicing step i
            # out of a device-resident stack costs an eager program launch per
            # array, which on a GPU is most of a small step (BENCHMARKS.md).
            losses = []
            for i in range(idx.shape[0]):
                batch = shard_batches(mesh, data, idx[i], mask[i])
                state, loss = one(state, *batch, tx=tx)
                losses.append(loss)
            return state, jnp.stack(losses)

        return run

    def to_host(self, tree):
        return to_host(tree)


def per_device_view(mesh: Mesh, batch: np.ndarray, apply_fn):
    """What each device sees of ``batch`` (the Blitz's "In Model: input size" lines).

    Runs ``apply_fn`` under ``shard_map`` on the padded, sharded batch and returns
    ``(inside, output)``: per device, the number of real rows and the shard shapes
    of input and output; ``output`` is the gathered result for the real rows.
    """
    n = mesh.devices.size
    rows = len(batch)
    padded = np.zeros((padded_size(rows, n), *batch.shape[1:]), batch.dtype)
    padded[:rows] = batch
    x = jax.device_put(padded, NamedSharding(mesh, P(AXIS)))

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS))
    def forward(shard):
        return apply_fn(shard)

    y = forward(x)
    inside = [
        (real, tuple(s.data.shape), tuple(o.data.shape))
        for real, s, o in zip(
            shard_sizes(rows, n),
            x.addressable_shards,
            y.addressable_shards,
            strict=True,
        )
    ]
    return inside, np.asarray(y)[:rows]


# -- Many processes ---------------------------------------------------------------


def initialize() -> None:
    """Join JAX's multi-process runtime when the environment asks for it.

    With ``JAXBLITZ_COORDINATOR``, ``JAXBLITZ_NUM_PROCESSES`` and
    ``JAXBLITZ_PROCESS_ID`` set (the launcher below sets them), those are used; on
    SLURM or Cloud TPU ``jax.distributed.initialize()`` finds them itself. CPU
    processes talk through gloo.
    """
    if "JAXBLITZ_COORDINATOR" in os.environ:
        count, rank = _process_env()
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(
            coordinator_address=os.environ["JAXBLITZ_COORDINATOR"],
            num_processes=count,
            process_id=rank,
            initialization_timeout=60,
        )
    elif "SLURM_JOB_ID" in os.environ or "TPU_WORKER_HOSTNAMES" in os.environ:
        jax.distributed.initialize()


def _process_env() -> tuple[int, int]:
    """``(JAXBLITZ_NUM_PROCESSES, JAXBLITZ_PROCESS_ID)``, or a ValueError saying
    which is missing or out of range (the three variables go together)."""
    values = []
    for name in ("JAXBLITZ_NUM_PROCESSES", "JAXBLITZ_PROCESS_ID"):
        text = os.environ.get(name, "")
        if not text.strip().isdigit():
            raise ValueError(
                f"JAXBLITZ_COORDINATOR is set, so {name} must be a whole number, "
                f"got {text!r}; `python -m jaxblitz.parallel launch` sets all three."
            )
        values.append(int(text))
    count, rank = values
    if not 0 <= rank < count:
        raise ValueError(
            f"JAXBLITZ_PROCESS_ID must be in [0, JAXBLITZ_NUM_PROCESSES={count}), "
            f"got {rank}."
        )
    return count, rank


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    num_processes: int,
    args: list[str],
    devices_per_process: int | None = None,
    timeout: float | None = None,
) -> int:
    """Run ``jaxblitz-train ARGS`` (``python -m jaxblitz``) as ``num_processes``
    local processes.

    They meet at a coordinator on 127.0.0.1; all are killed if one fails or the
    timeout passes. Returns the first non-zero exit code, else 0.
    """
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}.")
    address = f"127.0.0.1:{_free_port()}"
    procs = []
    for rank in range(num_processes):
        env = dict(os.environ, JAXBLITZ_COORDINATOR=address,
                   JAXBLITZ_NUM_PROCESSES=str(num_processes),
                   JAXBLITZ_PROCESS_ID=str(rank))  # fmt: skip
        if devices_per_process:
            env["JAX_NUM_CPU_DEVICES"] = str(devices_per_process)
        procs.append(
            subprocess.Popen([sys.executable, "-m", "jaxblitz", *args], env=env)
        )
    deadline = None if timeout is None else time.monotonic() + timeout
    code = 0
    try:
        while any(p.poll() is None for p in procs):
            failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
            if failed or (deadline is not None and time.monotonic() > deadline):
                code = failed[0] if failed else 124
                break
            time.sleep(0.1)
        else:
            code = next((p.returncode for p in procs if p.returncode), 0)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jaxblitz.parallel",
        description="Launch data-parallel training as several local processes.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("launch", help="jaxblitz-train in N processes")
    go.add_argument("--num-processes", type=int, default=2)
    go.add_argument(
        "--devices-per-process",
        type=int,
        default=None,
        help="simulated CPU devices per process (JAX_NUM_CPU_DEVICES)",
    )
    go.add_argument("--timeout", type=float, default=None, help="seconds")
    go.add_argument("train_args", nargs=argparse.REMAINDER, help="-- <train flags>")
    args = parser.parse_args(argv)
    if args.num_processes < 1:
        parser.error(f"--num-processes must be >= 1, got {args.num_processes}")
    if args.devices_per_process is not None and args.devices_per_process < 1:
        parser.error(
            f"--devices-per-process must be >= 1, got {args.devices_per_process}"
        )
    if args.timeout is not None and not args.timeout > 0:  # nan too
        parser.error(f"--timeout must be > 0 seconds, got {args.timeout}")
    rest = args.train_args[1:] if args.train_args[:1] == ["--"] else args.train_args
    return launch(args.num_processes, rest, args.devices_per_process, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
