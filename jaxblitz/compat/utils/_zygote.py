"""Blitz 4, "Training a classifier": where ``DataLoader`` workers are forked from.

torch forks its workers from the main process. Here that process runs JAX,
whose threads a forked copy lacks: its first JAX call deadlocks. So one fresh
interpreter per process, started at the first ``DataLoader`` with workers,
imports ``jaxblitz.compat`` without starting JAX and forks each worker on
request (:mod:`._zygote_server`: what Python's ``forkserver`` does, without
re-running the main script in it); a worker starts in milliseconds, with JAX
usable. Each request carries the main process's working directory, ``sys.path``
and environment at that moment, and the two pipe ends the worker talks through.
"""

from __future__ import annotations

import atexit
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import traceback

_BOOT = (
    "import sys; sys.path[:] = sys.argv[2:]; "
    "from jaxblitz.compat.utils._zygote_server import serve; serve(int(sys.argv[1]))"
)
_PATIENCE = 120  # seconds for the server to start and fork a worker
_lock = threading.Lock()
_server: tuple[int, subprocess.Popen, socket.socket] | None = None  # (owner pid, ..)


def fork(worker_id: int, read_fd: int, write_fd: int) -> int:
    """Start worker ``worker_id`` reading ``read_fd``, writing ``write_fd``: its pid."""
    body = pickle.dumps((worker_id, os.getcwd(), list(sys.path), dict(os.environ)))
    with _lock:
        for _ in range(2):  # a server that died is started again, once
            sock = _connection()
            try:
                socket.send_fds(
                    sock, [len(body).to_bytes(8, "little")], [read_fd, write_fd]
                )
                sock.sendall(body)
                answer = _exactly(sock, 8)
            except OSError:
                answer = None
            if answer is not None:
                return int.from_bytes(answer, "little")
            _stop()
    raise RuntimeError(
        "DataLoader could not start its worker processes: the interpreter they are "
        "forked from exited (its error, if any, is printed above). Use "
        "num_workers=0 to load in this process."
    )


def _connection() -> socket.socket:
    global _server
    if _server is not None and _server[0] == os.getpid():
        return _server[2]
    if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
        raise NotImplementedError(
            "DataLoader(num_workers > 0) needs os.fork and Unix sockets, which this "
            "platform lacks; use num_workers=0"
        )
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(_PATIENCE)  # a server that never answers is an error, not a hang
    proc = subprocess.Popen(
        [sys.executable, "-c", _BOOT, str(theirs.fileno()), *sys.path],
        pass_fds=(theirs.fileno(),),
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),  # workers never claim a GPU/TPU
    )
    theirs.close()
    _server = (os.getpid(), proc, ours)
    return ours


@atexit.register
def _stop() -> None:
    global _server
    if _server is None:
        return
    owner, proc, sock = _server
    _server = None
    sock.close()  # the server sees the end of its stream and exits
    if owner == os.getpid():
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _exactly(sock: socket.socket, n: int) -> bytes | None:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


# -- in the server's interpreter: a forked worker -------------------------------


def run_worker(sock: socket.socket, fds: list[int], body: bytes) -> None:
    """In a child forked by the server: run worker ``body`` on the pipe ends ``fds``."""
    code = 1
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        worker_id, cwd, path, env = pickle.loads(body)
        os.chdir(cwd)
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(env, JAX_PLATFORMS="cpu")
        from jaxblitz.compat.utils._worker import main

        main(worker_id, *fds)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)
