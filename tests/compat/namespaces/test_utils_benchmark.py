"""torch.utils.benchmark: Timer runs a statement as torch's does (warm-up, block
size, replicates) and its Measurement's statistics and printed form are torch's,
checked on fixed times, and Compare's tables of them are torch's; the rest of
the suite is refused by name."""

import re

import pytest

import jaxblitz.compat as ct
import jaxblitz.compat.utils.benchmark as ours
from jaxblitz.compat._not_offered import NotOffered

pt = pytest.importorskip("torch")
import torch.utils.benchmark as theirs  # noqa: E402

TASKS = {
    "labelled": {
        "stmt": "x + 1",
        "setup": "x = torch.ones(3)",
        "label": "add",
        "sub_label": "float",
        "description": "n=3",
    },
    "plain": {"stmt": "pass"},
    "multiline": {
        "stmt": "a = 1\nb = 2",
        "setup": "import os\nx = 1",
        "num_threads": 4,
        "sub_label": "q",
    },
}
TIMES = {
    "spread": [1e-5, 2e-5, 1.5e-5, 1.2e-5, 3e-5],
    "one": [1e-3],
    "two": [1e-3, 1.1e-3],
    "nanoseconds": [5e-9, 5.1e-9, 5.05e-9, 4.9e-9],
    "steady": [1.0, 1.01, 1.02, 0.99, 1.0, 1.05],
}


def _body(measurement) -> str:
    """The printed form without its first line's address and module."""
    return re.sub(r"^<.* object at 0x[0-9a-f]+>", "<Measurement>", repr(measurement))


@pytest.mark.parametrize("times", TIMES)
@pytest.mark.parametrize("task", TASKS)
def test_a_measurement_prints_and_summarises_as_torchs(task, times):
    mine = ours.Measurement(7, TIMES[times], ours.Timer(**TASKS[task])._task_spec)
    torchs = theirs.Measurement(7, TIMES[times], theirs.Timer(**TASKS[task])._task_spec)
    assert _body(mine) == _body(torchs)
    for name in ("median", "mean", "iqr", "significant_figures", "has_warnings"):
        assert getattr(mine, name) == getattr(torchs, name), name
    for name in ("title", "env", "as_row_name", "stmt", "num_threads", "times"):
        assert getattr(mine, name) == getattr(torchs, name), name


def test_merge_pools_replicates_of_one_task_as_torchs():
    def merged(b):
        spec = b.Timer("x", label="a")._task_spec
        other = b.Timer("y")._task_spec
        parts = [
            b.Measurement(2, [1e-3, 2e-3], spec),
            b.Measurement(4, [8e-3], spec),
            b.Measurement(1, [5e-3], other),
        ]
        return [
            (m.number_per_run, m.times, m.title) for m in b.Measurement.merge(parts)
        ]

    assert merged(ours) == merged(theirs)


@pytest.mark.parametrize("x", [3.14159, 123456.0, 0.000123456, 1e-6, 2.5e-5])
def test_units_and_significant_figures_are_torchs(x):
    assert ours.select_unit(x) == theirs.select_unit(x)
    for n in (1, 2, 3):
        assert ours.trim_sigfig(x, n) == theirs.trim_sigfig(x, n)
    unit = ours.select_unit(x)[0]
    assert ours.unit_to_english(unit) == theirs.unit_to_english(unit)


def test_timeit_runs_the_statement_warm_up_then_number_times():
    runs = []
    timer = ours.Timer("runs.append(torch.ones(2) * 2)", globals={"runs": runs})
    m = timer.timeit(300)
    assert len(runs) == 3 + 300  # torch's warm-up: number // 100, at least 2
    assert m.number_per_run == 300 and len(m.raw_times) == 1
    assert m.times[0] == m.raw_times[0] / 300 > 0
    assert runs[-1].tolist() == [2.0, 2.0]
    assert "1 measurement, 300 runs , 1 thread" in repr(m)


def test_blocked_autorange_times_blocks_of_one_size_until_min_run_time():
    seen = []
    x = ct.ones(8, 8)
    timer = ours.Timer("y = x @ x", globals={"x": x}, label="matmul", description="8x8")
    m = timer.blocked_autorange(
        callback=lambda number, t: seen.append(number), min_run_time=0.05
    )
    assert len(seen) == len(m.raw_times) >= 1
    assert set(seen) == {m.number_per_run}
    assert sum(m.raw_times) >= 0.05
    assert m.title == "matmul" and m.description == "8x8"
    assert m.median > 0 and all(t > 0 for t in m.times)


def test_adaptive_autorange_stops_at_max_run_time_or_confidence():
    m = ours.Timer("torch.zeros(4).sum()").adaptive_autorange(
        threshold=0.5, min_run_time=0.01, max_run_time=0.5
    )
    assert len(m.raw_times) >= 1 and m.number_per_run >= 1
    assert len(m.raw_times) <= 3 or m.meets_confidence(0.5) or sum(m.raw_times) > 0.5


def test_the_default_globals_hold_compats_torch():
    timer = ours.Timer("assert torch is compat", globals={"compat": ct})
    assert timer.timeit(3).number_per_run == 3


@pytest.mark.parametrize("b", [ours, theirs], ids=["compat", "torch"])
def test_the_statement_sees_num_threads_and_the_number_is_restored(b):
    torch = ct if b is ours else pt
    before, seen = torch.get_num_threads(), []
    timer = b.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen})
    timer.timeit(4)
    b.Timer(
        "seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=3
    ).timeit(2)
    assert seen == [1] * 6 + [3] * 4
    assert torch.get_num_threads() == before


ERRORS = {
    "stmt": lambda b: b.Timer(lambda: 1),
    "global_setup": lambda b: b.Timer("x", global_setup="int a;"),
    "language": lambda b: b.Timer("x", language="java"),
    "repeat": lambda b: b.Timer("x").repeat(),
    "autorange": lambda b: b.Timer("x").autorange(),
}


@pytest.mark.parametrize("case", ERRORS)
def test_bad_uses_raise_torchs_errors(case):
    errors = []
    for b in (ours, theirs):
        with pytest.raises(Exception) as caught:
            ERRORS[case](b)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]


def test_cpp_fuzzers_and_callgrind_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="language='cpp'"):
        ours.Timer("x", language="cpp")
    with pytest.raises(NotOffered, match="Callgrind"):
        ours.Timer("x").collect_callgrind()
    for name in ("Fuzzer", "FuzzedTensor", "CallgrindStats"):
        assert not hasattr(ours, name) and hasattr(theirs, name)
    with pytest.raises(NotOffered, match="torch.utils.benchmark.Fuzzer is not"):
        ours.Fuzzer  # noqa: B018 -- reading the name is the test


def _compared(b, styles):
    """A Compare of fixed-time measurements: two labels, two thread counts,
    a missing cell and a noisy one, in ``styles``."""
    rows = [
        ("dot", "mul_sum", "[10]", 1, [1.2e-6, 1.3e-6, 1.25e-6]),
        ("dot", "bmm", "[10]", 1, [2.5e-6, 2.6e-6, 2.4e-6]),
        ("dot", "mul_sum", "[1000]", 1, [4.1e-5, 4.0e-5, 4.2e-5]),
        ("dot", "mul_sum", "[10]", 4, [9e-7, 3e-6, 1e-6, 2e-6]),
        ("dot", "bmm", "[10]", 4, [8.1e-6, 8.0e-6]),
        ("mm", "mm", "64", 1, [3.3e-3, 3.4e-3]),
    ]
    results = []
    for label, description, sub_label, threads, times in rows:
        timer = b.Timer(f"{description}(x)", label=label, sub_label=sub_label,
                        description=description, num_threads=threads)  # fmt: skip
        spec = timer._task_spec
        results.append(b.Measurement(1, times, spec))
    compare = b.Compare(results[:2])
    compare.extend_results(results[2:])
    for style in styles:
        getattr(compare, style)()
    return str(compare)


@pytest.mark.parametrize(
    "styles",
    [(), ("trim_significant_figures",), ("colorize",), ("highlight_warnings",),
     ("trim_significant_figures", "colorize", "highlight_warnings")],
    ids=str,
)  # fmt: skip
def test_compare_renders_measurements_as_torchs_tables(styles):
    assert _compared(ours, styles) == _compared(theirs, styles)


def test_compare_refuses_what_is_not_a_measurement_as_torch():
    for b in (ours, theirs):
        with pytest.raises(ValueError, match="^Expected an instance of `Measurement`"):
            b.Compare([1.0])


def test_a_script_imports_benchmark_as_torchs():
    from jaxblitz.compat.utils import benchmark
    from jaxblitz.compat.utils.benchmark import Timer

    assert benchmark is ours is ct.utils.benchmark and Timer is ours.Timer
