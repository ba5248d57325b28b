"""Blitz 4 (train the network): ``torch.utils.benchmark`` -- :class:`Timer`, which
times a statement as ``timeit`` does, and the :class:`Measurement` it returns,
printed as torch prints it (median, IQR, runs per measurement, warnings).

    import torch.utils.benchmark as benchmark
    t = benchmark.Timer("net(x)", globals={"net": net, "x": x})
    print(t.blocked_autorange(min_run_time=1))

torch's algorithms, rule for rule (warm-up, block size, replicates, statistics).
The clock is compat's: :func:`timer` runs the pending work (lazy mode) and waits
for JAX's queue before each reading, as torch's waits for the accelerator, so a
block's time is its work's. ``Compare`` prints measurements as torch's tables
(:mod:`._benchmark_compare`). Python statements only: the fuzzers and
Callgrind's instruction counts are refused by name.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import sys
import textwrap
import timeit
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from jaxblitz.compat import _not_offered, _threads

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _torch() -> Any:
    import jaxblitz.compat as torch  # imported when used: compat imports utils

    return torch


def timer() -> float:
    """``timeit.default_timer()`` once compat's pending work has run."""
    _torch().cpu.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer times (all but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label, else the one-line statement, else the statement indented."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        paren = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{paren}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """A Timer's result: ``raw_times`` of ``number_per_run`` runs each."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # the user's

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # torch: the task's fields read through (m.stmt, m.num_threads)
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """torch's estimate from the interquartile points (in float32, as its)."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        points = self._sorted_times[
            n_total // 4 : int(np.ceil(np.float32(3 * n_total / 4)))
        ]
        std = float(np.std(np.asarray(points, np.float32)))
        sqrt_n = float(np.sqrt(np.float32(len(points))))
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        relative = _log10_f32(self._median / interval)
        return min(
            max(int(np.floor(np.float32(relative))), 1), _MAX_SIGNIFICANT_FIGURES
        )

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, np.float64)
        self._median = float(np.quantile(times, 0.5))
        self._mean = float(times.mean())
        self._p25 = float(np.quantile(times, 0.25))
        self._p75 = float(np.quantile(times, 0.75))
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg: str) -> None:
        rel_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
            f"of the median measurement.\n           {msg}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        # torch's property fails and its __getattr__ answers the task's env
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(
            f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"
        )
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        runs = "per measurement," if n > 1 else ","
        threads = "s" if self.num_threads > 1 else ""
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{runs} {self.num_threads} thread{threads}"
        )
        lines.append("\n".join(self._warnings))
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of one task merged into one Measurement per task, at one
        run per time (metadata dropped)."""
        grouped: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec, None) for spec, times in grouped.items()]


def _log10_f32(x: float) -> float:
    """torch's float32 ``log10``: correctly rounded to float32 (NumPy's float32
    log10 can land an ulp away, as at 1e-6)."""
    return float(np.float32(np.log10(np.float64(np.float32(x)))))


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows ``t`` seconds in O(1) figures (torch's float32 rule)."""
    power = int(_log10_f32(t) // 3)
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(power, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {
        "ns": "nanosecond",
        "us": "microsecond",
        "ms": "millisecond",
        "s": "second",
    }[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` to ``n`` significant figures, in float32 as torch's."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(_log10_f32(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """``torch.get_num_threads()`` answers ``n`` inside the block, as compat's
    thread-dependent ops read it. XLA's CPU pool is left as it is: it is sized
    once per process (:mod:`jaxblitz.compat._threads`), and a Timer's default of
    one thread must not shrink it for the rest of the run."""
    prior = _threads._numbers["intra"]
    _threads._numbers["intra"] = _threads._checked("set_num_threads", n)
    try:
        yield
    finally:
        _threads._numbers["intra"] = prior


def _clean(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """``torch.utils.benchmark.Timer``: ``timeit.Timer`` with warm-up, replicates
    and a :class:`Measurement` to print."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.CPP, "cpp", "c++"):
            raise _not_offered.NotOffered(
                "torch.utils.benchmark.Timer(language='cpp') is not supported by "
                "jaxblitz.compat: compat has no libtorch to compile C++ against"
            )
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        self._globals.setdefault("torch", _torch())
        self._language = Language.PYTHON
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most "
                "likely this code can simply be moved to `setup`."
            )
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(
            stmt=stmt, setup=setup, timer=timer, globals=self._globals
        )
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(
            number_per_run=number, raw_times=times, task_spec=self._task_spec
        )

    def timeit(self, number: int = 1000000) -> Measurement:
        """``stmt`` run ``number`` times, after a warm-up of a hundredth of that."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(
        self,
        number: int,
        stop_hook: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], Any] | None = None,
    ) -> list[float]:
        total_time, can_stop = 0.0, False
        times: list[float] = []
        with set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = self._timeit(number)
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        # torch's rule: grow by tens until the timer's overhead is under 0.01%
        with set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                relative_overhead = overhead / time_taken
                if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(
        self,
        callback: Callable[[int, float], Any] | None = None,
        min_run_time: float = 0.2,
    ) -> Measurement:
        """Blocks of ``stmt`` (a size that makes the timer's cost negligible)
        until ``min_run_time`` seconds are spent."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(
            number, lambda times: True, min_run_time, callback=callback
        )
        return self._measurement(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """As :meth:`blocked_autorange`, until the IQR is under ``threshold`` of
        the median (or ``max_run_time`` is spent)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            return len(times) > 3 and self._measurement(number, times).meets_confidence(
                threshold=threshold
            )

        times = self._measurement_loop(
            number, stop_hook, min_run_time, max_run_time, callback=callback
        )
        return self._measurement(number, times)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        raise _not_offered.NotOffered(
            "torch.utils.benchmark.Timer.collect_callgrind is not supported by "
            f"jaxblitz.compat: {_CALLGRIND}"
        )


_CALLGRIND = "Callgrind's instruction counts are not offered: time with Timer"
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.utils.benchmark",
    {
        **_not_offered.each(
            "Fuzzer FuzzedParameter FuzzedTensor FuzzedSparseTensor ParameterAlias",
            "torch's op fuzzers are not offered",
        ),
        **_not_offered.each(
            "CallgrindStats CopyIfCallgrind FunctionCount FunctionCounts", _CALLGRIND
        ),
    },
)

# the tables read this module's Measurement and unit rules
from jaxblitz.compat.utils import _benchmark_compare  # noqa: E402

_benchmark_compare.common = sys.modules[__name__]
Colorize, Compare = _benchmark_compare.Colorize, _benchmark_compare.Compare
