"""Crash safety: a kill during a save keeps the previous checkpoint; Ctrl-C saves.

The SIGKILL-mid-epoch resume to bit-identical weights is in tests/test_cli.py.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jaxblitz import cli, data, train
from jaxblitz.checkpoints import Checkpointer
from jaxblitz.models import flatten_params
from tests.checkpoint_worker import state_for

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
KILLS = 10  # kill points spread over one save's duration


def test_sigkill_at_many_points_of_a_save_leaves_the_last_checkpoint_loadable(
    tmp_path,
):
    folder = tmp_path / "ckpt"
    like = state_for(0)
    restored_steps = []
    for trial in range(KILLS):
        worker = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "checkpoint_worker.py"), str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=ENV,
        )
        try:
            durations = []
            while len(durations) < 2:  # two whole saves: warm, and timed
                words = worker.stdout.readline().split()
                assert words, "the worker died"
                if words[0] == "done":
                    durations.append(float(words[2]))
            words = worker.stdout.readline().split()
            assert words[0] == "start"
            # Kill points from the start of a save to its end (and a bit beyond).
            time.sleep(trial / (KILLS - 1) * 1.2 * np.mean(durations))
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
        finally:
            if worker.poll() is None:
                worker.kill()
        assert worker.returncode == -signal.SIGKILL
        checkpointer = Checkpointer(folder)
        step = checkpointer.latest_step()
        state, meta = checkpointer.restore(like)
        checkpointer.close()
        assert meta == {"step": step}
        for name, expected in state_for(step).items():
            np.testing.assert_array_equal(np.asarray(state[name]), expected)
        assert step >= int(words[1]) - 1  # the save before the killed one, or it
        restored_steps.append(step)
    assert restored_steps == sorted(set(restored_steps))  # every run moved on


@pytest.fixture(scope="module")
def digits_train():
    return data.load("digits", "train")


def test_ctrl_c_saves_a_checkpoint_exits_cleanly_and_resumes_bit_identically(
    tmp_path, digits_train
):
    out = tmp_path / "run"
    flags = ["--dataset", "digits", "--epochs", "1", "--log-every", "50",
             "--no-progress", "--out-dir", str(out)]  # fmt: skip
    run = subprocess.Popen(  # programs from the session's compilation cache
        [sys.executable, "-m", "jaxblitz", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        for line in run.stdout:  # training has begun: press Ctrl-C
            if line.startswith("[1,    50] loss:"):
                run.send_signal(signal.SIGINT)
                break
        stdout, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    assert "SIGINT: finishing the running steps" in stderr
    assert "Continue with resume=True (jaxblitz-train --resume)" in stderr
    steps = sorted(int(p.name) for p in (out / "checkpoints").iterdir()
                   if p.name.isdigit())  # fmt: skip
    # No --checkpoint-every: without Ctrl-C the only checkpoints are epoch ends.
    assert steps and steps[-1] % 50 == 0 and 50 <= steps[-1] < 360, steps
    assert f"Training interrupted at step {steps[-1]}" in stderr
    assert not (out / "weights.safetensors").exists()

    # Resume (tests/test_cli.py runs --resume itself) and compare with one
    # uninterrupted run.
    config = train.Config(dataset="digits", epochs=1, log_every=50)
    checkpointer = Checkpointer(out / "checkpoints")
    resumed, _ = train.fit(config, digits_train, checkpointer=checkpointer,
                           resume=True, log=lambda line: None)  # fmt: skip
    checkpointer.close()
    whole, _ = train.fit(config, digits_train, log=lambda line: None)
    got, expected = flatten_params(resumed.params), flatten_params(whole.params)
    assert int(resumed.step) == 360 and got.keys() == expected.keys()
    for name, value in expected.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_ctrl_c_inside_fit_raises_keyboard_interrupt_after_saving(
    tmp_path, digits_train
):
    """The library face: fit saves, then raises; the handler is restored."""
    config = train.Config(dataset="digits", epochs=2, log_every=100)
    few = data.Dataset(*(x[:40] for x in digits_train[:2]), digits_train.class_names)
    checkpointer = Checkpointer(tmp_path / "ckpt")
    previous = signal.getsignal(signal.SIGINT)

    def on_epoch_end(epoch, state, metrics):  # Ctrl-C during the first epoch end
        os.kill(os.getpid(), signal.SIGINT)
        return {}

    with (
        pytest.raises(KeyboardInterrupt, match=r"interrupted at step 10 \(epoch 2"),
        cli.StopSignals() as stop,
    ):
        train.fit(config, few, checkpointer=checkpointer, stop=stop,
                  log=lambda line: None, on_epoch_end=on_epoch_end)  # fmt: skip
    assert signal.getsignal(signal.SIGINT) is previous
    assert checkpointer.latest_step() == 10
    state, history = train.fit(config, few, checkpointer=checkpointer,
                               resume=True, log=lambda line: None)  # fmt: skip
    checkpointer.close()
    assert int(state.step) == 2 * 10 and [h["epoch"] for h in history] == [1, 2]
