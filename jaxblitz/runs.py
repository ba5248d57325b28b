"""What a training run is: the settings that define its numbers, and what may
change when it resumes.

Every checkpoint :func:`jaxblitz.train.fit` writes carries its run's record
(:func:`new_run`): an id, the identity (the settings and data that decide the
numbers) and the changes made on resume, each with its step. A resume compares
the checkpoint's record with the settings it is given *before* reading any array
(:func:`resumed_run`), so another run's checkpoint is named as such, never
reported as a damaged file.

The data are part of the identity twice over: their size and shape, and a digest
of their contents (:func:`data_digest`), so the same files with other pixels in
them are not taken for the run's data.
"""

from __future__ import annotations

import hashlib
import uuid

import numpy as np

from jaxblitz.integrity import CorruptFileError


class RunMismatchError(ValueError):
    """Checkpoints of another run, or of this run under other settings.

    Not corruption: the files are good, so the message never says to delete them.
    """


# What a run computes: a checkpoint resumes only under the same values. The other
# settings say how to run it (epochs, loop, logging, checkpoint spacing, eval
# batch, the number of devices); they may change on resume, and each change is
# recorded with its step.
IDENTITY = (
    "dataset",
    "batch_size",
    "lr",
    "momentum",
    "seed",
    "widths",
    "optimizer",
    "drop_last",
)
_CHANGEABLE = ("epochs", "loop", "log_every", "checkpoint_every", "eval_batch_size")
_CHANGE_KEYS = {"step", "setting", "from", "to"}  # one entry of a run's changes


def run_identity(config, dataset, test_set=None) -> dict:
    """What defines a run's numbers: the identity settings, the data's shape and
    the digests of the training data and (if given) the test data."""
    identity = {k: _plain(getattr(config, k)) for k in IDENTITY}
    identity["data"] = {
        "examples": len(dataset.labels),
        "image_shape": list(dataset.images.shape[1:]),
        "classes": len(dataset.class_names),
    }
    identity[DIGESTS] = {"train": data_digest(dataset)}
    if test_set is not None:
        identity[DIGESTS]["test"] = data_digest(test_set)
    return identity


DIGESTS = "data_digests"  # identity key: {"train": ..., "test": ...}


def data_digest(dataset) -> str:
    """SHA-256 of a dataset's images and labels (dtype, shape and bytes).

    Labels are hashed as int64 (their dtype changes no number); the images as
    they are, read in place when contiguous. SHA-256, not BLAKE2: CPUs with SHA
    instructions run it faster.
    """
    h = hashlib.sha256()
    for a in (np.asarray(dataset.images), np.asarray(dataset.labels, np.int64)):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}|".encode())
        h.update(a.reshape(-1).view(np.uint8).data)
    return f"sha256:{h.hexdigest()}"


def _plain(value):  # as JSON gives it back: tuples are lists
    return list(value) if isinstance(value, tuple) else value


def resumed_run(
    meta: dict,
    config,
    identity: dict,
    step: int,
    where,
    devices: int = 1,
    accept_data_change: bool = False,
) -> dict:
    """The checkpoint's run record, with this resume's setting changes appended.

    Raises RunMismatchError naming each setting that may not change, and naming
    data of the same size and shape with other contents unless
    ``accept_data_change`` (then the new digests are the run's, and the change
    is recorded with its step). A record written before runs had data digests
    takes this resume's.
    """
    shapes = {"config": dict, "epoch": int, "position": int, "run": dict | None}
    wrong = [k for k, kind in shapes.items() if not isinstance(meta.get(k), kind)]
    run = meta.get("run")
    if isinstance(run, dict):  # its parts are read below, before any checksum
        if not isinstance(run.get("identity", {}), dict):
            wrong.append("run.identity")
        elif not isinstance(run.get("identity", {}).get(DIGESTS, {}), dict):
            wrong.append(f"run.identity.{DIGESTS}")
        changes = run.get("changes", [])
        if not isinstance(changes, list) or not all(
            isinstance(c, dict) and c.keys() >= _CHANGE_KEYS for c in changes
        ):
            wrong.append("run.changes")
    if wrong:  # read unverified: a damaged file must not crash here
        raise CorruptFileError(
            f"Checkpoint step {step} in {where} has damaged metadata "
            f"({', '.join(wrong)} missing or mistyped). Move {where}/{step} out of "
            f"{where} to resume from an earlier checkpoint, or start afresh in a new "
            "directory."
        )
    saved_config = meta["config"]
    if not isinstance(run, dict):  # written before runs had an identity
        run = {
            "id": "unnamed",
            "identity": {k: saved_config[k] for k in IDENTITY if k in saved_config},
            "changes": [],
        }
    saved = run.get("identity", {})
    diff = [
        f"{k}: checkpoint {saved[k]!r}, now {identity[k]!r}"
        for k in identity
        if k != DIGESTS and k in saved and saved[k] != identity[k]
    ]
    if diff:
        raise RunMismatchError(
            f"Cannot resume from {where} (step {step}): its run used other "
            f"settings: {'; '.join(diff)}. Resume with the checkpoint's settings, "
            "train into a new --out-dir, or start a new run there with --fresh, "
            "which moves the earlier run aside (nothing is deleted)."
        )
    begun = meta.get("epoch", 0) + (1 if meta.get("position", 0) else 0)
    if config.epochs < begun:
        raise RunMismatchError(
            f"Cannot resume from {where} (step {step}) with epochs={config.epochs}: "
            f"the run has already trained into epoch {begun}. Give at least "
            f"--epochs {begun} (more extends the run)."
        )
    digests = saved.get(DIGESTS, {})
    changed = {
        part: (digests[part], digest)
        for part, digest in identity.get(DIGESTS, {}).items()
        if part in digests and digests[part] != digest
    }
    if changed and not accept_data_change:
        which = " and ".join(_DATA_NAMES[part] for part in changed)
        raise RunMismatchError(
            f"Cannot resume from {where} (step {step}): the {which} differ from the "
            "run's: same size and shape, other contents ("
            + "; ".join(
                f"{part}: checkpoint {a[:19]}..., now {b[:19]}..."
                for part, (a, b) in changed.items()
            )
            + "). Resume with the data the run was started with; or go on with "
            "these data with --accept-data-change (fit(..., accept_data_change="
            "True)), recorded in the run's changes; or train into a new --out-dir, "
            "or start a new run there with --fresh, which moves the earlier run "
            "aside (nothing is deleted)."
        )
    changes = list(run.get("changes", []))
    for part, (a, b) in changed.items():
        changes.append({"step": step, "setting": f"{part}_data", "from": a, "to": b})
    now = {k: getattr(config, k) for k in _CHANGEABLE} | {"devices": devices}
    before = saved_config | {"devices": meta.get("devices", 1)}
    for k, value in now.items():  # more devices: equal up to float rounding
        if k in before and before[k] != value:
            changes.append({"step": step, "setting": k, "from": before[k], "to": value})
    if DIGESTS in identity:  # from now on the run's data are these
        saved = {**saved, DIGESTS: {**digests, **identity[DIGESTS]}}
    return {**run, "identity": saved, "changes": changes}


_DATA_NAMES = {"train": "training data", "test": "test data"}


def new_run(config, dataset, test_set=None) -> dict:
    """A fresh run's record: a new id, its identity, no changes yet."""
    return {
        "id": uuid.uuid4().hex[:12],
        "identity": run_identity(config, dataset, test_set),
        "changes": [],
    }
