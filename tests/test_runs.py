"""Issue 19: a run owns its checkpoints and its --out-dir, and every mismatch, limit
and bad flag gets one clear error (the kill -9 matrix is in test_cli/test_crash_safety).
"""

import contextlib
import dataclasses
import json
import os
import signal
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxblitz import cli, kernels, models, resources, runs, train
from jaxblitz.checkpoints import Checkpointer, CheckpointWriteError, CorruptFileError
from jaxblitz.data import epoch_order
from jaxblitz.files import DirectoryInUseError, DirectoryLock, atomic_write, write_json
from tests.test_train import assert_trees_equal, random_data

QUIET = {"log": lambda line: None}


def small(**changes) -> train.Config:
    base = train.Config(dataset="x", epochs=1, checkpoint_every=3, loop="step")
    return dataclasses.replace(base, **changes)


def trained(directory: Path, config: train.Config, data=None):
    checkpointer = Checkpointer(directory)
    try:
        return train.fit(config, data or random_data(24), checkpointer=checkpointer,
                         **QUIET)  # fmt: skip
    finally:
        checkpointer.close()


# -- 1. stale checkpoints: a run owns its checkpoints --------------------------------


def test_a_fresh_run_into_a_directory_with_checkpoints_is_refused(tmp_path):
    trained(tmp_path, small())
    before = sorted(p.name for p in tmp_path.iterdir())
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(runs.RunMismatchError) as e:
        train.fit(small(lr=0.003), random_data(24), checkpointer=checkpointer, **QUIET)
    checkpointer.close()
    message = str(e.value)
    assert "earlier run" in message and "--resume" in message
    assert "--out-dir" in message and "--fresh" in message
    assert "nothing is deleted" in message and "Delete" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_fresh_moves_the_earlier_run_aside_and_resume_restores_only_the_new_run(
    tmp_path, capsys
):
    out = tmp_path / "R"
    flags = ["--dataset", "digits", "--epochs", "1", "--out-dir", str(out),
             "--no-progress", "--log-every", "1000"]  # fmt: skip
    assert cli.main(flags) == 0
    first = json.loads((out / "metrics.json").read_text())["run"]["id"]
    # The case: a new run with other settings into the same directory.
    with pytest.raises(SystemExit):  # --fresh and --resume exclude each other
        cli.main([*flags, "--lr", "0.003", "--fresh", "--resume"])
    assert cli.main([*flags, "--lr", "0.003"]) == 1
    assert "holds checkpoints of an earlier run" in capsys.readouterr().err
    assert cli.main([*flags, "--lr", "0.003", "--fresh", "--epochs", "2"]) == 0
    printed = capsys.readouterr().out
    assert "Moved the earlier run's files" in printed
    (aside,) = out.glob("earlier-*")
    assert {p.name for p in aside.iterdir()} >= {"checkpoints", "metrics.json"}
    assert json.loads((aside / "metrics.json").read_text())["run"]["id"] == first
    second = json.loads((out / "metrics.json").read_text())["run"]
    assert second["id"] != first and second["identity"]["lr"] == 0.003
    assert cli.main([*flags, "--lr", "0.003", "--epochs", "2", "--resume"]) == 0
    assert f"Resumed from step 720 (epoch 3, batch 0) of run {second['id']}" in (
        capsys.readouterr().out
    )


# -- 2. and 3. changed settings on resume: refused by name, never "corrupt" ---------


@pytest.mark.parametrize(
    "change",
    [{"lr": 0.003}, {"momentum": 0.5}, {"momentum": 0.0}, {"optimizer": "adam"},
     {"widths": (8, 16)}, {"seed": 1}, {"batch_size": 8}, {"drop_last": True}],
    ids=str,
)  # fmt: skip
def test_changed_settings_on_resume_are_refused_by_name_not_called_corrupt(
    tmp_path, change
):
    trained(tmp_path, small(epochs=1))
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(runs.RunMismatchError) as e:
        train.fit(small(epochs=2, **change), random_data(24),
                  checkpointer=checkpointer, resume=True, **QUIET)  # fmt: skip
    checkpointer.close()
    assert not isinstance(e.value, CorruptFileError)
    message = str(e.value)
    for name in change:
        assert f"{name}: checkpoint " in message, message
    assert "corrupt" not in message and "Delete" not in message


def test_damaged_metadata_is_named_as_damage_before_any_array_is_read(tmp_path):
    trained(tmp_path, small())
    meta_file = tmp_path / "6" / "meta" / "metadata"
    meta = json.loads(meta_file.read_text())
    meta["epoch"] = "one"
    meta_file.write_text(json.dumps(meta))
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(CorruptFileError, match=r"damaged metadata \(epoch missing"):
        train.fit(small(epochs=2), random_data(24), checkpointer=checkpointer,
                  resume=True, **QUIET)  # fmt: skip
    checkpointer.close()


def test_a_mistyped_run_record_is_named_as_damage_not_a_traceback(tmp_path):
    trained(tmp_path, small())
    meta_file = tmp_path / "6" / "meta" / "metadata"
    good = json.loads(meta_file.read_text())
    damages = [
        ("run.identity", {"identity": None}),
        ("run.changes", {"changes": 5}),
        ("run.changes", {"changes": ["epochs"]}),  # a list, but not of changes
    ]
    for name, damage in damages:
        meta_file.write_text(json.dumps(good | {"run": good["run"] | damage}))
        checkpointer = Checkpointer(tmp_path)
        try:
            with pytest.raises(CorruptFileError, match=rf"damaged metadata \({name}"):
                train.fit(small(epochs=2), random_data(24), checkpointer=checkpointer,
                          resume=True, **QUIET)  # fmt: skip
        finally:
            checkpointer.close()


def test_other_data_on_resume_is_refused_naming_the_channels(tmp_path):
    trained(tmp_path, small())
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(runs.RunMismatchError, match=r"image_shape.: \[3, 32, 32\]"):
        train.fit(small(epochs=2), random_data(24, channels=1),
                  checkpointer=checkpointer, resume=True, **QUIET)  # fmt: skip
    checkpointer.close()


def test_extending_epochs_on_resume_is_said_and_recorded_with_its_step(tmp_path):
    trained(tmp_path, small(epochs=1))
    lines = []
    checkpointer = Checkpointer(tmp_path)
    state, history = train.fit(small(epochs=2, log_every=5), random_data(24),
                               checkpointer=checkpointer, resume=True,
                               log=lines.append)  # fmt: skip
    run = checkpointer.read_meta()["run"]
    checkpointer.close()
    assert int(state.step) == 12 and len(history) == 2
    assert "Resuming with epochs changed from 1 to 2 at step 6." in lines
    assert {"step": 6, "setting": "epochs", "from": 1, "to": 2} in run["changes"]
    assert {"step": 6, "setting": "log_every", "from": 2000, "to": 5} in run["changes"]


def test_a_change_in_the_number_of_devices_is_recorded_not_silent():
    config = small()
    meta = {"config": dataclasses.asdict(config), "devices": 1, "epoch": 1}
    meta["position"] = 0
    identity = runs.run_identity(config, random_data(24))
    meta["run"] = {"id": "r", "identity": identity, "changes": []}
    run = runs.resumed_run(meta, config, identity, 6, "here", devices=2)
    assert run["changes"] == [{"step": 6, "setting": "devices", "from": 1, "to": 2}]


def test_fewer_epochs_than_the_run_has_trained_are_refused(tmp_path):
    trained(tmp_path, small(epochs=2))
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(runs.RunMismatchError, match="already trained into epoch 2"):
        train.fit(small(epochs=1), random_data(24), checkpointer=checkpointer,
                  resume=True, **QUIET)  # fmt: skip
    checkpointer.close()


def test_an_extended_run_equals_one_that_ran_all_its_epochs(tmp_path):
    trained(tmp_path / "a", small(epochs=1))
    checkpointer = Checkpointer(tmp_path / "a")
    extended, _ = train.fit(small(epochs=2), random_data(24),
                            checkpointer=checkpointer, resume=True,
                            **QUIET)  # fmt: skip
    checkpointer.close()
    whole, _ = train.fit(small(epochs=2), random_data(24), **QUIET)
    assert_trees_equal(extended.params, whole.params)


def test_resume_without_a_checkpoint_says_so_instead_of_starting_afresh(tmp_path):
    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(FileNotFoundError, match="Nothing to resume"):
        train.fit(small(), random_data(24), checkpointer=checkpointer, resume=True,
                  **QUIET)  # fmt: skip
    checkpointer.close()
    assert not any(p.name.isdigit() for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="needs a checkpointer"):
        train.fit(small(), random_data(24), resume=True, **QUIET)


# -- 4. two runs, one --out-dir ------------------------------------------------------

HOLD = """
import sys, time
from jaxblitz.files import DirectoryLock
lock = DirectoryLock(sys.argv[1])
print("locked", flush=True)
time.sleep(60)
"""


def test_a_second_run_on_a_locked_out_dir_is_refused_naming_the_holder(
    tmp_path, capsys
):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(DirectoryInUseError, match=f"pid {holder.pid} on host"):
            DirectoryLock(tmp_path)
        code = cli.main(["--dataset", "digits", "--out-dir", str(tmp_path),
                         "--no-progress"])  # fmt: skip
        assert code == 1
        assert "is in use by another run" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    # kill -9 drops the lock with the process: the next run takes it over.
    with DirectoryLock(tmp_path) as lock:
        assert lock.previous["pid"] == holder.pid
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert not lock.path.exists()


# -- 5./6. limits and bad flags: one paragraph, no traceback -------------------------


def test_a_batch_size_above_the_data_is_one_batch_of_all_of_it():
    idx, mask = epoch_order(jax.random.key(0), 10, 1_000_000_000)
    assert idx.shape == (1, 10) and float(mask.sum()) == 10
    assert sorted(np.asarray(idx[0]).tolist()) == list(range(10))


def test_widths_too_big_for_memory_are_refused_up_front(tmp_path, capsys):
    config = train.Config(widths=(100_000, 100_000))
    need = resources.memory_estimate(config, 3, 50_000)
    assert need > 10**12  # conv2 alone holds 2.5e11 weights
    with pytest.raises(ValueError, match=r"needs at least [\d,.]+ GiB .* Lower"):
        resources.check_memory(config, 3, 50_000)
    # The Blitz's own settings fit anywhere.
    assert resources.memory_estimate(train.Config(), 3, 50_000) < 2**30
    code = cli.main(["--dataset", "digits", "--widths", "100000,100000",
                     "--out-dir", str(tmp_path), "--no-progress"])  # fmt: skip
    assert code == 1 and "GiB" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--seed", str(2**70)], "seed must fit in 64 bits"),
        (["--widths", "-6,16"], "expected two positive ints"),
        (["--lr", "-0.1"], "lr must be > 0"),
        (["--batch-size", "-4"], "batch_size must be >= 1"),
        (["--out-dir", ""], "--out-dir is empty"),
        (["--data-dir", ""], "--data-dir is empty"),
    ],
)
def test_bad_flags_are_one_line_naming_the_flag(flags, expected, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--dataset", "digits", *flags])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_an_out_dir_that_is_a_file_or_under_one_is_refused_before_loading_data(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(cli.train, "fit", None)  # never reached
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, expected in [
        (a_file, "is a file, not a folder"),
        (a_file / "sub", "part of that path is a file"),
    ]:
        with pytest.raises(SystemExit):
            cli.main(["--dataset", "digits", "--out-dir", str(out)])
        assert expected in capsys.readouterr().err


def test_an_out_dir_whose_outputs_are_the_wrong_kind_is_refused_before_loading_data(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(cli.data, "load", None)  # never reached
    (tmp_path / "a" / "checkpoints").parent.mkdir()
    (tmp_path / "a" / "checkpoints").write_text("x")
    (tmp_path / "b" / "metrics.json").mkdir(parents=True)
    for out, expected in [
        (tmp_path / "a", "checkpoints, a file where this run writes its checkpoints"),
        (tmp_path / "b", "metrics.json, a folder where this run writes its metrics"),
    ]:
        for resume in ([], ["--resume"]):
            with pytest.raises(SystemExit) as e:
                cli.main(["--dataset", "digits", "--out-dir", str(out), *resume])
            assert e.value.code == 2
            err = capsys.readouterr().err
            assert expected in err and "--fresh" in err, err


def test_a_new_run_never_writes_over_an_earlier_runs_outputs_without_checkpoints(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "weights.safetensors").write_bytes(b"earlier weights")
    (tmp_path / "metrics.json").write_text("{}")
    (tmp_path / "checkpoints").mkdir()  # emptied to save space, say
    monkeypatch.setattr(cli.data, "load", None)  # never reached
    with pytest.raises(SystemExit) as e:
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--fresh" in err, err
    assert "earlier run's metrics.json, weights.safetensors" in err, err
    assert (tmp_path / "weights.safetensors").read_bytes() == b"earlier weights"

    def no_data(*args):  # --fresh gets past the check; stop before training
        raise FileNotFoundError("no data here")

    monkeypatch.setattr(cli.data, "load", no_data)
    assert cli.main(["--dataset", "digits", "--out-dir", str(tmp_path), "--fresh"])
    [aside] = tmp_path.glob("earlier-*")
    assert (aside / "weights.safetensors").read_bytes() == b"earlier weights"


def test_an_out_dir_whose_lock_file_is_a_folder_is_one_error_line(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(cli.data, "load", None)  # never reached
    (tmp_path / DirectoryLock.NAME).mkdir()
    code = cli.main(["--dataset", "digits", "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"cannot lock {tmp_path}: Is a directory" in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permissions")
def test_an_unwritable_out_dir_is_refused(tmp_path, capsys):
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(SystemExit):
            cli.main(["--dataset", "digits", "--out-dir", str(tmp_path / "run")])
    finally:
        tmp_path.chmod(stat.S_IRWXU)
    assert "cannot be written: Permission denied" in capsys.readouterr().err


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small file system of its own (root and mount(8) needed, else skip)."""
    path.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True)  # fmt: skip
    if made.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_read_only_out_dir_is_refused_before_loading_data(tmp_path, capsys):
    with tmpfs(tmp_path / "ro", "ro,size=64k") as ro, pytest.raises(SystemExit):
        cli.main(["--dataset", "digits", "--out-dir", str(ro)])
    assert "cannot be written: Read-only file system" in capsys.readouterr().err


def test_a_full_disk_keeps_old_checkpoints_and_leaves_no_temp_files(tmp_path):
    config = small(epochs=1)
    state = train.init_state(config, 3)
    with tmpfs(tmp_path / "disk", "size=600k") as disk:
        checkpointer = Checkpointer(disk / "ckpt", keep=100)
        with pytest.raises(CheckpointWriteError) as e:
            for step in range(1, 1000):
                checkpointer.save(step, state, {"epoch": 0, "position": step})
        assert "No space left on device" in str(e.value)
        assert f"intact (newest: step {step - 1})" in str(e.value)
        assert not list((disk / "ckpt").glob("*tmp*"))
        restored, meta = checkpointer.restore(state)
        assert meta["position"] == step - 1
        assert_trees_equal(restored, state)
        checkpointer.close()
    with tmpfs(tmp_path / "disk2", "size=256k") as disk:
        # An output written atomically: the good file stays, no temp file.
        good = disk / "metrics.json"
        write_json({"ok": 1}, good)
        with contextlib.suppress(OSError), open(disk / "filler", "wb") as f:
            f.write(b"\0" * 10**6)
        with pytest.raises(OSError) as e:
            write_json({"big": "x" * 10**6}, good)
        assert e.value.filename == str(good)
        assert json.loads(good.read_text()) == {"ok": 1}
        assert not list(disk.glob(".metrics.json.*"))


# -- 7. signals ----------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_checkpoint_and_stop_like_ctrl_c(tmp_path, signum, request):
    config = small(epochs=2, checkpoint_every=0)
    if signal.getsignal(signum) is signal.SIG_IGN:  # the suite run under nohup:
        # StopSignals would leave the ignored signal ignored, as it should
        signal.signal(signum, signal.SIG_DFL)
        request.addfinalizer(lambda: signal.signal(signum, signal.SIG_IGN))
    previous = signal.getsignal(signum)

    def on_epoch_end(epoch, state, metrics):  # the signal at the first epoch's end
        os.kill(os.getpid(), signum)
        return {}

    checkpointer = Checkpointer(tmp_path)
    with pytest.raises(train.TrainingInterrupted) as e, cli.StopSignals() as stop:
        train.fit(config, random_data(24), checkpointer=checkpointer, stop=stop,
                  on_epoch_end=on_epoch_end, **QUIET)  # fmt: skip
    assert e.value.signum == signum
    assert f"by {signal.Signals(signum).name}" in str(e.value)
    assert signal.getsignal(signum) is previous
    assert checkpointer.latest_step() == 6
    resumed, _ = train.fit(config, random_data(24), checkpointer=checkpointer,
                           resume=True, **QUIET)  # fmt: skip
    checkpointer.close()
    whole, _ = train.fit(config, random_data(24), **QUIET)
    assert_trees_equal(resumed.params, whole.params)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_cli_exits_128_plus_the_signal_without_a_traceback(
    tmp_path, capsys, monkeypatch, signum
):
    def interrupted(*args, **kwargs):
        raise train.TrainingInterrupted(signum, "Training interrupted at step 3")

    monkeypatch.setattr(cli.train, "fit", interrupted)
    code = cli.main(["--dataset", "digits", "--out-dir", str(tmp_path)])
    assert code == 128 + signum
    assert capsys.readouterr().err.strip() == (
        "jaxblitz-train: Training interrupted at step 3"
    )


@pytest.mark.parametrize("where", ["_run", "_write_outputs"])
def test_ctrl_c_during_start_up_or_after_training_exits_without_a_traceback(
    tmp_path, capsys, monkeypatch, where
):
    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, where, ctrl_c)
    code = cli.main(["--dataset", "digits", "--epochs", "1", "--out-dir",
                     str(tmp_path), "--no-progress"])  # fmt: skip
    assert code == 130
    assert capsys.readouterr().err.strip() == "jaxblitz-train: interrupted"
    assert not (tmp_path / DirectoryLock.NAME).exists()  # the lock is released


# -- 8. the functional API's bad input ----------------------------------------------


def test_lenet_on_a_batch_of_zero_images_gives_zero_logits():
    params = models.init_lenet(jax.random.key(0), 3)
    empty = jnp.zeros((0, 3, 32, 32))
    assert models.lenet(params, empty).shape == (0, 10)
    assert models.lenet(params, empty, impl="xla").shape == (0, 10)
    assert models.lenet(params, empty, chunk=kernels.eval_chunk(0)).shape == (0, 10)


@pytest.mark.parametrize(
    "init, args, expected",
    [
        (models.init_linear, (-1, 3), "in_features must be >= 1, got -1"),
        (models.init_linear, (3, -2), "out_features must be >= 0, got -2"),
        (models.init_conv2d, (3, 6, 0), "kernel_size must be >= 1, got 0"),
        (models.init_conv2d, (0, 6, 5), "in_channels must be >= 1, got 0"),
    ],
)
def test_layer_initialisers_refuse_sizes_they_cannot_use(init, args, expected):
    with pytest.raises(ValueError, match=expected):
        init(jax.random.key(0), *args)
    with pytest.raises(TypeError, match="must be an int, got float 3.7"):
        init(jax.random.key(0), 3.7, *args[1:])


@pytest.mark.parametrize("label", [10, -1, 2**20])
def test_cross_entropy_refuses_labels_out_of_range_and_gives_nan_under_jit(label):
    logits = jnp.zeros((2, 10))
    labels = jnp.array([label, 1])
    with pytest.raises(ValueError, match=f"label {label} is out of range"):
        models.cross_entropy(logits, labels)
    assert np.isnan(jax.jit(models.cross_entropy)(logits, labels))
    # Masked out (padding), the label is not looked at, in or out of jit.
    mask = jnp.array([0.0, 1.0])
    expected = float(jnp.log(10.0))
    assert float(models.cross_entropy(logits, labels, mask)) == pytest.approx(expected)
    jitted = jax.jit(models.cross_entropy)(logits, labels, mask)
    assert float(jitted) == pytest.approx(expected)


# -- 9. file permissions follow the umask --------------------------------------------


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_honour_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        path = atomic_write(
            tmp_path / f"{uuid.uuid4().hex}.bin", lambda f: f.write(b"1")
        )
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_the_cli_writes_its_outputs_with_the_umask(tmp_path):
    out = tmp_path / "run"
    old = os.umask(0o022)
    try:
        code = cli.main(["--dataset", "digits", "--epochs", "1", "--out-dir",
                         str(out), "--no-progress", "--log-every", "1000"])  # fmt: skip
        assert code == 0
    finally:
        os.umask(old)
    for name in ("metrics.json", "loss.png", "weights.safetensors", "samples.png"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name
    assert not list(out.glob(".*.tmp"))


def test_safetensors_keep_0d_arrays_and_read_bfloat16(tmp_path):
    import ml_dtypes

    from jaxblitz.integrity import read_safetensors, write_safetensors

    arrays = {
        "scalar": np.float32(2.5).reshape(()),
        "bf16": np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16),
    }
    path = write_safetensors(arrays, tmp_path / "a.safetensors", {})
    back, _ = read_safetensors(path)
    assert back["scalar"].shape == () and float(back["scalar"]) == 2.5
    assert back["bf16"].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(back["bf16"], arrays["bf16"])
