"""Blitz 4, "Train the network" (where the time goes): ``key_averages().table()``
laid out as torch's ``profiler_util._build_table`` lays out a CPU profile."""

from __future__ import annotations

from typing import Any

_WIDTH = 12  # torch's DEFAULT_COLUMN_WIDTH
_SPACING = 2


def _format_memory(nbytes: int) -> str:
    for size, unit in ((1024**3, "GB"), (1024**2, "MB"), (1024, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return f"{nbytes} B"


def _share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _time(time_us: float, unit: str | None) -> str:
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit or "")
    return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{unit}"


def build_table(
    events: Any,
    sort_by: str | None,
    row_limit: int,
    max_name_column_width: int | None,
    max_shapes_column_width: int | None,
    header: str | None,
    profile_memory: bool,
    top_level_events_only: bool,
    time_unit: str | None,
) -> str:
    if len(events) == 0:
        return ""
    has_shapes = any(e.input_shapes for e in events)
    if sort_by is not None:
        field = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, field), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total"]
    headers.append("CPU time avg")
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [_WIDTH] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row = "".join("{: >" + str(w) + "}" + " " * _SPACING for w in widths)
    sep = "".join("-" * w + " " * _SPACING for w in widths)
    line_length = sum(w + _SPACING for w in widths) - _SPACING

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += [
            "=" * line_length,
            "This report only display top-level ops statistics",
        ]
    lines += [sep, row.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        values: list[Any] = [
            name,
            _share(e.self_cpu_time_total, total),
            _time(e.self_cpu_time_total, time_unit),
            _share(e.cpu_time_total, total),
            _time(e.cpu_time_total, time_unit),
            _time(e.cpu_time, time_unit),
        ]
        if profile_memory:
            values += [
                _format_memory(e.cpu_memory_usage),
                _format_memory(e.self_cpu_memory_usage),
            ]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        lines.append(row.format(*values))
    lines += [sep, f"Self CPU time total: {_time(total, time_unit)}"]
    return "".join(line + "\n" for line in lines)


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"
