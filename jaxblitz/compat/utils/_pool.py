"""Blitz 4, "Training a classifier": ``DataLoader(num_workers=N)``'s workers,
seen from the main process.

torch's ``_MultiProcessingDataLoaderIter``: ``prefetch_factor * N`` index lists
out at a time, round robin (or to the least busy worker with ``in_order=False``,
yielding batches as they come), ``timeout`` seconds at most for each batch,
an exception raised in a worker raised here naming the worker, a worker that
dies reported by pid. Each worker runs :mod:`._worker`, forked by
:mod:`._zygote` (on the CPU, never claiming an accelerator), and is given the
dataset, ``worker_init_fn`` and ``collate_fn`` by cloudpickle once. An
``IterableDataset``'s workers each stream their own copy (:func:`streams`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import select
import signal
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from jaxblitz.compat.utils import _zygote
from jaxblitz.compat.utils._worker import Failure, IterationEnd, dumps, recv, send

_POLL = 0.5  # seconds between looks at the clock while waiting
END = object()  # what next(tasks, END) gives after the last task


class Pool:
    """``num_workers`` worker processes, started with ``setup`` (pickled)."""

    def __init__(self, num_workers: int, setup: bytes):
        self.pids: list[int] = []
        self.reads: list[int] = []
        self.writes: list[int] = []
        self.ready_at: list[float | None] = [None] * num_workers
        self.busy = [0] * num_workers  # tasks sent, not yet answered
        self.epoch = 0
        self._closer = weakref.finalize(
            self, _close, self.pids, self.reads, self.writes
        )
        for wid in range(num_workers):
            from_child, to_parent = os.pipe()
            from_parent, to_child = os.pipe()
            try:
                pid = _zygote.fork(wid, from_parent, to_parent)
            except BaseException:
                for fd in (from_child, to_child):
                    os.close(fd)
                self.close()
                raise
            finally:
                os.close(from_parent)
                os.close(to_parent)
            self.pids.append(pid)
            self.reads.append(from_child)
            self.writes.append(to_child)
        for wid in range(num_workers):
            self._send(wid, setup)

    def _send(self, wid: int, blob: bytes) -> None:
        try:
            send(self.writes[wid], blob)
        except OSError:
            self._died([self.pids[wid]])

    def submit(self, wid: int, index: int, task: Any) -> None:
        self.busy[wid] += 1
        self._send(wid, dumps((self.epoch, index, task)))

    def close(self) -> None:
        self._closer()

    def _died(self, pids: list[int]) -> None:
        self.close()
        listed = ", ".join(map(str, pids))
        raise RuntimeError(f"DataLoader worker (pid(s) {listed}) exited unexpectedly")

    def receive(self, clock: Callable[[], float | None], timeout: float) -> tuple:
        """The next answer from any worker: ``(worker id, index, data)``.

        ``clock()`` is when the wait for it began counting (None: not yet, the
        worker it waits for is still starting); after ``timeout`` seconds from
        then (0: never) it is torch's timeout error.
        """
        while True:
            start = clock()
            left = None if not timeout or start is None else start + timeout
            wait = (
                _POLL if left is None else max(0.0, min(_POLL, left - time.monotonic()))
            )
            ready, _, _ = select.select(self.reads, [], [], wait)
            for fd in ready:
                wid = self.reads.index(fd)
                frame = recv(fd)
                if frame is None:  # its end of the pipe closed: it exited
                    self._died([self.pids[wid]])
                message = pickle.loads(frame)
                if message[0] == "ready":
                    self.ready_at[wid] = time.monotonic()
                    continue
                if message[0] == "failed":  # the worker could not start
                    self.close()
                    message[1].reraise()
                _, epoch, index, data = message
                self.busy[wid] -= 1
                if epoch == self.epoch:  # else left from an epoch given up
                    return wid, index, data
            if ready:
                continue
            if left is not None and time.monotonic() >= left:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")


def _close(pids: list, reads: list, writes: list) -> None:
    # The end of its stream tells an idle worker to exit; a busy one is given a
    # second to finish (its answer is read and dropped), then stopped, as torch
    # terminates its workers.
    for fd in writes:
        with contextlib.suppress(OSError):
            os.close(fd)
    open_reads = dict(zip(reads, pids, strict=True))
    deadline = time.monotonic() + 1
    while open_reads and time.monotonic() < deadline:
        ready, _, _ = select.select(
            list(open_reads), [], [], deadline - time.monotonic()
        )
        for fd in ready:
            if not os.read(fd, 1 << 20):  # the worker exited
                del open_reads[fd]
    for pid in open_reads.values():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for fd in reads:
        with contextlib.suppress(OSError):
            os.close(fd)
    writes.clear()
    reads.clear()


def start(loader: Any, base_seed: int, collate_fn: Any, iterable: bool = False) -> Pool:
    """The workers for one ``iter(loader)`` (or all, with persistent_workers);
    ``iterable``: each streams its copy of an ``IterableDataset``."""
    parts = {
        "dataset": loader.dataset,
        "worker_init_fn": loader.worker_init_fn,
        "collate_fn": collate_fn,
    }
    from jaxblitz.compat import autograd
    from jaxblitz.compat.tensor import _dtype

    state = {
        "auto_collation": loader._auto_collation,
        "iterable": iterable,
        "drop_last": loader.drop_last,
        "base_seed": base_seed,
        "num_workers": loader.num_workers,
        "default_dtype": _dtype.get_default_dtype(),
        "grad_enabled": autograd.is_grad_enabled(),
    }
    try:
        blob = dumps({**parts, **state})
    except Exception as e:
        name = next((k for k, v in parts.items() if not _picklable(v)), "dataset")
        raise TypeError(
            f"DataLoader(num_workers={loader.num_workers}) sends the {name} to each "
            f"worker process by pickling (cloudpickle), and it cannot be pickled: "
            f"{e}. Open files, connections and locks in worker_init_fn or "
            "__getitem__ rather than holding them, or use num_workers=0."
        ) from e
    return Pool(loader.num_workers, blob)


def _picklable(value: Any) -> bool:
    try:
        dumps(value)
    except Exception:
        return False
    return True


def batches(
    pool: Pool,
    tasks: Iterator,
    *,
    prefetch: int,
    in_order: bool,
    timeout: float,
    finish: Callable[[Any], Any],
) -> Iterator[Any]:
    """One epoch: ``tasks`` (index lists, or indices) in, ``finish(data)`` out."""
    n = len(pool.pids)
    sent = 0  # tasks sent this epoch
    done = 0  # batches yielded
    owner: dict[int, int] = {}  # task index -> worker
    held: dict[int, Any] = {}  # answers that came before their turn
    waiting_since = time.monotonic()
    more = True

    def put() -> None:
        nonlocal sent, more
        if not more or sent - done >= prefetch * n:
            return
        task = next(tasks, END)
        if task is END:
            more = False
            return
        wid = sent % n if in_order else min(range(n), key=pool.busy.__getitem__)
        pool.submit(wid, sent, task)
        owner[sent] = wid
        sent += 1

    def clock() -> float | None:
        # torch's timeout runs while a started worker owes the batch (a fork
        # starts at once); a worker's start here, unpickling the dataset and
        # importing its modules, is not counted against it.
        if in_order:
            ready = pool.ready_at[owner[done]]
        else:
            ready = min((t for t in pool.ready_at if t is not None), default=None)
        return None if ready is None else max(ready, waiting_since)

    for _ in range(prefetch * n):
        put()
    while done < sent:
        if in_order and done in held:
            data = held.pop(done)
        else:
            _, index, data = pool.receive(clock, timeout)
            if in_order and index != done:
                held[index] = data
                continue
        done += 1
        put()
        if isinstance(data, Failure):
            data.reraise()
        yield finish(data)
        waiting_since = time.monotonic()


def streams(
    pool: Pool,
    task: int | None,
    *,
    prefetch: int,
    in_order: bool,
    timeout: float,
    finish: Callable[[Any], Any],
) -> Iterator[Any]:
    """One epoch of an ``IterableDataset``: each task (``task``, the batch size,
    or None without batching) goes to the next worker whose stream is not spent,
    round robin; the epoch ends when every worker's is.

    torch's ``_MultiProcessingDataLoaderIter`` for an iterable dataset, step for
    step (which worker gets which task decides the order of the batches): a task
    of a spent worker is skipped, and counts as outstanding, as in torch.
    """
    n = len(pool.pids)
    active = [True] * n
    cycle = itertools.cycle(range(n))
    per_worker = [0] * n  # tasks given, not yet processed
    info: dict[int, list] = {}  # task index -> [worker] or [worker, data]
    sent = received = 0
    waiting_since = time.monotonic()

    def put() -> None:
        nonlocal sent
        for _ in range(n):  # the next active worker, if any
            wid = next(cycle)
            if active[wid] and (
                in_order or per_worker[wid] < prefetch * n // sum(active)
            ):
                break
        else:
            return
        pool.submit(wid, sent, task)
        info[sent] = [wid]
        per_worker[wid] += 1
        sent += 1

    def clock() -> float | None:
        wid = info[received][0] if received in info else None
        ready = pool.ready_at[wid] if in_order and wid is not None else None
        if not in_order:
            ready = min((t for t in pool.ready_at if t is not None), default=None)
        return None if ready is None else max(ready, waiting_since)

    for _ in range(prefetch * n):
        put()
    while True:
        while received < sent:  # skip the tasks of spent workers
            entry = info.get(received)
            if entry and (len(entry) == 2 or active[entry[0]]):
                break
            info.pop(received, None)
            received += 1
        else:
            return
        if len(info[received]) == 2:
            wid, data = info.pop(received)
            received += 1
        else:
            wid, index, data = pool.receive(clock, timeout)
            if isinstance(data, IterationEnd):
                if active[wid]:  # a spent worker's later tasks go unanswered
                    active[wid] = False
                    put()
                continue
            if index != received and in_order:
                info[index].append(data)
                continue
            info.pop(index)
            received += index == received
        per_worker[wid] -= 1
        put()
        if isinstance(data, Failure):
            data.reraise()
        yield finish(data)
        waiting_since = time.monotonic()
