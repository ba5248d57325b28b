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


class _Stop(Exception):
    pass


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


def console_script() -> tuple[str, str]:
    """``(module, function)`` of the ``jaxblitz-train`` console script."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module, function = project["scripts"]["jaxblitz-train"].split(":")
    return module, function