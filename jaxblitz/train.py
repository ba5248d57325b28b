"""Blitz 4, "Training a classifier": LeNet on CIFAR-10 with SGD and momentum.

Library functions in the style of Flax's MNIST example; ``jaxblitz-train``
(:mod:`jaxblitz.cli`) prints:

- :func:`train_step`: one SGD step, state in, state out (torch: ``zero_grad``,
  ``forward``, ``loss.backward()``, ``optimizer.step()``), built from
  :func:`batch_sums` and :func:`apply_mean` (data parallelism sums between them);
- :func:`run_steps` / :func:`run_loop`: the same steps as one compiled ``lax.scan``
  (``loop="scan"``) or as a Python loop over a jitted step (``loop="step"``); both
  give the same parameters;
- :func:`fit`: epochs with running-loss reports, checkpoints and exact resume, on
  one device or on any runner (:class:`jaxblitz.parallel.Sharded`).

Evaluation lives in :mod:`jaxblitz.evaluate`; what a run is (and what may change
when it resumes) in :mod:`jaxblitz.runs`; whether a run fits in the device's memory
in :mod:`jaxblitz.resources`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import signal
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from jaxblitz import data as datasets
from jaxblitz import kernels, models, optimizers, resources, runs

if TYPE_CHECKING:
    from jaxblitz.checkpoints import Checkpointer

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


@functools.cache  # one transformation per Config: jitted steps keyed on it hit
def make_optimizer(config: Config) -> optax.GradientTransformation:
    """The Optax counterpart of the torch optimizer named by ``config.optimizer``."""
    lr, mu = config.lr, config.momentum or None
    if config.optimizer == "sgd":  # torch: optim.SGD(lr=0.001, momentum=0.9)
        return optimizers.sgd(lr, momentum=mu)
    if config.optimizer == "nesterov":  # torch: optim.SGD(..., nesterov=True)
        return optimizers.sgd(lr, momentum=mu, nesterov=True)
    if config.optimizer == "adam":  # torch: optim.Adam(lr=...)
        return optimizers.adam(lr)
    return optimizers.rmsprop(lr)  # torch: optim.RMSprop(lr=...)


def init_state(config: Config, in_channels: int, num_classes: int = 10) -> TrainState:
    key = jax.random.fold_in(jax.random.key(config.seed), 0)
    params = models.init_lenet(key, in_channels, config.widths, num_classes)
    tx = make_optimizer(config)
    return TrainState(params, tx.init(params), jnp.zeros((), jnp.int32))


def data_key(config: Config, epoch: int) -> jax.Array:
    """The key that orders epoch ``epoch``'s data (same seed, same order anywhere)."""
    return jax.random.fold_in(jax.random.fold_in(jax.random.key(config.seed), 1), epoch)


def batch_sums(
    params,
    images: jax.Array,  # (B, C, 32, 32)
    labels: jax.Array,  # (B,)
    mask: jax.Array,  # (B,) 1 for real examples, 0 for padding
    grad_chunk: int | None = None,
) -> tuple[jax.Array, Any, jax.Array]:
    """``(loss_sum, grad_sum, count)`` over the kept examples of one batch.

    Sums, not means: shards of a batch add up (:mod:`jaxblitz.parallel` sums them
    over devices) before :func:`apply_mean` divides once. ``grad_chunk`` (must
    divide B) takes the gradient that many images at a time, so each chunk's
    patches stay in cache; the loops pick it with ``kernels.grad_chunk``.
    """
    value_and_grad = kernels.chunked_value_and_grad(_masked_sum, grad_chunk)
    loss, grads = value_and_grad(params, images, labels, mask)
    return loss, grads, jnp.sum(mask)


def apply_mean(state: TrainState, loss, grads, count, tx) -> tuple[TrainState, Any]:
    """Divide the sums by the kept examples and take one optimizer step."""
    count = jnp.maximum(count, 1)
    loss, grads = loss / count, jax.tree.map(lambda g: g / count, grads)
    updates, opt_state = tx.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return TrainState(params, opt_state, state.step + 1), loss


def train_step(
    state: TrainState,
    images: jax.Array,  # (B, C, 32, 32)
    labels: jax.Array,  # (B,)
    mask: jax.Array,  # (B,) 1 for real examples, 0 for padding
    tx: optax.GradientTransformation,
    grad_chunk: int | None = None,
) -> tuple[TrainState, jax.Array]:
    """One optimizer step on one batch; returns the new state and the batch loss."""
    sums = batch_sums(state.params, images, labels, mask, grad_chunk)
    return apply_mean(state, *sums, tx)


def _masked_sum(params, images, labels, mask):
    """The batch's summed loss over the kept examples (cross_entropy's numerator)."""
    logits = models.lenet(params, images)
    return models.cross_entropy(logits, labels, mask) * jnp.sum(mask)


def _indexed_step(state, data, idx, mask, tx):
    images, labels = data
    chunk = kernels.grad_chunk(idx.shape[0])
    return train_step(state, images[idx], labels[idx], mask, tx, chunk)


# The two loops share one body, so they compute the same thing.
jit_step = jax.jit(_indexed_step, static_argnames="tx", donate_argnums=0)


@partial(jax.jit, static_argnames="tx", donate_argnums=0)
def run_steps(state, data, idx, mask, tx):
    """Steps over the batches ``idx`` ``(S, B)`` as one compiled ``lax.scan``."""

    images, labels = data
    chunk = kernels.grad_chunk(idx.shape[1])

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
    """The same as :func:`run_steps`, as a Python loop over a jitted step.

    Each step's indices go in from host memory: slicing row i out of a device
    array is an eager program launch per array, which on a GPU made up two
    thirds of a batch-4 step (BENCHMARKS.md, "Launches on the GPU").
    """
    idx, mask = np.asarray(idx), np.asarray(mask)
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


# run(state, data, idx, mask, tx) -> (state, losses): a chunk of steps
Steps = Callable[..., tuple[TrainState, jax.Array]]


class Runner(Protocol):
    """What :func:`fit` asks of a runner: :class:`Local` (one device) or
    :class:`jaxblitz.parallel.Sharded` (data parallel), or any object with these."""

    @property
    def devices(self) -> int:
        """How many devices share each batch (its rows are padded to a multiple)."""
        ...

    def place(
        self, state: TrainState, images: np.ndarray, labels: np.ndarray
    ) -> tuple[TrainState, Any]:
        """``(state, data)`` where the runner wants them; ``data`` goes to ``run``."""
        ...

    def run(self, loop: str) -> Steps:
        """``run(state, data, idx, mask, tx) -> (state, losses)`` for ``loop``."""
        ...


class Local:
    """The default runner: one device, the whole split put on it once."""

    devices = 1

    def place(
        self, state: TrainState, images: np.ndarray, labels: np.ndarray
    ) -> tuple[TrainState, tuple[jax.Array, jax.Array]]:
        """``(state, data)`` where the runner wants them."""
        return state, (jnp.asarray(images), jnp.asarray(labels, jnp.int32))

    def run(self, loop: str) -> Steps:
        """``run(state, data, idx, mask, tx) -> (state, losses)`` for ``loop``."""
        return run_steps if loop == "scan" else run_loop

    def to_host(self, tree):
        return tree


def fit(
    config: Config,
    dataset: datasets.Dataset,
    state: TrainState | None = None,
    *,
    checkpointer: Checkpointer | None = None,
    resume: bool = False,
    log: Callable[[str], None] = print,
    progress: bool = False,
    on_epoch_end: Callable[[int, TrainState, dict], dict] | None = None,
    runner: Runner | None = None,
    stop: Callable[[], int | None] | None = None,
    test_set: datasets.Dataset | None = None,
    accept_data_change: bool = False,
) -> tuple[TrainState, list[dict]]:
    """Train for ``config.epochs`` on ``dataset`` (``images`` NCHW, ``labels``).

    Returns the final state and one metrics dict per epoch (``losses``: every batch's
    loss, ``images_per_s``, ``wall_s``, plus what ``on_epoch_end`` returns).
    Checkpoints are written at epoch ends and every ``config.checkpoint_every``
    steps; with ``resume`` the newest one is restored and training continues exactly
    where it stopped (only a checkpoint of the same run: :mod:`jaxblitz.runs`).
    ``runner`` runs the steps: :class:`Local` (one device) by default,
    :class:`jaxblitz.parallel.Sharded` for data parallelism. ``stop`` is polled
    between compiled chunks; when it returns a signal number, ``fit`` saves a
    checkpoint and raises :class:`TrainingInterrupted` (``jaxblitz.cli.StopSignals``
    turns Ctrl-C, SIGTERM and SIGHUP into that).

    The run's record holds a digest of ``dataset`` and of ``test_set`` (the data
    ``on_epoch_end`` evaluates, if any): a resume on data of other contents is
    refused unless ``accept_data_change``, which records the change.
    """
    runner = Local() if runner is None else runner
    tx = make_optimizer(config)
    n = datasets.check_dataset(dataset)
    in_channels, num_classes = dataset.images.shape[1], len(dataset.class_names)
    resources.check_memory(config, in_channels, n, num_classes, runner.devices)
    if state is None:
        state = init_state(config, in_channels, num_classes)
    datasets.check_labels(dataset.labels, state.params["fc3"]["weight"].shape[0])
    state, record, (start_epoch, position, losses, history) = _start(
        config,
        (dataset, test_set),
        state,
        checkpointer,
        (resume, accept_data_change),
        runner.devices,
        log,
    )

    def save(state: TrainState, epoch: int, pos: int) -> None:
        if checkpointer is not None:
            meta = dict(
                config=dataclasses.asdict(config),
                devices=runner.devices,
                run=record,
                epoch=epoch,
                position=pos,
                losses=losses,
                history=history,
            )
            checkpointer.save(int(state.step), state, meta)

    def stopped(
        state: TrainState, epoch: int, pos: int, signum: int
    ) -> TrainingInterrupted:
        bar.close()
        saved = (
            f"a checkpoint is saved in {checkpointer.directory}. Continue with "
            "resume=True (jaxblitz-train --resume)."
            if checkpointer is not None
            else "no checkpointer was given, so nothing is saved."
        )
        return TrainingInterrupted(
            signum,
            f"Training interrupted at step {int(state.step)} (epoch {epoch + 1}, "
            f"batch {pos}) by {signal.Signals(signum).name}; {saved}",
        )

    state, data = runner.place(state, dataset.images, dataset.labels)
    run = runner.run(config.loop)
    for epoch in range(start_epoch, config.epochs):
        idx, mask = datasets.epoch_order(
            data_key(config, epoch),
            n,
            config.batch_size,
            config.drop_last,
            shards=runner.devices,
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
            new_state, on_device = run(
                state, data, idx[position:end], mask[position:end], tx
            )
            chunk = np.asarray(on_device)  # (end - position,) losses
            if not np.all(np.isfinite(chunk)):
                raise _not_finite(
                    chunk, step0, epoch, position, dataset.images, idx, mask,
                    checkpointer,
                )  # fmt: skip
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
                save(state, epoch, position)
            signum = stop() if stop is not None else None
            if signum is not None and position < steps:
                if not at_interval:
                    save(state, epoch, position)
                raise stopped(state, epoch, position, signum)
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
        save(state, epoch + 1, 0)
        signum = stop() if stop is not None else None
        if signum is not None and epoch + 1 < config.epochs:
            raise stopped(state, epoch + 1, 0, signum)
    return state, history


def _start(config, data, state, checkpointer, resume, devices, log):
    """``(state, run record, (epoch, position, losses, history))`` to start from:
    a new run's, or the newest checkpoint's of this same run when resuming.
    ``data``: (training set, test set or None); ``resume``: (resume, whether
    other data contents are accepted)."""
    (dataset, test_set), (resume, accept_data_change) = data, resume
    fresh: tuple[int, int, list[float], list[dict]] = (0, 0, [], [])
    latest = None if checkpointer is None else checkpointer.latest_step()
    if resume and checkpointer is None:
        raise ValueError("resume=True needs a checkpointer to resume from.")
    if not resume:
        if latest is not None:
            raise runs.RunMismatchError(
                f"{checkpointer.directory} holds checkpoints of an earlier run "
                f"(newest: step {latest}). Continue that run with resume=True "
                "(jaxblitz-train --resume), train into a new directory (--out-dir), "
                "or start a new run there with jaxblitz-train --fresh, which moves "
                "the earlier run aside (nothing is deleted)."
            )
        return state, runs.new_run(config, dataset, test_set), fresh
    if latest is None:
        raise FileNotFoundError(
            f"Nothing to resume: {checkpointer.directory} holds no checkpoint. "
            "Start the run without resume (drop --resume)."
        )
    # Settings are compared before any array is read: a different run is named as
    # such, not reported as a damaged file.
    identity = runs.run_identity(config, dataset, test_set)
    meta = checkpointer.read_meta(latest)
    record = runs.resumed_run(
        meta,
        config,
        identity,
        latest,
        checkpointer.directory,
        devices,
        accept_data_change,
    )
    for change in record["changes"]:
        if change["step"] == latest:
            log(
                f"Resuming with {change['setting']} changed from {change['from']} "
                f"to {change['to']} at step {latest}."
            )
    state, meta = checkpointer.restore(state, latest)
    log(
        f"Resumed from step {int(state.step)} (epoch {meta['epoch'] + 1}, batch "
        f"{meta['position']}) of run {record['id']}."
    )
    where = (meta["epoch"], meta["position"], meta["losses"], meta["history"])
    return state, record, where


def _not_finite(
    losses, step0, epoch, position, images, idx, mask, checkpointer
) -> FloatingPointError:
    """The error for a chunk whose losses are not all finite: the step, the
    batch's images that are not finite themselves (their indices in the
    dataset), and what became of the checkpoints."""
    bad = int(np.argmin(np.isfinite(losses)))
    rows = np.asarray(idx[position + bad])[np.asarray(mask[position + bad]) > 0]
    found = [int(i) for i in rows if not np.all(np.isfinite(np.asarray(images[i])))]
    if found:
        shown = ", ".join(map(str, sorted(found)[:10]))
        more = f" and {len(found) - 10} more" if len(found) > 10 else ""
        what = (
            f"the batch holds training image(s) {shown}{more} (index in the "
            "dataset) with nan or inf pixels; fix or drop them"
        )
    else:
        what = "its images are finite: lower the learning rate or check the labels"
    if checkpointer is None:
        kept = "No checkpoint is written (fit was given no checkpointer)."
    elif checkpointer.latest_step() is None:
        kept = "No checkpoint was written before it."
    else:
        kept = (
            f"The last good checkpoint (step {checkpointer.latest_step()}) is kept "
            f"in {checkpointer.directory}."
        )
    return FloatingPointError(
        f"Loss became {losses[bad]} at step {step0 + bad + 1} (epoch {epoch + 1}, "
        f"batch {position + bad + 1}); training stopped: {what}. {kept}"
    )


class TrainingInterrupted(KeyboardInterrupt):
    """:func:`fit` stopped on a signal after saving a checkpoint; ``signum`` says
    which (a shell's exit code for it is ``128 + signum``)."""

    def __init__(self, signum: int, message: str):
        super().__init__(message)
        self.signum = signum
