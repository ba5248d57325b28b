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


# -- an --out-dir the checkpoints cannot live under: refused before any data --------


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


def test_the_digits_data_digest_is_the_same_on_every_load():
    a, b = data.load("digits", "train"), data.load("digits", "train")
    assert runs.data_digest(a) == runs.data_digest(b)
    assert runs.data_digest(a) != runs.data_digest(data.load("digits", "test"))
