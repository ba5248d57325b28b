"""Blitz 4, "Training a classifier": one ``DataLoader`` worker process.

torch's ``torch/utils/data/_utils/worker.py``: ``get_worker_info()``, the seeds a
worker gets (``random`` and compat's generator ``base_seed + id``, NumPy's from
``_generate_state``), ``worker_init_fn(id)``, then the index lists the main
process sends, answered with the samples (or, with a ``collate_fn`` of the
user's, its batch) or the exception they raised. For an ``IterableDataset`` a
task is a batch size: the worker answers with the next samples of its own
iterator over its copy of the dataset (made anew each epoch), and with
:class:`IterationEnd` once that iterator is spent.

A worker is a fresh interpreter, never a fork: JAX runs threads, and a forked
copy of a process that started them deadlocks at its first JAX call (a random
transform, ``torch.tensor``). What it needs travels by cloudpickle, so lambdas
and classes defined in ``__main__`` work as under torch's fork on Linux; compat
tensors travel as their NumPy values (:func:`dumps`).
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import queue
import random
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxblitz.compat.tensor._tensor_base import TensorBase

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` gives inside a worker (torch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's :class:`WorkerInfo`; ``None`` in the main process."""
    return _worker_info


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """torch's ``_generate_state``: NumPy's seed for a worker (NumPy's
    SeedSequence hashing of ``worker_id`` and ``base_seed``), so ``np.random``
    draws in a worker what it draws in torch's worker of the same base seed."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_l, mix_r, shift, mask = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    const = init_a

    def hash_a(value: int) -> int:
        nonlocal const
        value = (value ^ const) & mask
        const = (const * mult_a) & mask
        value = (value * const) & mask
        return (value ^ (value >> shift)) & mask

    def mix(x: int, y: int) -> int:
        result = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (result ^ (result >> shift)) & mask

    pool = [hash_a(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_a(pool[src]))
    const_b, state = init_b, []
    for value in pool:
        data = (value ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        data = (data * const_b) & mask
        state.append((data ^ (data >> shift)) & mask)
    return state


# -- what travels between the processes -------------------------------------------


def _pickler_base() -> type:
    try:
        import cloudpickle
    except ImportError:  # scikit-learn's joblib ships a copy
        from joblib.externals import cloudpickle
    return cloudpickle.Pickler


def _rebuild(array: np.ndarray, kind: str, requires_grad: bool) -> TensorBase:
    from jaxblitz.compat.nn.module import Parameter
    from jaxblitz.compat.tensor.creation import from_numpy

    t = from_numpy(array)
    if kind == "parameter":
        return Parameter(t, requires_grad)
    return t.requires_grad_(True) if requires_grad else t


class _Pickler(_pickler_base()):
    """cloudpickle, with compat tensors as their values (compat refuses pickle)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, TensorBase):
            if obj.requires_grad and not obj.is_leaf:  # torch's refusal
                raise RuntimeError(
                    "Cowardly refusing to serialize non-leaf tensor which requires_"
                    "grad, since autograd does not support crossing process "
                    "boundaries.  If you just want to transfer the data, call "
                    "detach() on the tensor before serializing (e.g., putting it on "
                    "the queue)."
                )
            from jaxblitz.compat.nn.module import Parameter

            kind = "parameter" if isinstance(obj, Parameter) else "tensor"
            return _rebuild, (np.array(obj._host()), kind, obj.requires_grad)
        return super().reducer_override(obj)


def dumps(obj: Any) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out.getvalue()


def send(fd: int, blob: bytes) -> None:
    """One frame: its length, then its bytes."""
    view = memoryview(len(blob).to_bytes(8, "little") + blob)
    while view:
        view = view[os.write(fd, view) :]


def recv(fd: int) -> bytes | None:
    """The next frame, or None at the end of the stream."""
    head = _read(fd, 8)
    return None if head is None else _read(fd, int.from_bytes(head, "little")) or b""


def _read(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Failure:
    """torch's ``ExceptionWrapper``: an exception, sent as its type and text."""

    def __init__(self, where: str):
        kind, value, tb = sys.exc_info()
        self.kind, self.where = kind, where
        self.text = "".join(traceback.format_exception(kind, value, tb))

    def reraise(self) -> None:
        msg = f"Caught {self.kind.__name__} {self.where}.\nOriginal {self.text}"
        if self.kind is KeyError:  # torch: KeyErrorMessage keeps the newlines
            raise KeyError(_KeyErrorMessage(msg))
        if getattr(self.kind, "message", None):  # torch: such types take message=
            raise self.kind(message=msg)
        try:
            error = self.kind(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise error


class _KeyErrorMessage(str):
    def __repr__(self) -> str:
        return self


# -- an IterableDataset's stream ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class IterationEnd:
    """torch's ``_IterableDatasetStopIteration``: this worker's stream is spent."""

    worker_id: int


class _Stream:
    """torch's ``_IterableDatasetFetcher`` with the worker's ``iteration_end``:
    the worker's iterator over its copy of the dataset, made at its first task
    of each epoch (torch: after ``worker_init_fn``, and again when persistent
    workers resume)."""

    def __init__(self, dataset: Any, drop_last: bool, worker_id: int):
        self.dataset, self.drop_last, self.worker_id = dataset, drop_last, worker_id
        self.epoch: int | None = None

    def fetch(self, epoch: int, size: int | None, collate: Any, where: str) -> Any:
        """The next batch of ``size`` samples (one sample where None)."""
        if epoch != self.epoch:
            self.epoch, self.ended, self.stopped = epoch, False, False
            try:
                self.samples = iter(self.dataset)
            except Exception:
                self.stopped = True  # torch: the failure answers the first task
                return Failure(where)
        if self.stopped:
            return IterationEnd(self.worker_id)
        try:
            data = self._next(size)
        except StopIteration:
            self.stopped = True  # torch drops this epoch's later tasks
            return IterationEnd(self.worker_id)
        except Exception:
            return Failure(where)
        try:
            return data if collate is None else collate(data)
        except Exception:
            return Failure(where)

    def _next(self, size: int | None) -> Any:
        if size is None:
            return next(self.samples)
        if self.ended:
            raise StopIteration
        data = []
        for _ in range(size):
            try:
                data.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < size):
            raise StopIteration
        return data


# -- the worker's loop --------------------------------------------------------------


def _inbox(fd: int) -> tuple[queue.Queue, threading.Event]:
    """Frames from the main process, read as they come (a big one never blocks
    the main process while this worker writes), and an event set at their end:
    the main process closed the stream, so tasks still queued are dropped."""
    frames: queue.Queue = queue.Queue()
    ended = threading.Event()

    def pump() -> None:
        while True:
            try:
                frame = recv(fd)
            except OSError:
                frame = None
            if not frame:
                ended.set()
            frames.put(frame)
            if not frame:
                return

    threading.Thread(target=pump, daemon=True).start()
    return frames, ended


def main(worker_id: int, read_fd: int, write_fd: int) -> None:
    """Run worker ``worker_id``: set up from the first frame, then answer tasks."""
    global _worker_info
    # Ctrl-C reaches the whole process group; the main process stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    frames, ended = _inbox(read_fd)
    where = f"in DataLoader worker process {worker_id}"
    setup = frames.get()
    if not setup:
        return
    try:
        spec = pickle.loads(setup)
    except BaseException:
        with contextlib.suppress(OSError):
            send(write_fd, dumps(("failed", Failure(where))))
        return
    from jaxblitz.compat import autograd
    from jaxblitz.compat.tensor import _dtype, creation

    # What a forked copy would have kept of the main process's compat state.
    _dtype.set_default_dtype(spec["default_dtype"])
    autograd.set_grad_enabled(spec["grad_enabled"])
    seed = spec["base_seed"] + worker_id
    random.seed(seed)
    creation.manual_seed(seed)
    # torch seeds NumPy's global generator, the one np.random.* draws from
    np.random.seed(_generate_state(spec["base_seed"], worker_id))  # noqa: NPY002
    dataset, collate = spec["dataset"], spec["collate_fn"]
    batched = spec["auto_collation"]
    _worker_info = WorkerInfo(worker_id, spec["num_workers"], seed, dataset)
    stream = None
    if spec.get("iterable"):
        stream = _Stream(dataset, spec["drop_last"], worker_id)
    try:
        send(write_fd, dumps(("ready",)))
    except OSError:
        return
    init_failure = None
    try:
        if spec["worker_init_fn"] is not None:
            spec["worker_init_fn"](worker_id)
    except Exception:
        init_failure = Failure(where)
    while True:
        frame = frames.get()
        if not frame or ended.is_set():
            return
        epoch, index, task = pickle.loads(frame)
        if init_failure is not None:  # torch: the first task answers with it
            out, init_failure = init_failure, None
        elif stream is not None:
            out = stream.fetch(epoch, task, collate, where)
        else:
            try:
                data = [dataset[i] for i in task] if batched else dataset[task]
                out = data if collate is None else collate(data)
            except Exception:
                out = Failure(where)
        try:
            blob = dumps(("data", epoch, index, out))
        except Exception:
            blob = dumps(("data", epoch, index, Failure(where)))
        try:
            send(write_fd, blob)
        except OSError:  # the main process stopped reading: it is done with us
            return
