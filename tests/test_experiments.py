"""Smoke tests: every experiment script runs to the end and prints what it should."""

import os
import sys
from pathlib import Path

import pytest

from tests import background, tiers

ROOT = Path(__file__).resolve().parents[1]

# Each script's arguments (bundled data only) and a few landmark lines it prints.
EXPECTED = {
    "01_tensors.py": ([], ["shape", "numpy"]),
    "02_autograd.py": ([], ["4.5", "jaxpr"]),
    "03_neural_networks.py": ([], ["61706", "loss before", "loss after"]),
    "04_cifar10_classifier.py": (
        ["--dataset", "digits", "--epochs", "1", "--log-every", "100"],
        [
            "[1,   300] loss:",
            "Finished Training",
            "GroundTruth:",
            "Predicted:",
            "Accuracy of the network on the 359 test images",
            "Accuracy for class: 9",
        ],
    ),
    "03_neural_networks_nnx.py": (
        [],
        [
            "61706",
            "same as the functional lenet: True",
            "NNX step == functional step: True",
        ],
    ),
    "04_cifar10_nnx.py": (
        ["--dataset", "digits", "--epochs", "1", "--log-every", "100"],
        [
            "[1,   300] loss:",
            "Finished Training",
            "GroundTruth:",
            "Accuracy of the network on the 359 test images",
        ],
    ),
    "05_data_parallel.py": (
        ["--devices", "3"],
        [
            "Let's use 3 CPU devices!",
            "In Model: input size (10, 5) output size (10, 2)",
            "Outside: input size (30, 5) output_size (30, 2)",
            "In Model: input size (2, 5) output size (2, 2) (device 2, shard (4, 5))",
            "Outside: input size (10, 5) output_size (10, 2)",
            "equal to one device: True",
        ],
    ),
}


# Each script once, in a fresh Python, while other tests run.
RUNS = {
    script: background.script_run(ROOT / "experiments" / script, EXPECTED[script][0])
    for script in sorted(EXPECTED)
}


# The run the default run keeps (tests/tiers.py).
SMOKE = {"05_data_parallel.py"}


@pytest.mark.parametrize("script", tiers.smoke(sorted(EXPECTED), SMOKE))
def test_experiment_script_runs_and_prints_its_landmarks(script):
    _, landmarks = EXPECTED[script]
    proc = RUNS[script].result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    for landmark in landmarks:
        assert landmark in proc.stdout, f"{script} did not print {landmark!r}"


# Bad flags: a usage error before any data is read, not a traceback from inside.
BAD_FLAGS = {
    ("04_cifar10_classifier.py", "--dataset", "imagenet"): "invalid choice: 'imagenet'",
    ("04_cifar10_classifier.py", "--dataset", "digits", "--epochs", "0"): (
        "epochs must be >= 1, got 0"
    ),
    ("04_cifar10_nnx.py", "--dataset", "digits", "--log-every", "0"): (
        "log_every must be >= 1, got 0"
    ),
    ("05_data_parallel.py", "--devices", "0"): "expected a positive int or 'all'",
    ("05_data_parallel.py", "--devices", "100000"): (
        "at most 256 simulated CPU devices, got 100000"
    ),
    ("04_cifar10_classifier.py", "--dataset", "digits", "--out-dir", "/dev/null"): (
        "--out-dir /dev/null is a file, not a folder."
    ),
}
BAD_RUNS = {
    flags: background.script_run(ROOT / "experiments" / flags[0], flags[1:])
    for flags in BAD_FLAGS
}


@pytest.mark.parametrize("flags", list(BAD_FLAGS), ids=" ".join)
def test_experiment_script_refuses_bad_flags_with_usage_and_no_traceback(flags):
    proc = BAD_RUNS[flags].result()
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.startswith("usage: ") and "Traceback" not in proc.stderr
    assert BAD_FLAGS[flags] in proc.stderr, proc.stderr


def _damaged_data() -> dict:
    """A data folder whose CIFAR-10 archive is not gzip at all (no network needed)."""
    folder = background.scratch("damaged-data")
    (folder / "cifar-10-python.tar.gz").write_bytes(b"not a gzip archive\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg")
    return {"env": env | {"JAXBLITZ_DATA": str(folder)}, "cwd": folder}


DAMAGED_DATA_RUNS = {
    script: background.BackgroundRun(
        [sys.executable, ROOT / "experiments" / script], setup=_damaged_data
    )
    for script in ("04_cifar10_classifier.py", "04_cifar10_nnx.py")
}


@pytest.mark.parametrize("script", sorted(DAMAGED_DATA_RUNS))
def test_experiment_script_names_a_damaged_data_file_in_one_line(script):
    proc = DAMAGED_DATA_RUNS[script].result()
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]  # absl may warn before it
    assert last.startswith(f"{script}: error: "), last
    assert "cifar-10-python.tar.gz is truncated or not a .tar.gz archive" in last
