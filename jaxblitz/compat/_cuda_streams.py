"""Blitz 4, "Training on GPU": ``torch.cuda``'s streams, events and device
contexts.

JAX runs a device's work in the order it was dispatched, as if on one stream. On a
GPU, compat's streams are that one stream: work "on" another stream runs in order
with the rest, which gives the same values (streams only allow overlap), and an
event's ``record`` waits for the queue, so that ``elapsed_time`` measures the work
between two events. Without a GPU each name answers as torch's CPU-only build does.
"""

from __future__ import annotations

import time
from typing import Any

from jaxblitz.compat import _wait
from jaxblitz.compat.tensor import _dtype


def _gpu_index(device: Any = None) -> int:
    """The index of the GPU ``device`` names (``None``: the current one); raises
    torch's "Torch not compiled with CUDA enabled" without a GPU."""
    if isinstance(device, str | _dtype.device):
        device = _dtype.device(device).index
    _dtype.jax_device(_dtype.device("cuda", device))
    return device or 0


class Stream:
    """``torch.cuda.Stream``: on a GPU, JAX's one ordered queue of the device."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> Stream:
        if not _dtype.gpus():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self = super().__new__(cls)
        self.device = _dtype.device("cuda", _gpu_index(device))
        self.priority = priority
        return self

    def query(self) -> bool:
        return True  # done as far as anyone can tell: work waits where it is read

    def synchronize(self) -> None:
        _wait.synchronize("gpu")

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to wait for: every stream here is the device's one queue."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for: every stream here is the device's one queue."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self) -> int:
        return hash(self.device)

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream=0x0>"


class Event:
    """``torch.cuda.Event``: ``record`` waits for the GPU's queue and notes the
    time, so that ``start.elapsed_time(end)`` is the milliseconds between."""

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ) -> None:
        if not _dtype.gpus():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        _wait.synchronize("gpu")
        self._time = time.perf_counter()

    def query(self) -> bool:
        return True  # record waited for the work before it

    def synchronize(self) -> None:
        """Nothing left to wait for: ``record`` waited."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for: every stream here is the device's one queue."""

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Both events must be created with argument 'enable_timing=True'."
            )
        if self._time is None or end_event._time is None:
            raise RuntimeError(
                "Both events must be recorded before calculating elapsed time."
            )
        return (end_event._time - self._time) * 1000.0


def current_stream(device: Any = None) -> Stream:
    return Stream(_gpu_index(device))


def default_stream(device: Any = None) -> Stream:
    return Stream(_gpu_index(device))


def set_stream(stream: Stream | None) -> None:
    """Nothing to switch: every stream here is the device's one queue."""


def is_current_stream_capturing() -> bool:
    if not _dtype.gpus():
        raise RuntimeError(
            "Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing"
        )
    return False  # compat never captures CUDA graphs


class StreamContext:
    """``with torch.cuda.stream(s):`` -- the work inside runs in order with the
    rest (the device's one queue)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)


def _index(device: Any, optional: bool) -> int:
    """torch's ``_get_device_index``: a cuda device, or an int; -1 for None where
    ``optional``."""
    if isinstance(device, str):
        device = _dtype.device(device)
    if isinstance(device, _dtype.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index
    if device is None:
        if optional:
            return -1
        raise ValueError(
            "Expected a torch.device with a specified index or an integer, "
            f"but got:{device}"
        )
    return int(device)


def _switch(index: int) -> None:
    """Make GPU ``index`` the current one: compat's current GPU is the first."""
    if index < 0:
        return
    if not _dtype.gpus():
        raise RuntimeError("PyTorch was compiled without CUDA support")
    _gpu_index(index)
    if index != 0:
        raise NotImplementedError(
            f"torch.cuda.set_device({index}) is not supported by jaxblitz.compat: "
            "its current GPU is the first; name the device instead "
            f"(tensor.to('cuda:{index}'))"
        )


class device:  # noqa: N801 -- torch's name
    """``with torch.cuda.device(i):`` -- the current GPU inside the block."""

    def __init__(self, device: Any) -> None:
        self.idx = _index(device, optional=True)

    def __enter__(self) -> None:
        _switch(self.idx)

    def __exit__(self, *exc: object) -> None:
        return None


class device_of(device):  # noqa: N801 -- torch's name
    """``with torch.cuda.device_of(t):`` -- the current GPU is ``t``'s."""

    def __init__(self, obj: Any) -> None:
        where = obj.device
        self.idx = (where.index or 0) if where.type == "cuda" else -1


def set_device(device: Any) -> None:
    index = _index(device, optional=False)
    if index >= 0 and not _dtype.gpus():
        # torch's CPU-only build: its binding is missing
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")
    _switch(index)
