"""compat against real PyTorch on PyTorch's own test inputs (OpInfo, ModuleInfo,
OptimizerInfo): no silent differences, and docs/compat_coverage.md is current.

The engine is tests/compat/differential.py; every sample runs once per session: a
row's test runs its samples and leaves the outcomes in the session's shared folder,
where the page's test reads them (pytest-xdist spreads the rows over its workers).
An op whose silent differences the committed page records is an expected failure
(strict: fixing one fails until the page is rewritten), so ``-rx`` lists what is
still open; a new difference fails its op's test.
"""

import dataclasses
import functools
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal imports it

from tests.compat import differential  # noqa: E402

pytestmark = pytest.mark.slow
REGENERATE = "run `python -m tests.compat.differential --write`"
SHOWN = 8  # failing samples printed per op


def _recorded() -> dict[str, int]:
    page = differential.PAGE
    return differential.silent_rows(page.read_text()) if page.exists() else {}


# The rows the default run keeps (tests/tiers.py): the Blitz's ops, modules and
# optimizers, each in both of compat's modes.
SMOKE = {
    "add", "mul", "sum", "mean", "view", "flatten", "cat", "index_select",
    "log_softmax", "nn.functional.relu", "nn.functional.linear",
    "nn.functional.conv2d", "nn.Linear", "nn.Conv2d", "nn.MaxPool2d",
    "nn.CrossEntropyLoss", "nn.Embedding", "optim.SGD", "optim.Adam",
}  # fmt: skip


def _param(row: str, recorded: dict[str, int]):
    n = recorded.get(row, 0)
    reason = f"{n} silent differences recorded in docs/compat_coverage.md"
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if n else []
    if row in SMOKE:
        marks.append(pytest.mark.smoke)
    return pytest.param(row, marks=marks, id=row)


RECORDED = _recorded()
ROWS = [_param(row, RECORDED) for row in differential.rows()]


@functools.cache
def _row_outcomes(folder: Path, row: str) -> tuple[differential.Outcome, ...]:
    """The row's outcomes: run here, or read where another worker left them."""
    path = folder / f"differential-{row}.json"
    if path.exists():
        return tuple(differential.Outcome(**o) for o in json.loads(path.read_text()))
    outcomes = tuple(differential.run_all(row))
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps([dataclasses.asdict(o) for o in outcomes]))
    partial.replace(path)  # whole, for a reader in another worker
    return outcomes


@pytest.mark.smoke
def test_the_default_runs_rows_are_rows():
    missing = SMOKE - set(differential.rows())
    assert not missing, f"not rows of the differential suite: {sorted(missing)}"


@pytest.mark.parametrize("row", ROWS)
def test_compat_has_no_silent_difference_from_pytorch(shared_folder, row):
    mine = _row_outcomes(shared_folder, row)
    if not mine:
        pytest.skip(f"compat offers the name {row}, but none of its variants")
    silent = [o for o in mine if o.status == differential.SILENT]
    shown = "\n".join(f"  {o.case}\n    -> {o.detail}" for o in silent[:SHOWN])
    more = f"\n  ... and {len(silent) - SHOWN} more" if len(silent) > SHOWN else ""
    assert not silent, (
        f"{row}: {len(silent)} samples differ from PyTorch "
        f"(python -m tests.compat.differential --op {row}):\n{shown}{more}"
    )


def test_coverage_page_is_current(shared_folder):
    rows = differential.rows()
    outcomes = [o for row in rows for o in _row_outcomes(shared_folder, row)]
    page = differential.PAGE
    assert page.exists(), f"docs/compat_coverage.md is missing: {REGENERATE}"
    assert page.read_text() == differential.render(outcomes), (
        f"docs/compat_coverage.md is stale: {REGENERATE}"
    )
