"""What a training run is: the settings that define its numbers, and what may
change when it resumes.

Every checkpoint :func:`jaxblitz.train.fit` writes carries its run's record
(:func:`new_run`): an id, the identity (the settings and data that decide the
numbers) and the changes made on resume, each with its step. A resume compares
the checkpoint's record with the settings it is given *before* reading any array
(:func:`resumed_run`), so another run's checkpoint is named as such, never
reported as a damaged file.
"""

from __future__ import annotations

import uuid

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


def run_identity(config, dataset) -> dict:
    """What defines a run's numbers: the identity settings and the data's shape."""
    identity = {k: _plain(getattr(config, k)) for k in IDENTITY}
    identity["data"] = {
        "examples": len(dataset.labels),
        "image_shape": list(dataset.images.shape[1:]),
        "classes": len(dataset.class_names),
    }
    return identity


def _plain(value):  # as JSON gives it back: tuples are lists
    return list(value) if isinstance(value, tuple) else value


def resumed_run(
    meta: dict, config, identity: dict, step: int, where, devices: int = 1
) -> dict:
    """The checkpoint's run record, with this resume's setting changes appended.

    Raises RunMismatchError naming each setting that may not change.
    """
    shapes = {"config": dict, "epoch": int, "position": int, "run": dict | None}
    wrong = [k for k, kind in shapes.items() if not isinstance(meta.get(k), kind)]
    run = meta.get("run")
    if isinstance(run, dict):  # its parts are read below, before any checksum
        if not isinstance(run.get("identity", {}), dict):
            wrong.append("run.identity")
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
        if k in saved and saved[k] != identity[k]
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
    changes = list(run.get("changes", []))
    now = {k: getattr(config, k) for k in _CHANGEABLE} | {"devices": devices}
    before = saved_config | {"devices": meta.get("devices", 1)}
    for k, value in now.items():  # more devices: equal up to float rounding
        if k in before and before[k] != value:
            changes.append({"step": step, "setting": k, "from": before[k], "to": value})
    return {**run, "changes": changes}


def new_run(config, dataset) -> dict:
    """A fresh run's record: a new id, its identity, no changes yet."""
    return {
        "id": uuid.uuid4().hex[:12],
        "identity": run_identity(config, dataset),
        "changes": [],
    }
