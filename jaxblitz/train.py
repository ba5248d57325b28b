"""Blitz 4, "Training a classifier": LeNet on CIFAR-10 with SGD and momentum.

Library functions in the style of Flax's MNIST example; the CLI (``main``) prints::

    python -m jaxblitz.train --dataset digits --epochs 10 --out-dir runs/digits

- :func:`train_step`: one SGD step, state in, state out (torch: ``zero_grad``,
  ``forward``, ``loss.backward()``, ``optimizer.step()``);
- :func:`epoch_order`: the shuffled batch indices of one epoch, from a key
  (torch: ``DataLoader(shuffle=True)``), the last partial batch padded and masked;
- :func:`run_steps` / :func:`run_loop`: the same steps as one compiled ``lax.scan``
  (``loop="scan"``) or as a Python loop over a jitted step (``loop="step"``); both
  give the same parameters;
- :func:`fit`: epochs with running-loss reports, checkpoints and exact resume;
- :func:`evaluate`: accuracy, per-class accuracy and the confusion matrix.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from jaxblitz import models
from jaxblitz.integrity import CorruptFileError

OPTIMIZERS = ("sgd", "nesterov", "adam", "rmsprop")
LOOPS = ("scan", "step")


@dataclasses.dataclass(frozen=True)
class Config:
    """The Blitz's hyperparameters (section 4) and how to run them."""

    dataset: str = "cifar10"
    batch_size: int = 4
    lr: float = 0.001
    momentum: float = 0.9
    epochs: int = 2
    seed: int = 0
    widths: tuple[int, int] = (6, 16)
    optimizer: str = "sgd"
    loop: str = "scan"
    drop_last: bool = False
    log_every: int = 2000  # the Blitz prints the running loss every 2000 batches
    checkpoint_every: int = 0  # steps; 0: only at the end of each epoch
    eval_batch_size: int = 1000

    def __post_init__(self):
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(
                    f"{name} must be an int, got {type(value).__name__} {value!r}."
                )
        for name in ("lr", "momentum"):
            value = getattr(self, name)
            number = int | float | np.integer | np.floating
            if isinstance(value, bool) or not isinstance(value, number):
                raise TypeError(
                    f"{name} must be a number, got {type(value).__name__} {value!r}."
                )
        checks = [
            (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
            (self.lr > 0 and math.isfinite(self.lr), f"lr must be > 0, got {self.lr}"),
            (
                0 <= self.momentum < 1,
                f"momentum must be in [0, 1), got {self.momentum}",
            ),
            (self.epochs >= 1, f"epochs must be >= 1, got {self.epochs}"),
            (
                -(2**63) <= self.seed < 2**63,
                f"seed must fit in 64 bits, in [-2**63, 2**63), got {self.seed}",
            ),
            (
                self.optimizer in OPTIMIZERS,
                f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}",
            ),
            (self.loop in LOOPS, f"loop must be one of {LOOPS}, got {self.loop!r}"),
            (
                len(self.widths) == 2 and min(self.widths) >= 1,
                f"widths must be two positive ints, got {self.widths}",
            ),
            (self.log_every >= 1, f"log_every must be >= 1, got {self.log_every}"),
            (
                self.checkpoint_every >= 0,
                f"checkpoint_every must be >= 0, got {self.checkpoint_every}",
            ),
            (
                self.eval_batch_size >= 1,
                f"eval_batch_size must be >= 1, got {self.eval_batch_size}",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message + ".")


_INT_FIELDS = (
    "batch_size",
    "epochs",
    "seed",
    "log_every",
    "checkpoint_every",
    "eval_batch_size",
)


class TrainState(NamedTuple):
    params: Any
    opt_state: Any
    step: jax.Array  # int32 scalar: optimizer steps taken


def make_optimizer(config: Config) -> optax.GradientTransformation:
    """The Optax counterpart of the torch optimizer named by ``config.optimizer``."""
    lr, mu = config.lr, config.momentum or None
    if config.optimizer == "sgd":  # torch: optim.SGD(lr=0.001, momentum=0.9)
        return optax.sgd(lr, momentum=mu)
    if config.optimizer == "nesterov":  # torch: optim.SGD(..., nesterov=True)
        return optax.sgd(lr, momentum=mu, nesterov=True)
    if config.optimizer == "adam":  # torch: optim.Adam(lr=...)
        return optax.adam(lr)
    # torch: optim.RMSprop(lr=...): alpha 0.99, eps 1e-8 outside the square root.
    return optax.rmsprop(lr, decay=0.99, eps=1e-8, eps_in_sqrt=False)


def init_state(config: Config, in_channels: int, num_classes: int = 10) -> TrainState:
    key = jax.random.fold_in(jax.random.key(config.seed), 0)
    params = models.init_lenet(key, in_channels, config.widths, num_classes)
    tx = make_optimizer(config)
    return TrainState(params, tx.init(params), jnp.zeros((), jnp.int32))


def data_key(config: Config, epoch: int) -> jax.Array:
    """The key that orders epoch ``epoch``'s data (same seed, same order anywhere)."""
    return jax.random.fold_in(jax.random.fold_in(jax.random.key(config.seed), 1), epoch)


def train_step(
    state: TrainState,
    images: jax.Array,  # (B, C, 32, 32)
    labels: jax.Array,  # (B,)
    mask: jax.Array,  # (B,) 1 for real examples, 0 for padding
    tx: optax.GradientTransformation,
    grad_chunk: int | None = None,
    axis_name: str | None = None,
) -> tuple[TrainState, jax.Array]:
    """One optimizer step on one batch; returns the new state and the batch loss.

    ``grad_chunk`` (must divide the batch) computes the gradient ``grad_chunk``
    images at a time in a ``lax.scan`` and sums the chunks' masked sums before
    dividing by the batch's count: the same mean, with each chunk's im2col patches
    small enough to stay in cache (measured 10-25 % more images/s at batch 128-512
    on a 2-core CPU). The single-device loops choose it with :func:`grad_chunk`.

    ``axis_name``: run per device inside ``shard_map`` (data parallelism,
    :mod:`jaxblitz.parallel`); each device's masked loss sum, gradient sum and
    example count are summed over that mesh axis before the mean, so the step is
    the whole batch's.
    """
    batch = (state.params, images, labels, mask)
    if grad_chunk is None or grad_chunk >= images.shape[0]:
        loss, grads = jax.value_and_grad(_masked_sum)(*batch)  # sums, not means
    else:
        loss, grads = _chunked_sums(*batch, grad_chunk)
    count = jnp.sum(mask)
    if axis_name is not None:  # torch: DataParallel's gradient all-reduce
        loss, grads, count = jax.lax.psum((loss, grads, count), axis_name)
    count = jnp.maximum(count, 1)  # the mean over the kept examples
    loss, grads = loss / count, jax.tree.map(lambda g: g / count, grads)
    updates, opt_state = tx.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return TrainState(params, opt_state, state.step + 1), loss


def epoch_order(
    key: jax.Array, num_examples: int, batch_size: int, drop_last: bool = False
) -> tuple[jax.Array, jax.Array]:
    """Batch indices ``(S, B)`` and mask ``(S, B)`` of one shuffled epoch.

    The last partial batch is padded with index 0 and masked out (its loss and
    gradients are the partial batch's), or dropped with ``drop_last``. A
    ``batch_size`` above ``num_examples`` gives one batch of every example
    (``B = num_examples``), as a torch ``DataLoader`` does.
    """
    if num_examples < 1:
        raise ValueError("Cannot train on an empty dataset (0 examples).")
    perm = jax.random.permutation(key, num_examples).astype(jnp.int32)
    if not drop_last:  # torch: a DataLoader batch larger than the data is all of it
        batch_size = min(batch_size, num_examples)
    steps = num_examples // batch_size if drop_last else -(-num_examples // batch_size)
    if steps == 0:
        raise ValueError(
            f"drop_last=True with batch_size {batch_size} > {num_examples} examples "
            "leaves no batch; lower the batch size or keep the last batch."
        )
    total = steps * batch_size
    mask = (jnp.arange(total) < num_examples).astype(jnp.float32)
    perm = jnp.pad(perm, (0, max(total - num_examples, 0)))[:total]
    return perm.reshape(steps, batch_size), mask.reshape(steps, batch_size)


def _masked_sum(params, images, labels, mask):
    """The batch's summed loss over the kept examples (cross_entropy's numerator)."""
    logits = models.lenet(params, images)
    return models.cross_entropy(logits, labels, mask) * jnp.sum(mask)


def _chunked_sums(params, images, labels, mask, chunk: int):
    """:func:`_masked_sum` and its gradient, ``chunk`` images at a time."""
    b = images.shape[0]
    if b % chunk:
        raise ValueError(f"grad_chunk {chunk} must divide the batch size {b}.")
    n = b // chunk
    chunks = (
        images.reshape(n, chunk, *images.shape[1:]),
        labels.reshape(n, chunk),
        mask.reshape(n, chunk),
    )

    def body(total, xs):
        return jax.tree.map(
            jnp.add, total, jax.value_and_grad(_masked_sum)(params, *xs)
        ), None

    zero = (jnp.zeros((), images.dtype), jax.tree.map(jnp.zeros_like, params))
    return jax.lax.scan(body, zero, chunks)[0]


def grad_chunk(batch_size: int) -> int | None:
    """The ``grad_chunk`` the single-device loops use at ``batch_size``.

    Chunks of 8 from batch 64 up (the fastest measured at 128 and 512); small
    batches run whole.
    """
    return 8 if batch_size >= 64 and batch_size % 8 == 0 else None


def cpu_threads(batch_size: int) -> int | None:
    """The XLA:CPU thread count ``jaxblitz-train`` picks at ``batch_size`` on one
    device: 1 for the Blitz's batch of 4 (None: every core, JAX's default).

    A batch-4 step is ~100 small ops, each too small to split; with a thread
    per core, consecutive ops ran on alternate cores (each reading the last one's
    output from the other core's cache), and one thread measured 1.15-1.3x faster
    per step (372-377 vs 423-456 us, separate processes taking turns). From
    batch 8 the ops are big enough to share: one thread was slower there (B=8
    700-715 vs 610-690 us; B=16-32 1.2-1.4x slower).
    """
    return 1 if batch_size <= 4 else None


def set_cpu_threads(threads: int) -> bool:
    """Size XLA:CPU's thread pool to ``threads``; call it before JAX starts.

    JAX sizes the CPU backend's thread pool from the process's CPU affinity when
    the backend starts (on the first ``jax.devices()``, array or computation) and
    offers no other knob (jax-ml/jax#1539). This narrows the affinity to
    ``threads`` cores, starts the backends, then gives every thread of the
    process its full affinity back: the pool keeps its size, and no thread stays
    pinned. Returns False where it cannot act (no ``sched_setaffinity``: macOS,
    Windows) or ``threads`` is not below the cores available. A GPU or TPU run is
    unaffected apart from JAX's CPU backend, which it barely uses.

    Raises:
      RuntimeError: JAX's backends have already started.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}.")
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        raise RuntimeError(
            "set_cpu_threads must run before JAX starts its backends (before the "
            "first jax.devices(), array or computation in this process)."
        )
    if not hasattr(os, "sched_setaffinity"):
        return False
    cores = os.sched_getaffinity(0)
    if threads >= len(cores):
        return False
    os.sched_setaffinity(0, set(sorted(cores)[:threads]))
    try:
        jax.devices()  # the CPU client reads the affinity as it starts
    finally:
        # Threads the backends started inherited the narrow mask; one may have
        # exited since (OSError).
        for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc") else ():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(tid), cores)
        os.sched_setaffinity(0, cores)
    return True


def _indexed_step(state, data, idx, mask, tx):
    images, labels = data
    chunk = grad_chunk(idx.shape[0])
    return train_step(state, images[idx], labels[idx], mask, tx, chunk)


# The two loops share one body, so they compute the same thing.
jit_step = jax.jit(_indexed_step, static_argnames="tx", donate_argnums=0)


@partial(jax.jit, static_argnames="tx", donate_argnums=0)
def run_steps(state, data, idx, mask, tx):
    """Steps over the batches ``idx`` ``(S, B)`` as one compiled ``lax.scan``."""

    images, labels = data
    chunk = grad_chunk(idx.shape[1])

    # Each step gathers the next step's batch into the loop's carry: a gather fused
    # into conv1's patch builder was redone for every window shift (the slowest
    # loop of a batch-4 step); a carried batch is a buffer. The last step's gather
    # (of the first batch again) is unused.
    def body(carry, xs):
        state, (x, y) = carry
        next_idx, m = xs
        state, loss = train_step(state, x, y, m, tx, chunk)
        return (state, (images[next_idx], labels[next_idx])), loss

    first = (images[idx[0]], labels[idx[0]])
    (state, _), losses = jax.lax.scan(
        body, (state, first), (jnp.roll(idx, -1, axis=0), mask)
    )
    return state, losses


def run_loop(state, data, idx, mask, tx):
    """The same as :func:`run_steps`, as a Python loop over a jitted step."""
    losses = []
    for i in range(idx.shape[0]):
        state, loss = jit_step(state, data, idx[i], mask[i], tx)
        losses.append(loss)
    return state, jnp.stack(losses)


def _chunk_ends(start: int, steps: int, config: Config) -> list[int]:
    """Positions in the epoch where the loop stops to log or checkpoint."""
    ends = set(range(config.log_every, steps, config.log_every)) | {steps}
    if config.checkpoint_every:
        ends |= set(range(config.checkpoint_every, steps, config.checkpoint_every))
    return sorted(e for e in ends if e > start)


def fit(
    config: Config,
    dataset,
    state: TrainState | None = None,
    *,
    checkpointer=None,
    resume: bool = False,
    log: Callable[[str], None] = print,
    progress: bool = False,
    on_epoch_end: Callable[[int, TrainState, dict], dict] | None = None,
    mesh=None,
) -> tuple[TrainState, list[dict]]:
    """Train for ``config.epochs`` on ``dataset`` (``images`` NCHW, ``labels``).

    Returns the final state and one metrics dict per epoch (``losses``: every batch's
    loss, ``images_per_s``, ``wall_s``, plus what ``on_epoch_end`` returns).
    Checkpoints are written at epoch ends and every ``config.checkpoint_every``
    steps; with ``resume`` the newest one is restored and training continues exactly
    where it stopped. With a ``mesh`` (:func:`jaxblitz.parallel.make_mesh`) each
    batch is split over its devices and the state replicated (data parallelism).
    """
    tx = make_optimizer(config)
    n = check_dataset(dataset)
    in_channels, num_classes = dataset.images.shape[1], len(dataset.class_names)
    check_memory(config, in_channels, n, num_classes, mesh)
    devices = 1 if mesh is None else int(mesh.devices.size)
    identity = run_identity(config, dataset)
    record = {"id": uuid.uuid4().hex[:12], "identity": identity, "changes": []}
    latest = None if checkpointer is None else checkpointer.latest_step()
    if resume and checkpointer is None:
        raise ValueError("resume=True needs a checkpointer to resume from.")
    if resume and latest is None:
        raise FileNotFoundError(
            f"Nothing to resume: {checkpointer.directory} holds no checkpoint. "
            "Start the run without resume (drop --resume)."
        )
    if not resume and latest is not None:
        raise RunMismatchError(
            f"{checkpointer.directory} holds checkpoints of an earlier run (newest: "
            f"step {latest}). Continue that run with resume=True (jaxblitz-train "
            "--resume), train into a new directory (--out-dir), or start a new run "
            "there with jaxblitz-train --fresh, which moves the earlier run aside "
            "(nothing is deleted)."
        )
    if state is None:
        state = init_state(config, in_channels, num_classes)
    _check_labels(dataset.labels, state.params["fc3"]["weight"].shape[0])
    start_epoch, position, losses, history = 0, 0, [], []
    if resume:
        # Settings are compared before any array is read: a different run is
        # named as such, not reported as a damaged file.
        meta = checkpointer.read_meta(latest)
        record = _resumed_run(
            meta, config, identity, latest, checkpointer.directory, devices
        )
        for change in record["changes"]:
            if change["step"] == latest:
                log(
                    f"Resuming with {change['setting']} changed from "
                    f"{change['from']} to {change['to']} at step {latest}."
                )
        state, meta = checkpointer.restore(state, latest)
        start_epoch, position = meta["epoch"], meta["position"]
        losses, history = meta["losses"], meta["history"]
        log(
            f"Resumed from step {int(state.step)} (epoch {start_epoch + 1}, batch "
            f"{position}) of run {record['id']}."
        )

    def save(epoch: int, pos: int) -> None:
        if checkpointer is not None:
            meta = dict(
                config=dataclasses.asdict(config),
                devices=devices,
                run=record,
                epoch=epoch,
                position=pos,
                losses=losses,
                history=history,
            )
            checkpointer.save(int(state.step), state, meta)

    if mesh is None:  # the whole split on the device once
        data = (jnp.asarray(dataset.images), jnp.asarray(dataset.labels, jnp.int32))
        run = run_steps if config.loop == "scan" else run_loop
    else:  # each step's batch gathered on the host and split over the mesh
        from jaxblitz import parallel

        data = (np.asarray(dataset.images), np.asarray(dataset.labels, np.int32))
        run = parallel.make_run(mesh, config.loop)
        state = parallel.replicate(state, mesh)
    interrupt = _StopSignals() if checkpointer is not None else None

    def stop(epoch: int, pos: int) -> TrainingInterrupted:
        bar.close()
        return TrainingInterrupted(
            interrupt.signum,
            f"Training interrupted at step {int(state.step)} (epoch {epoch + 1}, "
            f"batch {pos}) by {signal.Signals(interrupt.signum).name}; a checkpoint "
            f"is saved in {checkpointer.directory}. "
            "Continue with resume=True (jaxblitz-train --resume).",
        )

    try:
        for epoch in range(start_epoch, config.epochs):
            idx, mask = epoch_order(
                data_key(config, epoch), n, config.batch_size, config.drop_last
            )
            steps, t0, seen = idx.shape[0], time.perf_counter(), 0
            bar = tqdm(
                total=steps,
                initial=position,
                desc=f"epoch {epoch + 1}",
                disable=not progress,
                leave=False,
            )
            for end in _chunk_ends(position, steps, config):
                step0 = int(state.step)  # state is donated to the compiled steps
                new_state, chunk = run(
                    state, data, idx[position:end], mask[position:end], tx
                )
                chunk = np.asarray(chunk)
                if not np.all(np.isfinite(chunk)):
                    bad = int(np.argmin(np.isfinite(chunk)))
                    raise FloatingPointError(
                        f"Loss became {chunk[bad]} at step {step0 + bad + 1} "
                        f"(epoch {epoch + 1}, batch {position + bad + 1}); training "
                        "stopped. The last good checkpoint is kept; lower the learning "
                        "rate or check the data."
                    )
                state = new_state
                seen += int(np.asarray(mask[position:end]).sum())
                losses.extend(chunk.tolist())
                bar.update(end - position)
                rate = seen / (time.perf_counter() - t0)
                bar.set_postfix(loss=f"{chunk[-1]:.3f}", img_s=f"{rate:,.0f}")
                position = end
                if position % config.log_every == 0:  # the Blitz's running loss
                    running = np.mean(losses[position - config.log_every : position])
                    log(f"[{epoch + 1}, {position:5d}] loss: {running:.3f}")
                at_interval = (
                    config.checkpoint_every and not position % config.checkpoint_every
                )
                if at_interval and position < steps:  # the epoch end saves just below
                    save(epoch, position)
                if interrupt is not None and interrupt.requested and position < steps:
                    if not at_interval:
                        save(epoch, position)
                    raise stop(epoch, position)
            bar.close()
            wall = time.perf_counter() - t0
            metrics = {
                "epoch": epoch + 1,
                "loss": float(np.mean(losses)),
                "losses": losses,
                "images_per_s": seen / wall,
                "wall_s": wall,
            }
            if on_epoch_end is not None:
                metrics.update(on_epoch_end(epoch, state, metrics))
            history.append(metrics)
            position, losses = 0, []
            save(epoch + 1, 0)
            if (
                interrupt is not None
                and interrupt.requested
                and epoch + 1 < config.epochs
            ):
                raise stop(epoch + 1, 0)
    finally:
        if interrupt is not None:
            interrupt.restore()
    return state, history


class TrainingInterrupted(KeyboardInterrupt):
    """:func:`fit` stopped on a signal after saving a checkpoint; ``signum`` says
    which (a shell's exit code for it is ``128 + signum``)."""

    def __init__(self, signum: int, message: str):
        super().__init__(message)
        self.signum = signum


class _StopSignals:
    """Ctrl-C (SIGINT), SIGTERM and SIGHUP during :func:`fit`: finish the running
    steps, checkpoint, stop. Batch schedulers send SIGTERM some time before they
    kill; a closed terminal sends SIGHUP.

    Installed only in the main thread. A second signal stops at once (the last
    checkpoint written stays).
    """

    SIGNALS = tuple(
        getattr(signal, name)
        for name in ("SIGINT", "SIGTERM", "SIGHUP")
        if hasattr(signal, name)
    )

    def __init__(self):
        self.signum: int | None = None
        self._previous: dict = {}
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum, frame):
        if self.requested:
            raise TrainingInterrupted(signum, "Stopped at once (second signal).")
        self.signum = signum
        # os.write, not print: safe even if the signal lands inside a print.
        os.write(
            sys.stderr.fileno(),
            f"\n{signal.Signals(signum).name}: finishing the running steps, then "
            "saving a checkpoint (send it again to stop at once).\n".encode(),
        )

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous = {}


def check_dataset(dataset) -> int:
    """The number of examples, after checking ``dataset`` can be trained on."""
    images, labels = dataset.images, dataset.labels
    if getattr(images, "ndim", None) != 4 or tuple(images.shape[2:]) != (32, 32):
        raise ValueError(
            "dataset.images must be shaped (N, C, 32, 32); got "
            f"{getattr(images, 'shape', type(images).__name__)}."
        )
    if not np.issubdtype(images.dtype, np.floating):
        raise TypeError(
            f"dataset.images must be floating point (normalised); got {images.dtype}. "
            "jaxblitz.data.normalize turns uint8 pixels into float32 in [-1, 1]."
        )
    if np.shape(labels) != (len(images),):
        raise ValueError(
            f"dataset has {len(images)} images but labels shaped {np.shape(labels)}; "
            f"expected ({len(images)},): one label per image."
        )
    if len(images) == 0:
        raise ValueError("Cannot train on an empty dataset (0 examples).")
    return len(images)


def _check_labels(labels, num_classes: int) -> None:
    labels = np.asarray(labels)
    if labels.size == 0:
        return
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integer class indices; got {labels.dtype}.")
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= num_classes:
        raise ValueError(
            f"labels must be class indices in [0, {num_classes}); got values from "
            f"{low} to {high}. Check the dataset, or give the model more classes "
            "(dataset.class_names sets how many)."
        )


class RunMismatchError(ValueError):
    """Checkpoints of another run, or of this run under other settings.

    Not corruption: the files are good, so the message never says to delete them.
    """


# What a run computes: a checkpoint resumes only under the same values. The other
# settings say how to run it (epochs, loop, logging, checkpoint spacing, eval
# batch, the number of devices); they may change on resume, and each change is
# recorded with its step.
IDENTITY = (
    "dataset",
    "batch_size",
    "lr",
    "momentum",
    "seed",
    "widths",
    "optimizer",
    "drop_last",
)
_CHANGEABLE = ("epochs", "loop", "log_every", "checkpoint_every", "eval_batch_size")


def run_identity(config: Config, dataset) -> dict:
    """What defines a run's numbers: the identity settings and the data's shape."""
    identity = {k: _plain(getattr(config, k)) for k in IDENTITY}
    identity["data"] = {
        "examples": len(dataset.labels),
        "image_shape": list(dataset.images.shape[1:]),
        "classes": len(dataset.class_names),
    }
    return identity


def _plain(value):  # as JSON gives it back: tuples are lists
    return list(value) if isinstance(value, tuple) else value


def _resumed_run(
    meta: dict, config: Config, identity: dict, step: int, where, devices: int = 1
) -> dict:
    """The checkpoint's run record, with this resume's setting changes appended.

    Raises RunMismatchError naming each setting that may not change.
    """
    shapes = {"config": dict, "epoch": int, "position": int, "run": dict | None}
    wrong = [k for k, kind in shapes.items() if not isinstance(meta.get(k), kind)]
    if wrong:  # read unverified: a damaged file must not crash here
        raise CorruptFileError(
            f"Checkpoint step {step} in {where} has damaged metadata "
            f"({', '.join(wrong)} missing or mistyped). Move {where}/{step} out of "
            f"{where} to resume from an earlier checkpoint, or start afresh in a new "
            "directory."
        )
    saved_config = meta["config"]
    run = meta.get("run")
    if not isinstance(run, dict):  # written before runs had an identity
        run = {
            "id": "unnamed",
            "identity": {k: saved_config[k] for k in IDENTITY if k in saved_config},
            "changes": [],
        }
    saved = run.get("identity", {})
    diff = [
        f"{k}: checkpoint {saved[k]!r}, now {identity[k]!r}"
        for k in identity
        if k in saved and saved[k] != identity[k]
    ]
    if diff:
        raise RunMismatchError(
            f"Cannot resume from {where} (step {step}): its run used other "
            f"settings: {'; '.join(diff)}. Resume with the checkpoint's settings, "
            "train into a new --out-dir, or start a new run there with --fresh, "
            "which moves the earlier run aside (nothing is deleted)."
        )
    begun = meta.get("epoch", 0) + (1 if meta.get("position", 0) else 0)
    if config.epochs < begun:
        raise RunMismatchError(
            f"Cannot resume from {where} (step {step}) with epochs={config.epochs}: "
            f"the run has already trained into epoch {begun}. Give at least "
            f"--epochs {begun} (more extends the run)."
        )
    changes = list(run.get("changes", []))
    now = {k: getattr(config, k) for k in _CHANGEABLE} | {"devices": devices}
    before = saved_config | {"devices": meta.get("devices", 1)}
    for k, value in now.items():  # more devices: equal up to float rounding
        if k in before and before[k] != value:
            changes.append({"step": step, "setting": k, "from": before[k], "to": value})
    return {**run, "changes": changes}


def memory_estimate(
    config: Config,
    in_channels: int,
    num_examples: int,
    num_classes: int = 10,
    devices: int = 1,
) -> int:
    """Bytes a training run needs on one device, roughly and from below.

    Parameters with their gradients, updates and optimizer slots; the split on the
    device; one gradient chunk's patches and activations, kept for the backward.
    """
    c, (w1, w2) = in_channels, config.widths
    params = (
        (c * 25 + 1) * w1 + (w1 * 25 + 1) * w2 + (w2 * 25 + 1) * 120 + 121 * 84
    ) + 85 * num_classes
    slots = {"adam": 2, "rmsprop": 1}.get(config.optimizer, int(config.momentum > 0))
    rows = -(-min(config.batch_size, num_examples) // devices)  # per device
    rows = grad_chunk(rows) or rows
    per_image = c * 25 * 784 + 2 * w1 * 784 + w1 * 25 * 100 + 2 * w2 * 100
    values = (
        params * (4 + slots) + 2 * rows * per_image + num_examples * c * 1024 // devices
    )
    return 4 * values  # float32


def check_memory(config, in_channels, num_examples, num_classes=10, mesh=None):
    """Refuse up front a run that cannot fit in the device's memory."""
    devices = 1 if mesh is None else mesh.devices.size
    need = memory_estimate(config, in_channels, num_examples, num_classes, devices)
    have = device_memory()
    if have is not None and need > have:
        raise ValueError(
            f"This run needs at least {need / 2**30:,.1f} GiB on one device "
            f"(widths {config.widths}, batch {config.batch_size}, {in_channels} "
            f"channel(s)), more than the {have / 2**30:,.1f} GiB it has. Lower "
            "--batch-size or --widths."
        )


def device_memory() -> int | None:
    """Bytes of memory on JAX's first device (RAM, within any cgroup limit, on a
    CPU); None where it cannot be told."""
    device = jax.devices()[0]
    if device.platform != "cpu":
        return (device.memory_stats() or {}).get("bytes_limit")
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    with contextlib.suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            total = min(total, int(limit))
    return total


@jax.jit
def predict_batch(params, images: jax.Array) -> jax.Array:
    """Predicted class indices ``(B,)`` for images ``(B, C, 32, 32)``."""
    chunk = models.eval_chunk(images.shape[0])  # cache-sized convolutions
    return jnp.argmax(models.lenet(params, images, chunk=chunk), axis=-1)


def predict(params, images: np.ndarray, batch_size: int = 1000) -> np.ndarray:
    """Predictions for a whole split, in compiled batches of one shape.

    Every batch is dispatched before any result is read back, so copying the
    next batch in overlaps the device's work on the last (JAX's async dispatch).
    """
    n = len(images)
    out = []
    for start in range(0, n, batch_size):
        batch = images[start : start + batch_size]
        keep = len(batch)
        pad = batch_size - keep if n > batch_size else 0
        if pad:  # one compiled shape for every batch
            batch = np.pad(batch, ((0, pad), (0, 0), (0, 0), (0, 0)))
        out.append((predict_batch(params, jnp.asarray(batch)), keep))
    return (
        np.concatenate([np.asarray(p)[:keep] for p, keep in out])
        if out
        else np.zeros(0, np.int64)
    )


def evaluate(params, dataset, batch_size: int = 1000) -> dict:
    """Test accuracy, per-class accuracy and the confusion matrix (rows: truth)."""
    k = len(dataset.class_names)
    labels = np.asarray(dataset.labels)
    _check_labels(labels, k)
    predicted = predict(params, dataset.images, batch_size)
    confusion = np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k)
    per_class_total = confusion.sum(axis=1)
    per_class = {
        name: float(confusion[i, i] / per_class_total[i]) if per_class_total[i] else 0.0
        for i, name in enumerate(dataset.class_names)
    }
    return {
        "accuracy": float(np.trace(confusion) / max(len(labels), 1)),
        "correct": int(np.trace(confusion)),
        "total": len(labels),
        "per_class": per_class,
        "confusion": confusion.tolist(),
    }


def report_lines(result: dict) -> list[str]:
    """The Blitz's accuracy printout for an :func:`evaluate` result."""
    total = result["total"]
    lines = [
        f"Accuracy of the network on the {total} test images: "
        f"{100 * result['correct'] // max(total, 1)} %"
    ]
    for name, acc in result["per_class"].items():
        lines.append(f"Accuracy for class: {name:5s} is {100 * acc:.1f} %")
    return lines


if __name__ == "__main__":  # python -m jaxblitz.train
    from jaxblitz.cli import main

    sys.exit(main())
