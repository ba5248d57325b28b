"""``torch.autograd.profiler``: the legacy ``profile`` (the same recorder as
:class:`jaxblitz.compat.profiler.profile`, with torch's legacy arguments) and
``record_function`` (the same class, as in torch)."""

from __future__ import annotations

from typing import Any

from jaxblitz.compat import profiler as _profiler
from jaxblitz.compat._profiler_events import EventList
from jaxblitz.compat.profiler import ProfilerActivity, record_function

__all__ = ["ProfilerActivity", "profile", "record_function"]


class profile(_profiler.profile):  # noqa: N801 -- torch's name
    """``with torch.autograd.profiler.profile() as prof:``; ``enabled=False``
    records nothing."""

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        **unused: Any,
    ) -> None:
        super().__init__(
            [ProfilerActivity.CPU],
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
        )
        self.enabled = enabled

    def __enter__(self) -> profile | None:  # type: ignore[override]
        if not self.enabled:
            return None  # torch's: a disabled profiler enters as None
        return super().__enter__()

    def start(self) -> None:
        if self.enabled:
            super().start()

    def stop(self) -> None:
        if self.enabled:
            super().stop()

    @property
    def function_events(self) -> EventList:
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total

    def table(self, *args: Any, **kwargs: Any) -> str:
        return self.events().table(*args, **kwargs)

    def __str__(self) -> str:
        return self.table()
