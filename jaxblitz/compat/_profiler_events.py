"""Blitz 4, "Train the network" (where the time goes): what
``torch.profiler.profile`` hands back -- ``events()``, ``key_averages()`` and
their ``table()``, and the Chrome trace -- as torch's ``profiler_util`` builds
them (its column names, widths and number formats). Times are in
microseconds, memory in bytes, as in torch."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from typing import Any

from jaxblitz.compat._profiler_table import _format_time, build_table
from jaxblitz.files import atomic_write


class _OnTheHost:
    """What every event of compat's says of itself: a CPU span of this process,
    with no device time, memory or FLOP counts."""

    is_async = False
    is_legacy = False
    is_remote = False
    node_id = -1
    device_type = "cpu"
    overload_name = ""
    flops = 0
    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0


class FunctionEvent(_OnTheHost):
    """One recorded span: an op, a backward node, a ``record_function`` or a
    lazy sync (``compat::sync``)."""

    def __init__(self, id: int, raw: list, zero: int) -> None:
        self.id = id
        self.name = self.key = raw[0]
        self.start_us = (raw[1] - zero) / 1e3
        self.end_us = (raw[2] - zero) / 1e3
        self.input_shapes = raw[4]
        self.self_cpu_memory_usage = raw[5]
        self.is_user_annotation = raw[6] == "user_annotation"
        self.thread = raw[7]
        self.count = 1
        self.stack: list[str] = []
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        below = sum(c.cpu_memory_usage for c in self.cpu_children)
        return self.self_cpu_memory_usage + below

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} "
            f"cpu_time_total={self.cpu_time_total:.3f} "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg(_OnTheHost):
    """The events of one key summed (``key_averages()``'s rows)."""

    cpu_parent = None

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes: Any = None
        self.is_user_annotation = False
        self.stack: list[str] = []
        self.cpu_children: list = []

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} "
            f"self_cpu_time={_format_time(self.self_cpu_time)} "
            f"cpu_time={_format_time(self.cpu_time)} "
            f"input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


def build(raw: list[list], profile_memory: bool = False) -> EventList:
    """The recorder's raw events as :class:`FunctionEvent` trees."""
    zero = min((r[1] for r in raw), default=0)
    made = {id(r): FunctionEvent(i, r, zero) for i, r in enumerate(raw, 1)}
    for r in raw:
        parent = None if r[3] is None else made.get(id(r[3]))
        if parent is not None:
            made[id(r)].cpu_parent = parent
            parent.cpu_children.append(made[id(r)])
    return EventList(made.values(), profile_memory)


class EventList(list):
    """torch's ``EventList``: a list of events with ``table`` and
    ``key_averages``."""

    def __init__(self, events: Iterable = (), profile_memory: bool = False) -> None:
        super().__init__(events)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        stats: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            name = "ProfilerStep*" if e.key.startswith("ProfilerStep#") else e.key
            key = (name, e.is_user_annotation)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            stats.setdefault(key, FunctionEventAvg()).add(e)
        averages = EventList(stats.values(), self._profile_memory)
        for avg in averages:
            if avg.key.startswith("ProfilerStep#"):  # torch's: steps as one row
                avg.key = "ProfilerStep*"
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:

        return build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """The events as Chrome's trace format (``chrome://tracing``, Perfetto)."""
        trace = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                continue
            args: dict[str, Any] = {}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            trace.append(
                {
                    "ph": "X",
                    "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                    "name": e.name,
                    "pid": os.getpid(),
                    "tid": e.thread,
                    "ts": e.start_us,
                    "dur": e.cpu_time_total,
                    "args": args,
                }
            )
        text = json.dumps({"traceEvents": trace, "displayTimeUnit": "ms"})
        data = text.encode()
        if os.fspath(path).endswith(".gz"):  # as torch: gzip by the suffix
            data = gzip.compress(data)
        atomic_write(path, lambda f: f.write(data), links="follow")
