"""Blitz 4, "Training a classifier": the server ``DataLoader`` workers are forked
from, run in its own interpreter by :mod:`._zygote` (never imported by the main
process). It imports ``jaxblitz.compat`` once, so that each worker it forks starts
with compat loaded and JAX not yet started.
"""

from __future__ import annotations

import os
import signal
import socket

from jaxblitz.compat.utils._zygote import _exactly, run_worker


def serve(fd: int) -> None:
    """Fork a worker for each request on the socket ``fd`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process stops workers
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the workers
    import jaxblitz.compat  # noqa: F401 (imported once here, not by every worker)

    sock = socket.socket(fileno=fd)
    while True:
        try:
            head, fds, _, _ = socket.recv_fds(sock, 8, 2)
            if not head:
                return
            rest = _exactly(sock, 8 - len(head)) if len(head) < 8 else b""
            body = _exactly(sock, int.from_bytes(head + rest, "little"))
        except (OSError, TypeError):
            return
        if body is None or len(fds) != 2:
            return
        pid = os.fork()
        if pid == 0:
            run_worker(sock, fds, body)
        for f in fds:
            os.close(f)
        try:
            sock.sendall(pid.to_bytes(8, "little"))
        except OSError:
            return
