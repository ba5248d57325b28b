"""Blitz 4, "Training a classifier": ``DataLoader(num_workers=N)``'s workers,
seen from the main process.

torch's ``_MultiProcessingDataLoaderIter``: ``prefetch_factor * N`` index lists
out at a time, round robin (or to the least busy worker with ``in_order=False``,
yielding batches as they come), ``timeout`` seconds at most for each batch,
an exception raised in a worker raised here naming the worker, a worker that
dies reported by pid. Each worker runs :mod:`._worker`, forked by
:mod:`._zygote` (on the CPU, never claiming an accelerator), and is given the
dataset, ``worker_init_fn`` and ``collate_fn`` by cloudpickle once.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from jaxblitz.compat.utils import _zygote
from jaxblitz.compat.utils._worker import Failure, dumps, recv, send

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


def start(loader: Any, base_seed: int, collate_fn: Any) -> Pool:
    """The workers for one ``iter(loader)`` (or all, with persistent_workers)."""
    parts = {
        "dataset": loader.dataset,
        "worker_init_fn": loader.worker_init_fn,
        "collate_fn": collate_fn,
    }
    from jaxblitz.compat import _dtype, autograd

    state = {
        "auto_collation": loader._auto_collation,
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
