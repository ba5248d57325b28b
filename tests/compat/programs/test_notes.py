"""The Blitz notes (``tests/compat/notes/``) give the same results, key for key, with
compat as with real PyTorch (skipped where PyTorch is not installed).

Values are compared with a float tolerance, tensors by dtype and shape too, errors
by type and the start of their message. Every differing key is printed.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.notes import TOPICS
from tests.compat.notes.record import plain

pt = pytest.importorskip("torch")

RTOL, ATOL = 1e-4, 1e-5  # float32 convolutions and a few SGD steps
MESSAGE_START = 40  # characters of an error message that must agree


def _run(script, torch) -> dict[str, object]:
    try:
        return script.run(torch)
    except Exception as error:  # noqa: BLE001 -- reported as a key like the rest
        return {"!run": plain(error)}


def same(ours: object, theirs: object) -> bool:
    """Whether two plain results agree (see ``notes/record.py`` for their shapes)."""
    if isinstance(theirs, tuple) and theirs[:1] == ("error",):
        if not (isinstance(ours, tuple) and ours[:2] == theirs[:2]):
            return False
        return (
            " ".join(ours[2].split())[:MESSAGE_START]
            == (" ".join(theirs[2].split())[:MESSAGE_START])
        )
    if isinstance(theirs, tuple) and theirs[:1] in (("tensor",), ("ndarray",)):
        if not (isinstance(ours, tuple) and ours[:3] == theirs[:3]):
            return False
        a, b = np.asarray(ours[3]), np.asarray(theirs[3])
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return a.shape == b.shape and np.allclose(
                a, b, rtol=RTOL, atol=ATOL, equal_nan=True
            )
        return np.array_equal(a, b)
    if type(ours) is not type(theirs):
        return False
    if isinstance(theirs, float):
        return (math.isnan(ours) and math.isnan(theirs)) or math.isclose(
            ours, theirs, rel_tol=RTOL, abs_tol=ATOL
        )
    if isinstance(theirs, list | tuple):
        return len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(
            same(ours[k], theirs[k]) for k in theirs
        )
    return ours == theirs


def differences(ours: dict, theirs: dict) -> list[str]:
    missing = object()
    lines = []
    for key in list(theirs) + [k for k in ours if k not in theirs]:
        a, b = ours.get(key, missing), theirs.get(key, missing)
        if a is missing or b is missing or not same(a, b):
            show = lambda v: "<missing>" if v is missing else repr(v)[:300]  # noqa: E731
            lines.append(f"{key}\n    torch:  {show(b)}\n    compat: {show(a)}")
    return lines


@pytest.mark.parametrize("topic", TOPICS)
def test_notes_match_pytorch_key_for_key(topic):
    script = importlib.import_module(f"tests.compat.notes.{topic}")
    theirs = _run(script, pt)
    assert "!run" not in theirs and not any(k.endswith(".!raised") for k in theirs), (
        f"the script itself fails under PyTorch: {theirs}"
    )
    ours = _run(script, jaxblitz.compat)
    diff = differences(ours, theirs)
    summary = f"{topic}: {len(diff)} keys differ (PyTorch records {len(theirs)})"
    print(summary, *diff, sep="\n")
    assert not diff, summary + ", printed above"


def test_same_compares_values_with_tolerance_and_errors_by_start():
    t = ("tensor", "float32", (2,), [1.0, 2.0])
    assert same(("tensor", "float32", (2,), [1.0, 2.0 + 1e-7]), t)
    assert not same(("tensor", "float64", (2,), [1.0, 2.0]), t)
    assert not same(("tensor", "float32", (2,), [1.0, 2.1]), t)
    assert not same(1, True) and not same(1.0, 1)
    assert same(float("nan"), float("nan"))
    error = ("error", "RuntimeError", "one of the variables needed for gradient")
    assert same(("error", "RuntimeError", error[2] + ": [compat [3]]"), error)
    assert not same(("error", "ValueError", error[2]), error)
