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

A run's folder (``--out-dir``) is checked before any data is read:
:func:`writable_dir` makes it and writes into it, :func:`check_utf8` and
:func:`probe_checkpoints` ask whether the checkpoints' writer takes its path,
:func:`check_outputs` refuses to write over another run's :data:`OUTPUTS` (or
through a link), and :func:`move_aside` puts an earlier run's outputs into
``earlier-<time>/`` for ``--fresh``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import jax
import numpy as np

from jaxblitz.files import DirectoryLock, LinkRefusedError, os_error_text, refuse_links
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


# -- the run's folder (--out-dir): where its outputs go, checked before any data ------
# What a run leaves in its folder; --fresh moves an earlier run's copies aside.
OUTPUTS = (
    "checkpoints",
    "metrics.json",
    "loss.png",
    "per_class.png",
    "samples.png",
    "weights.safetensors",
)


def writable_dir(text: str | None, default: str) -> Path:
    """``--out-dir`` made and checked writable, or a ValueError saying why not."""
    if text is not None and not text.strip():
        raise ValueError(f"--out-dir is empty; give a folder (default: {default}).")
    out = Path(text or default)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out) as f:
            f.write(b"jaxblitz")
            f.flush()
            os.fsync(f.fileno())
    except FileExistsError:
        raise ValueError(f"--out-dir {out} is a file, not a folder.") from None
    except NotADirectoryError:
        raise ValueError(
            f"--out-dir {out}: part of that path is a file, not a folder."
        ) from None
    except OSError as e:
        raise ValueError(
            f"--out-dir {out} cannot be written: {os_error_text(e)}."
        ) from None
    return out


def check_utf8(text: str) -> None:
    """A ValueError if the --out-dir path (made absolute) is not UTF-8: tensorstore,
    which writes the checkpoints, takes no other."""
    try:
        path = os.path.abspath(text)
    except OSError:  # the working folder is gone: writable_dir says so
        return
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise ValueError(
            f"--out-dir {shown} is not valid UTF-8, and the checkpoints' writer "
            "(tensorstore) takes UTF-8 paths only. Give an --out-dir whose path "
            "is UTF-8."
        ) from None


def check_outputs(out: Path, new_run: bool) -> None:
    """A ValueError if a path the run writes in ``out`` is of the wrong kind (found
    only when training ends, it would cost the run), or if a new run would write
    over an earlier run's outputs that no checkpoint refuses it for, or if one
    of them is a link (writing through it would change a file outside the run)."""
    for name in (*OUTPUTS, DirectoryLock.NAME):
        try:
            refuse_links(out / name)
        except LinkRefusedError as e:
            raise ValueError(
                f"--out-dir {out}: {e.strerror} ({e.filename}). Move it out of the "
                "way or give another --out-dir (--fresh moves it aside)."
            ) from None
    for name in OUTPUTS:
        path = out / name
        folder = name == "checkpoints"
        if path.exists() and path.is_dir() != folder:
            raise ValueError(
                f"--out-dir {out} holds {path}, a {'file' if folder else 'folder'} "
                f"where this run writes its {'checkpoints folder' if folder else name}"
                ". Move it out of the way, give another --out-dir, or add --fresh "
                "to move the earlier run's files aside."
            )
    found = [n for n in OUTPUTS if n != "checkpoints" and (out / n).exists()]
    checkpoints, steps = out / "checkpoints", True
    with contextlib.suppress(OSError):  # unreadable: left to the checkpointer
        steps = checkpoints.is_dir() and any(
            p.name.isdigit() for p in checkpoints.iterdir()
        )
    if new_run and found and not steps:  # with steps, fit names --resume too
        raise ValueError(
            f"--out-dir {out} holds an earlier run's {', '.join(found)} and no "
            "checkpoint to resume. Add --fresh to move them into "
            f"{out}/earlier-<time>/ (nothing is deleted), or give another --out-dir."
        )


def probe_checkpoints(out: Path, primary: bool = True) -> None:
    """A ValueError if orbax and tensorstore cannot save and restore a checkpoint
    under ``out``: they refuse some paths the file system takes (a backslash, a
    ``[...]`` pair, a folder named ``gs:``), otherwise found at the first
    checkpoint. The probe folder is as long a name as ``checkpoints``, its step
    longer than a run's; it is removed. Every process of a multi-process run
    calls it (orbax saves together): they share the probe's name."""
    from jaxblitz.checkpoints import Checkpointer  # orbax, only once a run starts

    many = jax.process_count() > 1
    token = (
        hashlib.sha256(str(out.absolute()).encode()).hexdigest()[:4]
        if many
        else secrets.token_hex(2)
    )
    probe = out / f".probe-{token}"
    assert len(probe.name) == len("checkpoints")  # as long a path as theirs
    like = {"probe": np.zeros(1, np.float32)}
    try:
        checkpointer = Checkpointer(probe)
        try:
            checkpointer.save(10**9, like, {})
            checkpointer.restore(like)
        finally:
            checkpointer.close()
    except Exception as e:
        cause = e.__cause__ or e
        reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        reason = reason.split(" [tensorstore_spec")[0]  # its JSON spec: noise
        raise ValueError(
            f"--out-dir {out} cannot hold checkpoints: orbax and tensorstore, which "
            f"write them, fail on its path ({type(cause).__name__}: {reason[:200]})."
            " Give an --out-dir with a plainer path: no backslash, no [...], no "
            "folder named like a URL scheme (gs:), not too long."
        ) from None
    finally:
        if many:  # every process is done with it before it goes
            from jax.experimental import multihost_utils

            multihost_utils.sync_global_devices("jaxblitz-train: probe done")
        if primary:
            shutil.rmtree(probe, ignore_errors=True)


def move_aside(out: Path) -> Path | None:
    """Move an earlier run's outputs into ``out/earlier-<time>/``; nothing deleted.

    A link in an output's place (dangling too) is moved as the link itself: a
    rename never follows it, and the file it leads to is untouched.
    """
    found = [out / name for name in OUTPUTS if os.path.lexists(out / name)]
    if not found:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = out / f"earlier-{stamp}"
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = out / f"earlier-{stamp}-{n}"
    aside.mkdir()
    for path in found:
        os.replace(path, aside / path.name)
    return aside
