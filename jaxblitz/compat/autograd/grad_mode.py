"""Blitz 2, "autograd": grad mode -- ``torch.no_grad``, ``enable_grad`` and
``set_grad_enabled``. While it is off, ops record nothing for ``backward()``."""

from __future__ import annotations

import contextlib
import threading

_mode = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_mode, "enabled", True)


class set_grad_enabled(contextlib.ContextDecorator):  # noqa: N801 -- torch's name
    """``torch.set_grad_enabled(mode)``: a call, context manager or decorator."""

    def __init__(self, mode: bool):
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _mode.enabled = self.mode

    def __enter__(self):
        _mode.enabled = self.mode

    def __exit__(self, *exc):
        _mode.enabled = self.prev


class no_grad(contextlib.ContextDecorator):  # noqa: N801
    """``with torch.no_grad():`` -- ops record nothing."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _mode.enabled = False

    def __exit__(self, *exc):
        _mode.enabled = self.prev


class enable_grad(no_grad):  # noqa: N801
    def __enter__(self):
        self.prev = is_grad_enabled()
        _mode.enabled = True
