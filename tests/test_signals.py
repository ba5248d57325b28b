"""Every stop is clean: signals ignored at start stay ignored, a signal while the
outputs are written stops with 128 + N and no temporary file, a save that never
finished is tidied by the next start, and Ctrl-C while JAX loads is one line.
"""

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from jaxblitz import cli, data, train
from jaxblitz.checkpoints import Checkpointer
from jaxblitz.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, JAX_PLATFORMS="cpu", MPLBACKEND="Agg", PYTHONUNBUFFERED="1")


@pytest.fixture
def ignored():
    """Ignores a signal for one test, as ``nohup`` (SIGHUP) or a shell script's
    background job (SIGINT) leave it; restored after."""
    before = {}

    def ignore(signum):
        before[signum] = signal.signal(signum, signal.SIG_IGN)

    yield ignore
    for signum, handler in before.items():
        signal.signal(signum, handler)


def _name(signum):
    return signal.Signals(signum).name


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGINT], ids=_name)
def test_a_signal_ignored_at_start_stays_ignored(ignored, signum):
    ignored(signum)
    with cli.StopSignals() as stop:
        assert signal.getsignal(signum) is signal.SIG_IGN
        os.kill(os.getpid(), signum)  # ignored: nothing happens
        assert stop() is None
        assert signal.getsignal(signal.SIGTERM) == stop._handle  # not ignored
    assert signal.getsignal(signum) is signal.SIG_IGN


class _Stop(Exception):
    pass


def test_the_cli_under_nohup_keeps_sighup_ignored_while_training(
    ignored, tmp_path, monkeypatch
):
    ignored(signal.SIGHUP)
    during = {}

    def fit(config, dataset, **kwargs):
        during.update({s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM)})
        raise _Stop

    monkeypatch.setattr(cli.train, "fit", fit)
    with pytest.raises(_Stop):
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path), "--no-progress"])
    assert during[signal.SIGHUP] is signal.SIG_IGN
    assert during[signal.SIGTERM] not in (signal.SIG_DFL, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


@pytest.fixture(scope="module")
def tiny_digits():
    """40 training and 16 test digits: a whole CLI run in-process in seconds."""
    full = {split: data.load("digits", split) for split in ("train", "test")}
    return {
        "train": data.Dataset(*(x[:40] for x in full["train"][:2]),
                              full["train"].class_names),
        "test": data.Dataset(*(x[:16] for x in full["test"][:2]),
                             full["test"].class_names),
    }  # fmt: skip


class _Earlier(Exception):
    """What the test's own SIGTERM handler raises: the CLI's had been removed."""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=_name)
def test_a_signal_while_the_outputs_are_written_stops_with_no_temporary_file(
    tmp_path, capsys, monkeypatch, tiny_digits, signum
):
    def earlier(*args):
        raise _Earlier

    monkeypatch.setattr(cli.data, "load", lambda name, split, *a: tiny_digits[split])

    def grid(images, labels, names, path, predicted=None):  # the signal mid-write
        def write(f):
            f.write(b"half a picture")
            os.kill(os.getpid(), signum)
            f.write(b"the other half")

        atomic_write(path, write)

    monkeypatch.setattr(cli.plots, "save_image_grid", grid)
    previous = signal.signal(signum, earlier)
    try:
        code = cli.main(["--dataset", "digits", "--epochs", "1", "--out-dir",
                         str(tmp_path), "--no-progress"])  # fmt: skip
        assert signal.getsignal(signum) == earlier  # put back as it was
    finally:
        signal.signal(signum, previous)
    err = capsys.readouterr().err
    name = signal.Signals(signum).name
    assert code == 128 + signum, err
    assert f"{name}: stopped while writing the outputs; no temporary file is left" in (
        err
    )
    assert "--resume to write the outputs" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert not (tmp_path / "samples.png").exists()
    assert (tmp_path / "weights.safetensors").exists()  # written before the signal


def test_an_interrupted_save_removes_its_temporary_folder(tmp_path, monkeypatch):
    checkpointer = Checkpointer(tmp_path)
    state = {"w": np.ones(3, np.float32)}
    checkpointer.save(1, state, {})

    def second_ctrl_c(step, *args, **kwargs):  # orbax has begun writing step 2
        (tmp_path / f"{step}.orbax-checkpoint-tmp" / "state").mkdir(parents=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpointer._manager, "save", second_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        checkpointer.save(2, state, {})
    checkpointer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1"]


def test_a_second_signal_during_a_save_of_the_cli_stops_as_the_save_ends(
    tmp_path, monkeypatch
):
    checkpointer = Checkpointer(tmp_path)
    state = {"w": np.ones(3, np.float32)}
    orbax_save = checkpointer._manager.save

    def signalled(*args, **kwargs):  # the second Ctrl-C lands inside orbax
        os.kill(os.getpid(), signal.SIGINT)
        return orbax_save(*args, **kwargs)

    monkeypatch.setattr(checkpointer._manager, "save", signalled)
    with cli.StopSignals() as stop:
        os.kill(os.getpid(), signal.SIGINT)  # the first: fit finishes its steps
        with pytest.raises(train.TrainingInterrupted, match="second SIGINT"):
            cli._SavesFinish(checkpointer, stop).save(2, state, {})
    assert checkpointer.all_steps() == [2]  # whole, not cut
    checkpointer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2"]


def test_the_next_start_removes_orbax_leftovers_and_only_those(tmp_path):
    folder, outside = tmp_path / "checkpoints", tmp_path / "outside"
    (folder / "7.orbax-checkpoint-tmp" / "state").mkdir(parents=True)
    (folder / "8.orbax-checkpoint-tmp-1700000000").mkdir()
    (outside / "keep").mkdir(parents=True)
    (folder / "9.orbax-checkpoint-tmp").symlink_to(outside)  # a link: not ours
    (folder / "10.orbax-checkpoint-tmp").write_text("a file")  # not a folder
    (folder / "notes.orbax-checkpoint-tmp").mkdir()  # not orbax's name
    checkpointer = Checkpointer(folder)
    checkpointer.close()
    assert [p.name for p in checkpointer.removed] == [
        "7.orbax-checkpoint-tmp",
        "8.orbax-checkpoint-tmp-1700000000",
    ]
    assert sorted(p.name for p in folder.iterdir()) == [
        "10.orbax-checkpoint-tmp",
        "9.orbax-checkpoint-tmp",
        "notes.orbax-checkpoint-tmp",
    ]
    assert (outside / "keep").is_dir()


def test_a_second_signal_says_temporary_files_are_removed():
    with cli.StopSignals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)  # the first: fit finishes its steps
        assert stop() == signal.SIGTERM
        with pytest.raises(train.TrainingInterrupted) as e:
            os.kill(os.getpid(), signal.SIGTERM)
    assert e.value.signum == signal.SIGTERM
    assert "second SIGTERM; temporary files are removed" in str(e.value)


def console_script() -> tuple[str, str]:
    """``(module, function)`` of the ``jaxblitz-train`` console script."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module, function = project["scripts"]["jaxblitz-train"].split(":")
    return module, function


def test_ctrl_c_while_the_console_script_imports_jax_exits_130_in_one_line():
    module, function = console_script()
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    run = subprocess.Popen(  # -X importtime: a line as each module is imported
        [sys.executable, "-X", "importtime", "-c", code, "--dataset", "digits"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        cwd=ROOT,
    )  # fmt: skip
    try:
        for line in run.stderr:  # JAX is being imported: press Ctrl-C
            if line.rsplit("|", 1)[-1].strip().startswith("jax."):
                run.send_signal(signal.SIGINT)
                break
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    lines = [line for line in err.splitlines() if not line.startswith("import time")]
    assert run.returncode == 130, lines[-5:]
    assert lines == ["jaxblitz-train: interrupted"]


def test_the_console_script_imports_no_jax_before_it_handles_ctrl_c():
    module, _ = console_script()
    heavy = "{'jax', 'numpy'}"
    check = f"import sys, {module}; print(sorted({heavy} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True,
                         text=True, env=ENV, cwd=ROOT, timeout=60)  # fmt: skip
    assert out.stdout.strip() == "[]", out.stderr
