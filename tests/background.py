"""Subprocesses that run beside the in-process tests.

A test module declares, at import, the processes its tests read::

    DOCS = BackgroundRun([sys.executable, "docs/build.py", "--check"], cwd=ROOT)

    def test_docs_match():
        assert DOCS.result().returncode == 0

Once pytest has collected, ``tests/conftest.py`` starts the runs of the selected
modules one at a time on a background thread, in collection order: on two cores
the docs check and the worker processes run while the in-process tests run. A test
that asks for a run that has not started yet runs it at once in its own thread; a
finished run is read by every test that asks. Runs still going when the session
ends are killed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

_scratch = Path(tempfile.mkdtemp(prefix="jaxblitz-tests-"))
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background-run")
_running: set[subprocess.Popen] = set()
_stopping = threading.Event()


class BackgroundRun:
    """One command; ``result()`` is its ``subprocess.CompletedProcess``."""

    def __init__(
        self,
        argv: list[str],
        *,
        timeout: float = 600,
        setup: Callable[[], dict] | None = None,
        **popen_kwargs,
    ):
        """``setup()``, if given, runs just before the command (never at import,
        when the module is only collected): it writes what the run reads and
        returns more keyword arguments for ``subprocess.Popen`` (``cwd``, ``env``)."""
        self.argv = [str(a) for a in argv]
        self.timeout = timeout
        self.setup = setup
        self.popen_kwargs = popen_kwargs
        self._future: Future | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Queue the run on the background thread (once)."""
        with self._lock:
            if self._future is None:
                self._future = _pool.submit(self._run)

    def result(self) -> subprocess.CompletedProcess:
        with self._lock:
            if self._future is None or self._future.cancel():  # not started: run here
                self._future = Future()
                self._future.set_running_or_notify_cancel()
                try:
                    self._future.set_result(self._run())
                except BaseException as e:
                    self._future.set_exception(e)
        return self._future.result()

    def _run(self) -> subprocess.CompletedProcess:
        if _stopping.is_set():
            raise RuntimeError("the test session ended before this run started")
        kwargs = dict(self.popen_kwargs)
        if self.setup is not None:
            kwargs.update(self.setup())
        proc = subprocess.Popen(
            self.argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: see _kill
            **kwargs,
        )
        _running.add(proc)
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            raise
        finally:
            _running.discard(proc)
        return subprocess.CompletedProcess(self.argv, proc.returncode, stdout, stderr)


def _kill(proc: subprocess.Popen) -> None:
    """Kill the process and whatever it started (the docs check's page runners)."""
    with contextlib.suppress(ProcessLookupError):  # it ended on its own
        os.killpg(proc.pid, signal.SIGKILL)


def scratch(name: str) -> Path:
    """A new empty folder for a run's files, removed when the session ends."""
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_scratch))


def script_run(path: Path, args: Iterable[str] = ()) -> BackgroundRun:
    """A script of ``experiments/`` run once in a fresh Python on the CPU, in a
    scratch folder of its own (for what it writes)."""
    return BackgroundRun(
        [sys.executable, path, *args],
        timeout=300,
        env=dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg"),
        cwd=scratch(f"{path.parent.name}-{path.name}"),
    )


def start_all(modules: Iterable[ModuleType]) -> None:
    """Start the ``BackgroundRun``s at the top level of ``modules`` (or in a dict
    there)."""
    for module in modules:
        for value in vars(module).values():
            for run in value.values() if isinstance(value, dict) else [value]:
                if isinstance(run, BackgroundRun):
                    run.start()


def stop_all() -> None:
    """Drop the runs not yet started and kill the ones running."""
    _stopping.set()
    _pool.shutdown(wait=False, cancel_futures=True)
    for proc in list(_running):
        _kill(proc)
    shutil.rmtree(_scratch, ignore_errors=True)
