"""Blitz 2, "autograd": grad mode -- ``torch.no_grad``, ``enable_grad``,
``set_grad_enabled`` and ``inference_mode``. While grad mode is off, ops record
nothing for ``backward()``.

Each is a context manager and a decorator, as in torch; the state is per thread.
"""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any

_mode = threading.local()
# How many inference_mode blocks are open, in any thread: while none is, a new
# storage need not ask its thread whether it is made in inference mode.
entered = [0]


def is_grad_enabled() -> bool:
    return getattr(_mode, "enabled", True)


def is_inference_mode_enabled() -> bool:
    return getattr(_mode, "inference", False)


def _set_enabled(mode: bool) -> None:
    if mode and is_inference_mode_enabled():
        # torch keeps recording nothing in inference mode even with grad mode on
        # (is_grad_enabled() says True there); compat's ops would record.
        raise NotImplementedError(
            "turning grad mode on inside torch.inference_mode() (enable_grad / "
            "set_grad_enabled(True)) is not supported by jaxblitz.compat; leave "
            "inference mode first (inference_mode(False))"
        )
    _mode.enabled = mode


class _Mode:
    """A context manager that is also a decorator (a fresh one per call, as
    torch's ``clone``), entered as often as needed."""

    def __init__(self) -> None:
        self._saved: list = []

    def clone(self) -> _Mode:
        return type(self)()

    def __call__(self, func: Any) -> Any:
        if inspect.isclass(func):
            raise RuntimeError(
                "Cannot decorate classes; it is ambiguous whether or not only the "
                "constructor or all methods should have the context manager "
                "applied; additionally, decorating a class at definition-site will "
                "prevent use of the identifier as a conventional type.  To specify "
                "which methods to decorate, decorate each of them individually."
            )

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return decorated

    def __enter__(self) -> None:
        self._saved.append((is_grad_enabled(), is_inference_mode_enabled()))
        self._switch()

    def __exit__(self, *exc: Any) -> None:
        _mode.enabled, _mode.inference = self._saved.pop()

    def _switch(self) -> None:
        raise NotImplementedError


class _BareDecorator(_Mode):
    """A mode that also decorates bare: ``@torch.no_grad`` as ``@torch.no_grad()``
    (torch's ``_NoParamDecoratorContextManager``)."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):  # noqa: N801 -- torch's name
    """``with torch.no_grad():`` -- ops record nothing."""

    def _switch(self) -> None:
        _mode.enabled = False


class enable_grad(_BareDecorator):  # noqa: N801
    """``with torch.enable_grad():`` -- grad mode back on (inside ``no_grad``)."""

    def _switch(self) -> None:
        _set_enabled(True)


class set_grad_enabled(_Mode):  # noqa: N801
    """``torch.set_grad_enabled(mode)``: a call (switches at once), a context
    manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def clone(self) -> set_grad_enabled:
        return type(self)(self.mode)

    def __enter__(self) -> None:
        # the constructor switched already; what to restore is what came before
        self._saved.append((self.prev, is_inference_mode_enabled()))
        _set_enabled(self.mode)

    def __call__(self, func: Any) -> Any:
        _mode.enabled = self.prev  # used as a decorator: nothing switches now
        return super().__call__(func)


class inference_mode(_Mode):  # noqa: N801
    """``torch.inference_mode(mode=True)``: grad mode off (and, with
    ``mode=False``, inference mode off and grad mode on), as a context manager or
    a decorator (``@torch.inference_mode`` or ``@torch.inference_mode()``).

    Tensors made inside do not require grad, and are *inference tensors*:
    ``is_inference()`` is True. torch also refuses them later in autograd and in
    in-place ops outside inference mode, and gives them no version counter;
    compat does not make those checks.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used bare as a decorator

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = mode

    def clone(self) -> inference_mode:
        return type(self)(self.mode)

    def __enter__(self) -> None:
        entered[0] += 1
        super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        entered[0] -= 1

    def _switch(self) -> None:
        _mode.enabled, _mode.inference = not self.mode, bool(self.mode)
