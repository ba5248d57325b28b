"""benchmarks/check_device.py, the GPU round's correctness check, on the CPU."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

import check_device  # noqa: E402


def test_check_device_passes_here_and_compares_the_other_implementation(capsys):
    assert check_device.main() == 0
    out = capsys.readouterr().out
    assert "vs the CPU's 'xla'" in out  # on the CPU: im2col against lax.conv
    assert "device checks: passed" in out


def test_check_device_fails_on_a_wrong_gradient(monkeypatch):
    # The check can fail: a convolution off by a little is caught.
    from jaxblitz import models

    lenet = models.lenet
    monkeypatch.setattr(
        models,
        "lenet",
        lambda p, x, impl=None: lenet(p, x, impl) * (1.01 if impl is None else 1.0),
    )
    assert not check_device.core_check(1e-4)
