"""Blitz 4 from the command line: ``jaxblitz-train`` / ``python -m jaxblitz``.

Trains LeNet with the Blitz's settings, prints what the Blitz prints, and writes
into ``--out-dir``: ``metrics.json``, ``loss.png``, ``per_class.png``,
``samples.png``, ``checkpoints/`` and ``weights.safetensors``.

    jaxblitz-train --dataset digits --epochs 10 --log-every 100   # offline
    jaxblitz-train                                                # CIFAR-10, 2 epochs
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import jax
import jax.extend.backend
from tqdm.auto import tqdm

from jaxblitz import data, evaluate, parallel, plots, runs, runtime, train
from jaxblitz.checkpoints import Checkpointer, save_weights
from jaxblitz.files import (
    DirectoryInUseError,
    DirectoryLock,
    os_error_text,
    write_json,
)
from jaxblitz.runtime import accelerator_installed, set_cpu_threads


def _widths(text: str) -> tuple[int, int]:
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        widths = ()
    if len(widths) != 2 or min(widths) < 1:
        raise argparse.ArgumentTypeError(
            f"expected two positive ints like 6,16 or 32,64; got {text!r}"
        )
    return widths[0], widths[1]


def _threads(text: str) -> int | str:
    if text == "all":
        return text
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive int or 'all'; got {text!r}"
        )
    return threads


def build_parser() -> argparse.ArgumentParser:
    d = train.Config()
    p = argparse.ArgumentParser(
        prog="jaxblitz-train",
        description="Train the Blitz's LeNet classifier (CIFAR-10 by default).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--dataset",
        default=d.dataset,
        choices=("cifar10", "mnist", "fashion_mnist", "digits"),
    )
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--momentum", type=float, default=d.momentum)
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument(
        "--widths",
        type=_widths,
        default=d.widths,
        help="conv1,conv2 channels; the Blitz's 'wider' exercise: 32,64",
    )
    p.add_argument("--optimizer", default=d.optimizer, choices=train.OPTIMIZERS)
    p.add_argument(
        "--loop",
        default=d.loop,
        choices=train.LOOPS,
        help="scan: compiled lax.scan over batches; step: Python loop",
    )
    p.add_argument(
        "--api",
        default="functional",
        choices=("functional", "nnx"),
        help="the model's face: the core's params dict, or a Flax NNX Net "
        "(jaxblitz.nnx; the same steps and weights)",
    )
    p.add_argument("--drop-last", action="store_true")
    p.add_argument(
        "--log-every",
        type=int,
        default=d.log_every,
        help="print the running loss every N mini-batches",
    )
    p.add_argument(
        "--checkpoint-every",
        type=int,
        default=d.checkpoint_every,
        help="also checkpoint every N steps (0: epoch ends only)",
    )
    p.add_argument("--eval-batch-size", type=int, default=d.eval_batch_size)
    p.add_argument(
        "--data-dir",
        default=None,
        help="where datasets live (default $JAXBLITZ_DATA or ~/.cache/jaxblitz)",
    )
    p.add_argument("--out-dir", default=None, help="default runs/<dataset>")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out-dir from its newest checkpoint (only with "
        "the settings it was started with; --epochs may grow)",
    )
    p.add_argument(
        "--accept-data-change",
        action="store_true",
        help="with --resume: go on although the training or test data differ in "
        "content from the run's (recorded in metrics.json under run.changes)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="start a new run in an --out-dir that holds an earlier one, moving the "
        "earlier run's files into <out-dir>/earlier-<time>/ (nothing is deleted)",
    )
    p.add_argument(
        "--devices",
        default=None,
        help="data parallelism: split each batch over N devices (or 'all'); "
        f"default: one device, or on a multi-core CPU from batch "
        f"{SHARD_FROM_BATCH} one CPU device per core",
    )
    p.add_argument(
        "--cpu-threads",
        type=_threads,
        default=None,
        help="XLA:CPU threads, an int or 'all' (default: 1 at batch <= 4 on one "
        "device where no GPU or TPU plugin is installed, see BENCHMARKS.md; else "
        "all)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def cpu_threads(batch_size: int) -> int | None:
    """The XLA:CPU thread count ``jaxblitz-train`` picks at ``batch_size`` on one
    device: 1 for the Blitz's batch of 4 (None: every core, JAX's default).

    A batch-4 step is ~100 ops too small to split: with a pool thread per core,
    consecutive ops ran on alternate cores, each reading the last one's output
    from the other core's cache. From batch 8 the ops are big enough to share.
    BENCHMARKS.md has the measurements.
    """
    return 1 if batch_size <= 4 else None


# From this batch size, a CPU run splits each batch over one device per core: the
# per-core shards, each chunking its gradient, beat one device's intra-op threads
# there (BENCHMARKS.md); below it, one device.
SHARD_FROM_BATCH = 64


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_devices(batch_size: int) -> int | None:
    """The CPU devices ``jaxblitz-train`` splits a batch of ``batch_size`` over when
    no ``--devices`` is given: one per core from :data:`SHARD_FROM_BATCH`, else
    None (one device)."""
    cores = _cores()
    return cores if batch_size >= SHARD_FROM_BATCH and cores > 1 else None


class StopSignals:
    """Ctrl-C (SIGINT), SIGTERM and SIGHUP while training: ``train.fit(...,
    stop=signals)`` finishes the running steps, checkpoints and stops. Batch
    schedulers send SIGTERM some time before they kill; a closed terminal sends
    SIGHUP. A second signal stops at once (the last checkpoint written stays).

    With ``at_once`` (an attribute too), the first signal stops at once: it
    raises :class:`jaxblitz.train.TrainingInterrupted` where the program is, so
    every ``atomic_write`` under way removes its temporary file, as for Ctrl-C,
    instead of SIGTERM's and SIGHUP's default of dying where they land.

    A signal ignored when this starts (``nohup`` ignores SIGHUP; a background job
    of a non-interactive shell, SIGINT) stays ignored. A context manager;
    installed only in the main thread::

        with StopSignals() as stop:
            state, history = train.fit(config, data, checkpointer=c, stop=stop)
    """

    SIGNALS = tuple(
        getattr(signal, name)
        for name in ("SIGINT", "SIGTERM", "SIGHUP")
        if hasattr(signal, name)
    )

    def __init__(self, at_once: bool = False):
        self.signum: int | None = None
        self.at_once = at_once
        self._previous: dict = {}
        self._deferring = False
        self._pending: int | None = None
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                if signal.getsignal(signum) is signal.SIG_IGN:
                    continue  # the caller asked not to be stopped by it
                self._previous[signum] = signal.signal(signum, self._handle)

    def __call__(self) -> int | None:
        """The signal received, if any: what ``fit`` polls."""
        return self.signum

    def __enter__(self) -> StopSignals:
        return self

    def __exit__(self, *exc) -> None:
        self.restore()

    @contextlib.contextmanager
    def deferred(self):
        """A signal that would stop at once waits for the end of this block: a
        checkpoint save is let finish (cut, orbax's writer threads would go on
        into the folder being removed)."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            pending, self._pending = self._pending, None
            if pending is not None:
                self._handle(pending, None)

    def _handle(self, signum, frame):
        name = signal.Signals(signum).name
        if self._deferring and (self.signum is not None or self.at_once):
            self._pending = self._pending or signum
            return
        if self.signum is not None:
            raise train.TrainingInterrupted(
                signum,
                f"Stopped at once by a second {name}; temporary files are removed, "
                "and the checkpoints written before are intact.",
            )
        self.signum = signum
        if self.at_once:
            raise train.TrainingInterrupted(
                signum, f"Stopped by {name}; temporary files are removed."
            )
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


class CacheReads(logging.Filter):
    """The entries of JAX's persistent compilation cache this process read, and
    what to do when one of them is damaged.

    A cache entry holding another program (copied over, or a file system's
    mix-up) loads without complaint and fails only when run, with XLA's
    ``RuntimeProgramInputMismatch`` or JAX's ``safe_zip`` error, naming no file.
    JAX logs each entry it reads (at DEBUG, on its compiler module's logger, named
    here through the public function that module defines): this filter
    keeps the keys and lets through only what would have been shown anyway. On
    such an error, :meth:`damage` moves the entries read into
    ``<cache>/damaged-<time>/`` (nothing is deleted), so the next run compiles
    them afresh, and says so.
    """

    # JAX's compiler module, reached through a public function it defines
    LOGGER = jax.extend.backend.get_compile_options.__module__

    def __init__(self):
        super().__init__()
        self.keys: list[str] = []
        self._logger = logging.getLogger(self.LOGGER)
        self._shown = self._logger.getEffectiveLevel()
        self._level = self._logger.level

    def __enter__(self) -> CacheReads:
        self._logger.addFilter(self)
        self._logger.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc) -> None:
        self._logger.removeFilter(self)
        self._logger.setLevel(self._level)

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Persistent compilation cache hit") and (
            isinstance(record.args, tuple) and len(record.args) == 2
        ):
            self.keys.append(str(record.args[1]))
        return record.levelno >= self._shown

    @staticmethod
    def mismatch(e: BaseException) -> bool:
        """Whether ``e`` is what a compiled program given another's inputs raises."""
        text = str(e)
        return "RuntimeProgramInputMismatch" in text or (
            isinstance(e, ValueError) and text.startswith("safe_zip() argument")
        )

    def damage(self, e: BaseException, folder: str | None = None) -> str | None:
        """What to tell about ``e`` if a cache entry read here caused it, having
        moved those entries aside; None if it is not that. ``folder``: the
        cache's (default: JAX's setting)."""
        # JAX adds its config options to jax.config at import; its types omit them.
        setting = folder or jax.config.jax_compilation_cache_dir  # type: ignore[attr-defined]
        if not setting or not self.mismatch(e):
            return None
        cache = Path(setting)
        reason = " ".join(str(e).split())[:300]  # XLA's runs over lines
        said = (
            f"a compiled program read from the compilation cache {cache} does not "
            f"fit its inputs ({reason}): an entry of the cache is damaged."
        )
        aside = cache / f"damaged-{time.strftime('%Y%m%d-%H%M%S')}"
        moved = []
        for key in dict.fromkeys(self.keys):
            for path in (cache / f"{key}-cache", cache / f"{key}-atime"):
                if "/" in key or not path.is_file():
                    continue
                with contextlib.suppress(OSError):
                    aside.mkdir(exist_ok=True)
                    os.replace(path, aside / path.name)
                    moved.append(path)
        if not moved:
            return (
                f"{said} Move the files of {cache} aside (or delete them) and run "
                "the same command again: the programs are compiled afresh "
                "(JAXBLITZ_XLA_CACHE='' runs without the cache)."
            )
        return (
            f"{said} The {len(moved)} file(s) this run read from it are moved to "
            f"{aside}/ (nothing is deleted): run the same command again and they "
            "are compiled afresh (JAXBLITZ_XLA_CACHE='' runs without the cache)."
        )


class _SavesFinish:
    """A checkpointer whose saves a signal does not cut: one that would stop at
    once takes effect as the save ends (:meth:`StopSignals.deferred`)."""

    def __init__(self, checkpointer: Checkpointer, stop: StopSignals):
        self._checkpointer, self._stop = checkpointer, stop

    def save(self, *args, **kwargs) -> None:
        with self._stop.deferred():
            self._checkpointer.save(*args, **kwargs)

    def __getattr__(self, name):  # everything else as the checkpointer's
        return getattr(self._checkpointer, name)


def main(argv: list[str] | None = None) -> int:
    """Run ``jaxblitz-train``; returns the exit code (128 + N after signal N)."""
    try:  # a signal outside training stops at once; fit finishes its steps first
        with StopSignals(at_once=True) as stop, CacheReads() as reads:
            try:
                return _main(argv, stop)
            except Exception as e:  # a damaged compilation cache: named, not a trace
                message = reads.damage(e)
                if message is None:
                    raise
                print(f"jaxblitz-train: error: {message}", file=sys.stderr)
                return 1
    except KeyboardInterrupt as e:  # Ctrl-C at any moment: no traceback
        if isinstance(e, train.TrainingInterrupted):  # fit saved a checkpoint first
            print(f"jaxblitz-train: {e}", file=sys.stderr)
            return 128 + e.signum
        print("jaxblitz-train: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT


def _main(argv: list[str] | None, stop: StopSignals) -> int:
    parser = build_parser()
    args = parser.parse_args(
        _join_negative_values(sys.argv[1:] if argv is None else argv)
    )
    fields = {f.name for f in dataclasses.fields(train.Config)}
    try:
        config = train.Config(**{k: v for k, v in vars(args).items() if k in fields})
    except ValueError as e:
        parser.error(str(e))
    if args.fresh and args.resume:
        parser.error("--fresh starts a new run and --resume continues one: give one.")
    if args.accept_data_change and not args.resume:
        parser.error("--accept-data-change applies to --resume only: add --resume.")
    if args.data_dir is not None and not args.data_dir.strip():  # "$UNSET" in a shell
        parser.error(
            "--data-dir is empty; give a folder (default: $JAXBLITZ_DATA or "
            f"{data.fetch.DEFAULT_DIR})."
        )
    try:  # before any data is read: a bad --out-dir fails in a second
        runs.check_utf8(args.out_dir or f"runs/{config.dataset}")
        out = runs.writable_dir(args.out_dir, f"runs/{config.dataset}")
        if not args.fresh:  # --fresh moves whatever is there aside
            runs.check_outputs(out, new_run=not args.resume)
    except ValueError as e:
        parser.error(str(e))
    # A second run starts compiled: XLA programs are kept on disk between runs.
    runtime.use_compilation_cache(min_compile_secs=0.2)
    try:  # joins the multi-process runtime when launched into one
        parallel.initialize()
    except ValueError as e:
        parser.error(str(e))
    threads = args.cpu_threads
    if threads is None and args.devices is None and not accelerator_installed():
        threads = cpu_threads(config.batch_size)  # a CPU run's pick
    # Big batches on a multi-core CPU: one CPU device per core, the batch split
    # over them (set before JAX's backends start; GPU and TPU runs are untouched).
    auto_devices = None
    if args.devices is None and args.cpu_threads is None:
        auto_devices = cpu_devices(config.batch_size)
    if auto_devices:
        try:
            jax.config.update("jax_num_cpu_devices", auto_devices)
        except RuntimeError:  # main() called in a process already using JAX
            auto_devices = None
    narrowed = False
    if isinstance(threads, int):
        try:
            narrowed = set_cpu_threads(threads)  # before JAX's backends start
        except RuntimeError as e:  # main() called in a process already using JAX
            if args.cpu_threads is not None:
                parser.error(f"--cpu-threads: {e}")
    try:  # JAX starts its backends here (or set_cpu_threads did above)
        runtime.start_backends()
    except ValueError as e:
        parser.error(str(e))
    primary = jax.process_index() == 0
    say = print if primary else lambda *a, **k: None
    if narrowed and jax.default_backend() == "cpu":
        say(f"XLA:CPU on {threads} thread(s) (--cpu-threads all: one per core)")
    try:
        mesh = None if args.devices is None else parallel.make_mesh(args.devices)
        if auto_devices and jax.default_backend() == "cpu" and len(jax.devices()) > 1:
            mesh = parallel.make_mesh("all")  # --devices 1 keeps one device
    except ValueError as e:
        parser.error(str(e))
    try:  # one run per --out-dir at a time (process 0 writes for all processes)
        lock = DirectoryLock(out) if primary else None
    except DirectoryInUseError as e:
        print(f"jaxblitz-train: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # the lock file's path taken by a folder, say
        print(
            f"jaxblitz-train: error: cannot lock {out}: {os_error_text(e)}. Move that "
            "path out of the way, or give this run its own --out-dir.",
            file=sys.stderr,
        )
        return 1
    try:
        if primary and args.fresh:
            moved = runs.move_aside(out)
            if moved is not None:
                say(f"Moved the earlier run's files in {out} to {moved}/.")
        if jax.process_count() > 1:  # the others wait for the move
            from jax.experimental import multihost_utils

            multihost_utils.sync_global_devices("jaxblitz-train: out-dir ready")
        return _run(args, config, out, mesh, say, primary, stop)
    finally:
        if lock is not None:
            lock.release()


def _run(args, config, out, mesh, say, primary, stop) -> int:
    runner: train.Local | parallel.Sharded = (  # each a train.Runner (mypy)
        train.Local() if mesh is None else parallel.Sharded(mesh)
    )
    local = runner.to_host
    try:  # orbax's needs of the path, before any data is read (every process
        runs.probe_checkpoints(out, primary)  # takes part in a checkpoint's save)
    except ValueError as e:
        print(f"jaxblitz-train: error: {e}", file=sys.stderr)
        return 2
    try:
        train_set = data.load(config.dataset, "train", args.data_dir)
        test_set = data.load(config.dataset, "test", args.data_dir)
    except (FileNotFoundError, ConnectionError, OSError, ValueError) as e:
        print(f"jaxblitz-train: error: {e}", file=sys.stderr)
        return 1
    names = test_set.class_names
    if mesh is not None:
        say(
            f"Data parallel over {mesh.devices.size} {mesh.devices.flat[0].platform} "
            f"devices in {jax.process_count()} process(es): each batch of "
            f"{config.batch_size} split as "
            f"{parallel.shard_sizes(config.batch_size, mesh.devices.size)}"
        )
    say(
        f"{config.dataset}: {len(train_set.labels)} training and "
        f"{len(test_set.labels)} test images {train_set.images.shape[1:]}, "
        f"classes {' '.join(names)}"
    )

    def on_epoch_end(epoch, state, metrics):
        result = evaluate.evaluate(
            local(state.params), test_set, config.eval_batch_size
        )
        say(
            f"epoch {epoch + 1}: mean loss {metrics['loss']:.3f}, test accuracy "
            f"{100 * result['accuracy']:.1f} %, {metrics['images_per_s']:,.0f} "
            f"images/s, {metrics['wall_s']:.1f} s"
        )
        return {"test_accuracy": result["accuracy"], "per_class": result["per_class"]}

    checkpointer = Checkpointer(out / "checkpoints")
    for path in checkpointer.removed:
        say(f"Removed {path}/, left by a checkpoint save that never finished.")
    try:
        stop.at_once = False  # fit finishes the running steps and checkpoints
        fit_kwargs = dict(
            checkpointer=_SavesFinish(checkpointer, stop),
            resume=args.resume,
            log=tqdm.write if primary else lambda line: None,
            progress=primary and not args.no_progress,
            on_epoch_end=on_epoch_end,
            stop=stop,
            test_set=test_set,  # its digest joins the run's identity
            accept_data_change=args.accept_data_change,
        )
        if args.api == "nnx":  # a Flax NNX Net in and out, the same steps
            from jaxblitz import nnx

            net, history = nnx.fit(config, train_set, runner=runner, **fit_kwargs)
            trained = nnx.to_params(net)
        else:
            state, history = train.fit(config, train_set, runner=runner, **fit_kwargs)
            trained = state.params
        stop.at_once = True
        run = checkpointer.read_meta().get("run", {})
    except ValueError as e:
        if CacheReads.mismatch(e):  # a program of the compilation cache: main names it
            raise
        print(f"jaxblitz-train: error: {e}", file=sys.stderr)
        return 1
    except (FloatingPointError, FileNotFoundError) as e:  # no traceback
        print(f"jaxblitz-train: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a full disk, a vanished folder: the message is enough
        print(f"jaxblitz-train: error: {os_error_text(e)}", file=sys.stderr)
        return 1
    finally:
        stop.at_once = True
        checkpointer.close()
    kept = f"Training finished and its checkpoints in {out / 'checkpoints'} are intact"
    if stop.signum is not None:  # it came in the last steps: stop before writing
        print(
            f"jaxblitz-train: {signal.Signals(stop.signum).name}: stopped before "
            f"writing the outputs. {kept}: run the same command with --resume to "
            "write them.",
            file=sys.stderr,
        )
        return 128 + stop.signum
    try:
        params = local(trained)
        say("Finished Training")
        if not primary:  # every process has the same weights; one writes them
            return 0
        _write_outputs(config, out, params, test_set, history, run)
    except train.TrainingInterrupted as e:  # atomic_write removed its temp file
        print(
            f"jaxblitz-train: {signal.Signals(e.signum).name}: stopped while writing "
            f"the outputs; no temporary file is left. {kept}: run the same command "
            "with --resume to write the outputs.",
            file=sys.stderr,
        )
        return 128 + e.signum
    except OSError as e:
        print(
            f"jaxblitz-train: error: {os_error_text(e)}. {kept}: make room and run the "
            "same command with --resume to write the outputs.",
            file=sys.stderr,
        )
        return 1
    return 0


def _write_outputs(config, out, params, test_set, history, run) -> None:
    names = test_set.class_names
    save_weights(params, out / "weights.safetensors")

    # The Blitz's look at four test images, then the whole test set.
    shown = evaluate.predict(params, test_set.images[:4], 4)
    print("GroundTruth: ", " ".join(f"{names[j]:5s}" for j in test_set.labels[:4]))
    print("Predicted:   ", " ".join(f"{names[j]:5s}" for j in shown))
    result = evaluate.evaluate(params, test_set, config.eval_batch_size)
    print("\n".join(evaluate.report_lines(result)))

    samples = test_set.images[:16]
    plots.save_image_grid(
        samples,
        test_set.labels[:16],
        names,
        out / "samples.png",
        predicted=evaluate.predict(params, samples, 16),
    )
    plots.save_loss_curve([h["losses"] for h in history], out / "loss.png")
    plots.save_per_class(result["per_class"], out / "per_class.png")
    write_json(
        {
            "config": dataclasses.asdict(config),
            # id, what defines its numbers, and settings changed on resume (step)
            "run": run,
            "test": result,
            "epochs": [
                {k: v for k, v in h.items() if k != "losses"}
                | {"batch_losses": h["losses"]}
                for h in history
            ],
        },
        out / "metrics.json",
    )
    print(
        f"Wrote {out}/: metrics.json loss.png per_class.png samples.png "
        "weights.safetensors checkpoints/"
    )


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--widths -6,16`` -> ``--widths=-6,16``: argparse takes a value starting
    with "-" for an option, so a negative number would get "expected one
    argument" instead of what is wrong with it."""
    out: list[str] = []
    for arg in argv:
        if (
            out
            and out[-1].startswith("--")
            and "=" not in out[-1]
            and re.fullmatch(r"-[0-9.][0-9.,eE+-]*", arg)
        ):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


if __name__ == "__main__":
    sys.exit(main())
