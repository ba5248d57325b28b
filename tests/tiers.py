"""The test tiers: the default run (the README's command, what CI runs), the
fast tier and the whole suite.

- ``python -m pytest -q -n auto --dist loadgroup``: the fast tier and the tests
  marked ``smoke`` (a few of each slow family: the differential suite's Blitz
  rows, the Blitz's scripts ported, the README's main job, ...).
- ``python -m pytest -q -n auto -m "not slow"``: the fast tier, for the inner loop.
- ``python -m pytest -q -n auto --dist loadgroup --whole``: every test.

A test is slow when it is marked so in its module, or when it took at least
``SLOW_SECONDS`` (setup, call and teardown together) in a run on two cores:
``tests/slow_tests.txt`` lists those, and ``tests/conftest.py`` marks them. The
list is measured, not guessed, from a run of the whole suite and one of the fast
tier itself (a test that is quick in the whole run can be slow without it: the
programs other tests compiled are not in the session's cache then):

    python -m pytest -q -n auto --dist loadgroup --whole --durations=0 > whole.log
    python -m pytest -q -n auto --dist loadgroup --durations=0 -m "not slow" > fast.log
    python -m tests.tiers whole.log fast.log

A new test is fast until a remade list says otherwise. A run given paths, ``-m``
or ``-k`` runs what those select, slow or not.
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

SLOW_SECONDS = 0.5
LIST = Path(__file__).with_name("slow_tests.txt")
# a test id runs to the end of its line: parameters may hold spaces
_LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S.*?)\s*$")


def durations(log: str) -> dict[str, float]:
    """Seconds per test id (setup, call and teardown summed) from pytest's
    ``--durations=0`` report; an xdist group's ``@name`` suffix dropped."""
    found: collections.Counter = collections.Counter()
    for line in log.splitlines():
        m = _LINE.match(line)
        if m:
            found[m.group(2).split("@")[0]] += float(m.group(1))
    return dict(found)


def smoke(names, kept) -> list:
    """``names`` as pytest params, those in ``kept`` marked ``smoke``: a slow
    family's few tests that the default run keeps."""
    import pytest

    marks = [pytest.mark.smoke]
    return [pytest.param(n, marks=marks if n in kept else [], id=n) for n in names]


def slow_ids() -> frozenset[str]:
    """The ids ``slow_tests.txt`` lists (comment lines start with '#')."""
    if not LIST.exists():
        return frozenset()
    lines = LIST.read_text().splitlines()
    return frozenset(s for s in lines if s and not s.startswith("#"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__)
        return 2
    slow_set: set[str] = set()
    for log in args:
        timed = durations(Path(log).read_text())
        if not timed:
            print(f"{log}: no --durations=0 report found", file=sys.stderr)
            return 1
        slow_set |= {t for t, s in timed.items() if s >= SLOW_SECONDS}
    slow = sorted(slow_set)
    header = (
        f"# Tests that took {SLOW_SECONDS} s or more in a run on two cores "
        "(tests/tiers.py).\n# Remade with: python -m tests.tiers WHOLE_LOG FAST_LOG\n"
    )
    LIST.write_text(header + "".join(f"{t}\n" for t in slow))
    print(f"{len(slow)} tests are slow: {LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
