"""What a run needs of its data and its paths, said before training: resume
refuses data of other contents, an --out-dir the checkpoints cannot live under
is refused up front, and a bad image or a damaged compilation cache is named.
"""

import dataclasses
import os

import jax
import numpy as np
import pytest

from jaxblitz import cli, data, runs, train
from jaxblitz.checkpoints import Checkpointer
from tests.test_train import random_data

QUIET = {"log": lambda line: None}


def small(**changes) -> train.Config:
    base = train.Config(dataset="x", epochs=1, checkpoint_every=3, loop="step")
    return dataclasses.replace(base, **changes)


def fit(directory, config, dataset, **kwargs):
    checkpointer = Checkpointer(directory)
    try:
        return train.fit(config, dataset, checkpointer=checkpointer, **QUIET,
                         **kwargs)  # fmt: skip
    finally:
        checkpointer.close()


def inverted(dataset):
    """The same files with their pixels inverted: same size, shape and labels."""
    return dataset._replace(images=-dataset.images)


# -- the data's contents are part of the run ----------------------------------------


def test_resume_on_training_data_of_other_contents_is_refused_naming_them(tmp_path):
    fit(tmp_path, small(), random_data(24))
    with pytest.raises(runs.RunMismatchError) as e:
        fit(tmp_path, small(epochs=2), inverted(random_data(24)), resume=True)
    message = str(e.value)
    assert "the training data differ from the run's" in message, message
    assert "same size and shape, other contents" in message
    assert "--accept-data-change" in message and "--fresh" in message
    assert "test data" not in message and "corrupt" not in message


def test_resume_on_test_data_of_other_contents_is_refused_too(tmp_path):
    fit(tmp_path, small(), random_data(24), test_set=random_data(8, seed=1))
    with pytest.raises(runs.RunMismatchError, match="the test data differ"):
        fit(tmp_path, small(epochs=2), random_data(24), resume=True,
            test_set=random_data(8, seed=2))  # fmt: skip
    state, _ = fit(tmp_path, small(epochs=2), random_data(24), resume=True,
                   test_set=random_data(8, seed=1))  # fmt: skip
    assert int(state.step) == 12


def test_an_accepted_data_change_is_recorded_with_its_step_and_becomes_the_runs(
    tmp_path,
):
    old, new = random_data(24), inverted(random_data(24))
    fit(tmp_path, small(), old)
    lines = []
    checkpointer = Checkpointer(tmp_path)
    train.fit(small(epochs=2), new, checkpointer=checkpointer, resume=True,
              accept_data_change=True, log=lines.append)  # fmt: skip
    record = checkpointer.read_meta()["run"]
    checkpointer.close()
    change = {"step": 6, "setting": "train_data", "from": runs.data_digest(old),
              "to": runs.data_digest(new)}  # fmt: skip
    assert change in record["changes"]
    assert record["identity"][runs.DIGESTS]["train"] == runs.data_digest(new)
    assert any(line.startswith("Resuming with train_data changed from sha256:")
               for line in lines), lines  # fmt: skip
    # The run's data are now the new ones: they resume without the flag.
    state, _ = fit(tmp_path, small(epochs=3), new, resume=True)
    assert int(state.step) == 18


def test_a_checkpoint_written_before_data_digests_still_resumes(tmp_path, monkeypatch):
    def without_digests(config, dataset, test_set=None):  # what older runs wrote
        identity = dict(identity_of(config, dataset, test_set))
        identity.pop(runs.DIGESTS)
        return identity

    identity_of = runs.run_identity
    monkeypatch.setattr(runs, "run_identity", without_digests)
    fit(tmp_path, small(), random_data(24))
    monkeypatch.setattr(runs, "run_identity", identity_of)
    checkpointer = Checkpointer(tmp_path)
    assert runs.DIGESTS not in checkpointer.read_meta()["run"]["identity"]
    checkpointer.close()
    state, _ = fit(tmp_path, small(epochs=2), random_data(24), resume=True)
    assert int(state.step) == 12
    checkpointer = Checkpointer(tmp_path)  # from now on its data are checked
    digests = checkpointer.read_meta()["run"]["identity"][runs.DIGESTS]
    checkpointer.close()
    assert digests == {"train": runs.data_digest(random_data(24))}


def test_nnx_fit_refuses_other_data_on_resume_as_fit_does(tmp_path):
    from jaxblitz import nnx

    checkpointer = Checkpointer(tmp_path)
    nnx.fit(small(), random_data(24), checkpointer=checkpointer, **QUIET)
    with pytest.raises(runs.RunMismatchError, match="the training data differ"):
        nnx.fit(small(epochs=2), inverted(random_data(24)),
                checkpointer=checkpointer, resume=True, **QUIET)  # fmt: skip
    checkpointer.close()


def test_the_data_digest_reads_contents_not_the_label_dtype():
    a = random_data(24)
    assert runs.data_digest(a) == runs.data_digest(
        a._replace(labels=a.labels.astype(np.int64))
    )
    assert runs.data_digest(a) != runs.data_digest(inverted(a))
    one_label = a.labels.copy()
    one_label[5] = (one_label[5] + 1) % 10
    assert runs.data_digest(a) != runs.data_digest(a._replace(labels=one_label))
    assert runs.data_digest(a).startswith("sha256:") and len(runs.data_digest(a)) == 71


class _Stop(Exception):
    pass


def test_the_cli_digests_its_test_set_and_passes_accept_data_change(
    tmp_path, monkeypatch
):
    seen = {}

    def fake_fit(config, dataset, **kwargs):
        seen.update(kwargs, train_set=dataset)
        raise _Stop

    monkeypatch.setattr(cli.train, "fit", fake_fit)
    (tmp_path / "checkpoints").mkdir()
    with pytest.raises(_Stop):
        cli.main(["--dataset", "digits", "--out-dir", str(tmp_path), "--resume",
                  "--accept-data-change", "--no-progress"])  # fmt: skip
    assert seen["accept_data_change"] is True
    assert len(seen["test_set"].labels) == 359  # the digits' test split
    assert len(seen["train_set"].labels) == 1438


def test_accept_data_change_without_resume_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--dataset", "digits", "--accept-data-change"])
    assert e.value.code == 2
    assert "--accept-data-change applies to --resume only" in capsys.readouterr().err


# -- an --out-dir the checkpoints cannot live under: refused before any data --------


def test_an_out_dir_that_is_not_utf8_is_refused_before_it_is_made(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(cli.data, "load", None)  # never reached
    out = os.path.join(os.fsdecode(bytes(tmp_path)), os.fsdecode(b"run\xff"))
    with pytest.raises(SystemExit) as e:
        cli.main(["--dataset", "digits", "--out-dir", out])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err
    assert "run\\xff is not valid UTF-8" in err, err
    assert not os.path.lexists(out)


@pytest.mark.parametrize("name", ["a[b]", "back\\slash"])
def test_an_out_dir_tensorstore_cannot_hold_checkpoints_under_is_refused_up_front(
    tmp_path, capsys, monkeypatch, name
):
    def load(*args):
        raise AssertionError("data read before the out-dir was checked")

    monkeypatch.setattr(cli.data, "load", load)
    out = tmp_path / name
    code = cli.main(["--dataset", "digits", "--out-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"--out-dir {out} cannot hold checkpoints" in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == []  # the probe is gone


# -- clear errors --------------------------------------------------------------------


def test_a_non_finite_image_is_named_by_its_index_and_no_checkpoint_is_claimed():
    bad = random_data(24)
    bad.images[13, 0, 4, 7] = np.nan
    with pytest.raises(FloatingPointError) as e:
        train.fit(small(batch_size=4), bad, **QUIET)
    message = str(e.value)
    assert "Loss became nan at step" in message
    assert "training image(s) 13 (index in the dataset)" in message, message
    assert "No checkpoint is written (fit was given no checkpointer)" in message
    assert "last good checkpoint" not in message


def test_a_non_finite_image_before_the_first_checkpoint_says_none_was_written(
    tmp_path,
):
    bad = random_data(24)
    bad.images[[2, 20]] = np.inf
    with pytest.raises(FloatingPointError) as e:
        fit(tmp_path, small(batch_size=24, checkpoint_every=0), bad)
    message = str(e.value)
    assert "training image(s) 2, 20 (index" in message, message
    assert "No checkpoint was written before it." in message


def test_the_compilation_cache_entries_a_process_reads_are_known():
    folder = jax.config.jax_compilation_cache_dir  # the session's (conftest)
    assert folder

    @jax.jit
    def read_back(x):  # a program of its own: compiled, written, then read
        return x * 3.25 + 0.5

    read_back(np.ones(7, np.float32)).block_until_ready()
    jax.clear_caches()  # forget it in memory: the next call reads the disk cache
    with cli.CacheReads() as reads:
        read_back(np.ones(7, np.float32)).block_until_ready()
    [key] = [k for k in reads.keys if k.startswith("jit_read_back-")]
    assert os.path.isfile(os.path.join(folder, f"{key}-cache"))


@pytest.mark.parametrize(
    "error",
    [
        ValueError("safe_zip() argument 1 has length 3 but argument 0 has length 11"),
        RuntimeError(
            "INVALID_ARGUMENT: E0102: RuntimeProgramInputMismatch:\n"
            "Executable(jit_run_steps) expected parameter 1 of size 600"
        ),
    ],  # fmt: skip
    ids=["safe_zip", "RuntimeProgramInputMismatch"],
)
def test_a_damaged_cache_entry_is_named_with_its_folder_and_moved_aside(
    tmp_path, error
):
    for key in ("jit_f-aa", "jit_g-bb", "jit_h-cc"):
        (tmp_path / f"{key}-cache").write_bytes(key.encode())
    reads = cli.CacheReads()
    reads.keys = ["jit_f-aa", "jit_g-bb", "jit_f-aa"]  # what this run read
    message = reads.damage(error, str(tmp_path))
    [aside] = tmp_path.glob("damaged-*")
    assert sorted(p.name for p in aside.iterdir()) == ["jit_f-aa-cache",
                                                       "jit_g-bb-cache"]  # fmt: skip
    assert (aside / "jit_f-aa-cache").read_bytes() == b"jit_f-aa"
    assert (tmp_path / "jit_h-cc-cache").exists()  # not read: kept in place
    assert f"compilation cache {tmp_path} does not fit its inputs" in message
    assert f"2 file(s) this run read from it are moved to {aside}/" in message
    assert "JAXBLITZ_XLA_CACHE=''" in message
    assert reads.damage(ValueError("lr must be > 0"), str(tmp_path)) is None


def test_the_digits_data_digest_is_the_same_on_every_load():
    a, b = data.load("digits", "train"), data.load("digits", "train")
    assert runs.data_digest(a) == runs.data_digest(b)
    assert runs.data_digest(a) != runs.data_digest(data.load("digits", "test"))
