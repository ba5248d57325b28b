"""Every compat experiment script (the Blitz's PyTorch code with compat imports)
runs to the end on bundled data and prints its landmarks."""

from pathlib import Path

import pytest

from tests import background, tiers

ROOT = Path(__file__).resolve().parents[3]

EXPECTED = {
    "01_tensors.py": (
        [],
        [
            "Ones Tensor",
            "t: tensor([2., 2., 2., 2., 2.])",
            "n: [2. 2. 2. 2. 2.]",
            "dtype=torch.float64)",
        ],
    ),
    "02_autograd.py": (
        [],
        [
            "tensor([True, True])",
            "Does `b` require gradients?: True",
            "trainable: ['fc.weight', 'fc.bias']",
        ],
    ),
    "03_neural_networks.py": (
        [],
        ["<MseLossBackward0 object at", "<AddmmBackward0 object at", "loss:"],
    ),
    "04_cifar10_classifier.py": (
        ["--digits", "--epochs", "1"],
        [
            "Finished Training",
            "GroundTruth:",
            "Accuracy of the network on the 359 test images",
            "Accuracy for class: truck",
        ],
    ),
    "04_cifar10_compiled.py": (
        ["--epochs", "1"],
        [
            "[1,   300] loss:",
            "Finished Training",
            "compiled programs: 2",
            "Accuracy of the network on the 359 test images",
        ],
    ),
    "05_data_parallel.py": ([], ["Outside: input size torch.Size([10, 5])"]),
    "extras_custom_function.py": ([], ["Result: y =", "gradcheck: True"]),
    "extras_modules_and_checkpoints.py": (
        [],
        ["body frozen: True", "reloaded equal: True"],
    ),
}


# Each script once, in a fresh Python, while other tests run (tests/background.py).
RUNS = {
    script: background.script_run(
        ROOT / "experiments" / "compat" / script, EXPECTED[script][0]
    )
    for script in sorted(EXPECTED)
}


# The run the default run keeps (tests/tiers.py).
SMOKE = {"04_cifar10_classifier.py"}


@pytest.mark.parametrize("script", tiers.smoke(sorted(EXPECTED), SMOKE))
def test_compat_experiment_runs_and_prints_its_landmarks(script):
    _, landmarks = EXPECTED[script]
    proc = RUNS[script].result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    for landmark in landmarks:
        assert landmark in proc.stdout, f"{script} did not print {landmark!r}"


# --epochs 0 would train nothing and report an untrained net's accuracy.
ZERO_EPOCHS = {
    "04_cifar10_classifier.py": ["--digits", "--epochs", "0"],
    "04_cifar10_compiled.py": ["--epochs", "0"],  # digits always
}
BAD_EPOCHS = {
    script: background.script_run(ROOT / "experiments" / "compat" / script, flags)
    for script, flags in ZERO_EPOCHS.items()
}


@pytest.mark.parametrize("script", sorted(BAD_EPOCHS))
def test_compat_experiment_refuses_zero_epochs_with_usage_and_no_traceback(script):
    proc = BAD_EPOCHS[script].result()
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.startswith("usage: ") and "Traceback" not in proc.stderr
    assert "--epochs must be >= 1, got 0" in proc.stderr, proc.stderr
