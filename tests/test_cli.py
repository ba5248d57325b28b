"""End-to-end tests of the training CLI on the bundled digits."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from safetensors.numpy import load_file

from jaxblitz import cli, parallel, runtime
from tests import background
from tests.background import BackgroundRun


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--batch-size", "0"], "batch_size must be >= 1"),
        (["--widths", "6"], "expected two positive ints"),
        (["--optimizer", "lbfgs"], "invalid choice: 'lbfgs'"),
        (["--lr", "fast"], "invalid float value: 'fast'"),
        (["--cpu-threads", "0"], "expected a positive int or 'all'"),
    ],
)
def test_cli_rejects_bad_flags_with_usage_and_exit_code_2(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--dataset", "digits", *flags])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_cpu_threads_after_jax_started_is_a_usage_error(capsys):
    import jax

    jax.devices()  # this process already runs JAX: the pool has its size
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--dataset", "digits", "--cpu-threads", "1"])
    assert exit_info.value.code == 2
    assert "--cpu-threads: set_cpu_threads must run before" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("platforms", "expected"),
    [("cpu", False), ("cuda", True), ("cpu,tpu", True), ("rocm", True)],
)
def test_accelerator_installed_follows_jax_platforms(platforms, expected, platform):
    platform(platforms)
    assert runtime.accelerator_installed() is expected


@pytest.fixture
def platform():
    """Sets ``jax_platforms`` (the tests run with JAX_PLATFORMS=cpu) for a test."""
    import jax

    before = jax.config.jax_platforms
    yield lambda value: jax.config.update("jax_platforms", value)
    jax.config.update("jax_platforms", before)


def test_accelerator_installed_finds_a_plugin_as_jax_does(
    tmp_path, monkeypatch, platform
):
    # This machine has no accelerator plugin; an installed one is a module in
    # the jax_plugins namespace package (jax[cuda] installs jax_plugins.xla_cuda12).
    platform(None)  # unset: the plugins decide
    monkeypatch.delitem(sys.modules, "jax_plugins", raising=False)
    assert not runtime.accelerator_installed()
    (tmp_path / "jax_plugins" / "xla_fake_gpu").mkdir(parents=True)
    (tmp_path / "jax_plugins" / "xla_fake_gpu" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "jax_plugins", raising=False)
    assert runtime.accelerator_installed()


class _Stop(Exception):
    pass


@pytest.mark.parametrize("accelerator", [False, True])
def test_cli_narrows_cpu_threads_at_batch_4_only_without_an_accelerator(
    accelerator, tmp_path, monkeypatch
):
    # One thread for the CPU's batch-4 run; on a GPU machine the narrow mask
    # would also size XLA's GPU compiler pool to one (10x slower compiles).
    calls = []
    monkeypatch.setattr(cli, "accelerator_installed", lambda: accelerator)
    monkeypatch.setattr(cli, "set_cpu_threads", lambda n: calls.append(n) or True)

    def stop(*_):  # the run's lock is taken right after the threads are set
        raise _Stop

    monkeypatch.setattr(cli, "DirectoryLock", stop)
    monkeypatch.setenv("JAXBLITZ_XLA_CACHE", "")
    with pytest.raises(_Stop):
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path / "run")])
    assert calls == ([] if accelerator else [1])


@pytest.mark.parametrize(
    ("raised", "why"),
    [
        (AssertionError(), "none of the platforms it names has a device here"),
        (RuntimeError("Unable to initialize backend 'cuda'"), "Unable to initialize"),
    ],
    ids=["jax-asserts", "jax-raises"],
)
def test_cli_with_jax_platforms_that_cannot_start_is_a_usage_error(
    raised, why, tmp_path, monkeypatch, platform, capsys
):
    # What JAX raises as its backends start: an AssertionError, no message, where
    # JAX_PLATFORMS=cuda and no NVIDIA GPU is visible.
    import jax

    def fail():
        raise raised

    def stop(*_):  # the old code went on to take the run's lock
        raise _Stop

    platform("cuda")
    monkeypatch.setattr(jax, "devices", fail)
    monkeypatch.setattr(cli, "DirectoryLock", stop)
    monkeypatch.setenv("JAXBLITZ_XLA_CACHE", "")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"error: JAX_PLATFORMS='cuda': JAX could not start a backend: {why}" in err


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"JAXBLITZ_NUM_PROCESSES": "2"}, "JAXBLITZ_PROCESS_ID must be a whole "),
        (
            {"JAXBLITZ_NUM_PROCESSES": "two", "JAXBLITZ_PROCESS_ID": "0"},
            "JAXBLITZ_NUM_PROCESSES must be a whole number, got 'two'",
        ),
        (
            {"JAXBLITZ_NUM_PROCESSES": "2", "JAXBLITZ_PROCESS_ID": "2"},
            "JAXBLITZ_PROCESS_ID must be in [0, JAXBLITZ_NUM_PROCESSES=2), got 2.",
        ),
    ],
    ids=["no-process-id", "not-a-number", "id-out-of-range"],
)
def test_cli_with_a_coordinator_but_bad_process_variables_is_a_usage_error(
    variables, message, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("JAXBLITZ_XLA_CACHE", "")  # this process's JAX left alone
    monkeypatch.setenv("JAXBLITZ_COORDINATOR", "127.0.0.1:1")
    for name in ("JAXBLITZ_NUM_PROCESSES", "JAXBLITZ_PROCESS_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: jaxblitz-train") and message in err, err


RUN_FILES = background.scratch("cli-digits")  # out-dirs and the runs' XLA cache
ENV = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg",
           JAXBLITZ_XLA_CACHE=str(RUN_FILES / "xla"))  # fmt: skip


def run_args(out: Path) -> list[str]:
    return [sys.executable, "-m", "jaxblitz", "--dataset", "digits",
            "--epochs", "2", "--lr", "0.01", "--checkpoint-every", "10",
            "--log-every", "100", "--no-progress", "--out-dir", str(out)]  # fmt: skip


# One whole run in a fresh process, read by the tests below; it starts with an
# empty compilation cache of its own (RUN_FILES / "xla").
WHOLE = BackgroundRun(run_args(RUN_FILES / "whole"), timeout=300, env=ENV)


def whole_run() -> tuple[str, Path]:
    proc = WHOLE.result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, RUN_FILES / "whole"


@pytest.mark.smoke  # the README's main job: the default run keeps it
def test_cli_trains_on_digits_and_writes_every_output():
    printed, out = whole_run()
    assert "[1,   100] loss:" in printed and "Finished Training" in printed
    assert "Accuracy of the network on the" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test"]["accuracy"] > 0.5  # chance is 0.1
    assert len(metrics["epochs"]) == 2 and metrics["epochs"][1]["images_per_s"] > 0
    assert set(metrics["test"]["per_class"]) == {str(d) for d in range(10)}
    for name in ("loss.png", "per_class.png", "samples.png"):
        picture = matplotlib.image.imread(out / name)
        assert picture.ndim == 3 and min(picture.shape[:2]) > 100, name
    weights = load_file(str(out / "weights.safetensors"))
    assert weights["conv1.weight"].shape == (6, 1, 5, 5)
    assert any(p.name.isdigit() for p in (out / "checkpoints").iterdir())


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs CPU affinity and two cores",
)
def test_cli_runs_xla_on_one_thread_at_batch_4_in_a_fresh_process():
    printed, _ = whole_run()
    assert "XLA:CPU on 1 thread(s)" in printed
    assert "Accuracy of the network on the 359 test images" in printed


# Batch 128 on a multi-core CPU: jaxblitz-train splits it over one device per core.
BIG_BATCH = BackgroundRun(
    [*run_args(RUN_FILES / "big-batch"), "--batch-size", "128", "--epochs", "1"],
    timeout=300,
    env=ENV,
)


def test_cli_picks_one_device_per_core_from_batch_64_and_one_below():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    assert cli.cpu_devices(4) is None and cli.cpu_devices(32) is None
    assert cli.cpu_devices(64) == cli.cpu_devices(128) == (cores if cores > 1 else None)
    proc = BIG_BATCH.result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    if cores > 1:
        split = f"each batch of 128 split as {parallel.shard_sizes(128, cores)}"
        assert f"Data parallel over {cores} cpu devices" in proc.stdout
        assert split in proc.stdout
    assert "Accuracy of the network on the 359 test images" in proc.stdout
    printed, _ = whole_run()  # batch 4: one device
    assert "Data parallel" not in printed


def test_a_cli_run_keeps_its_compiled_programs_on_disk():
    whole_run()
    assert any((RUN_FILES / "xla").iterdir()), "the run left no compiled programs"


def checkpoint_steps(out: Path) -> list[int]:
    folder = out / "checkpoints"
    if not folder.exists():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def test_a_run_killed_mid_epoch_resumes_to_bit_identical_weights(tmp_path):
    _, whole = whole_run()  # its programs are on disk: the runs below load them
    killed = tmp_path / "killed"
    proc = subprocess.Popen(run_args(killed), env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not any(s >= 40 for s in checkpoint_steps(killed)):
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no checkpoint appeared in time"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not (killed / "weights.safetensors").exists()
    assert max(checkpoint_steps(killed)) < 359  # killed inside the first epoch

    resumed = subprocess.run([*run_args(killed), "--resume"], env=ENV, timeout=300,
                             capture_output=True, text=True)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resumed from step" in resumed.stdout
    a = load_file(str(whole / "weights.safetensors"))
    b = load_file(str(killed / "weights.safetensors"))
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
