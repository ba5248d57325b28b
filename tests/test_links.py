"""Links: jaxblitz never writes through a link into a file of the user's.

Files jaxblitz writes into its own folders (a run's lock, metrics, pictures,
weights; the data cache) refuse a symbolic link, a hard link or a special file in
their place, naming it; ``compat.save`` writes where ``torch.save`` writes (through
the link, into the shared file or the device), atomically where it can. The same
run writes the same bytes.
"""

import errno
import importlib.util
import io
import json
import os
import shutil
import stat
import tempfile
import warnings

import numpy as np
import pytest

import jaxblitz.compat as compat
from jaxblitz import cli, plots, runs
from jaxblitz.checkpoints import save_weights
from jaxblitz.data import fetch
from jaxblitz.files import (
    DirectoryLock,
    LinkRefusedError,
    atomic_write,
    refuse_links,
    write_json,
)

HAVE_TORCH = importlib.util.find_spec("torch") is not None
PRECIOUS = b"PRECIOUS\n"


def _params():
    return {"fc": {"weight": np.arange(6, dtype=np.float32).reshape(2, 3),
                   "bias": np.ones(2, np.float32)}}  # fmt: skip


# What jaxblitz writes into a run's folder, each by its own writer.
WRITERS = {
    "metrics.json": lambda path: write_json({"a": 1}, path),
    "weights.safetensors": lambda path: save_weights(_params(), path),
    "loss.png": lambda path: plots.save_loss_curve([[1.0, 0.5]], path),
    "samples.png": lambda path: plots.save_image_grid(
        np.zeros((2, 1, 4, 4)), [0, 1], ["a", "b"], path
    ),
    "cache.npy": lambda path: atomic_write(path, lambda f: np.save(f, np.ones(2))),
}


def _plant(kind, path, outside):
    """A link of ``kind`` at ``path`` to the file ``outside`` (made if needed)."""
    if kind == "symlink":
        outside.write_bytes(PRECIOUS)
        os.symlink(os.path.relpath(outside, path.parent), path)
    elif kind == "dangling symlink":
        os.symlink(os.path.relpath(outside, path.parent), path)
    else:
        outside.write_bytes(PRECIOUS)
        os.link(outside, path)


def _precious_untouched(kind, outside):
    if kind == "dangling symlink":
        return not os.path.lexists(outside)  # nothing made outside the run
    return outside.read_bytes() == PRECIOUS


# -- files of jaxblitz's own: links refused ----------------------------------------


@pytest.mark.parametrize("kind", ["symlink", "dangling symlink", "hard link"])
def test_the_run_lock_refuses_a_planted_link_and_writes_nothing_through_it(
    tmp_path, kind
):
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "precious.txt"
    _plant(kind, run / DirectoryLock.NAME, outside)
    with pytest.raises(LinkRefusedError) as refused:
        DirectoryLock(run)
    assert str(run / DirectoryLock.NAME) in str(refused.value)
    assert _precious_untouched(kind, outside)


def test_the_cli_refuses_a_symlinked_lock_before_reading_any_data(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "precious.txt"
    _plant("symlink", run / DirectoryLock.NAME, outside)
    with pytest.raises(SystemExit) as stopped:  # the up-front checks: argparse's
        cli.main(["--dataset", "digits", "--epochs", "1", "--out-dir", str(run),
                  "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert "symbolic link" in err and str(run / DirectoryLock.NAME) in err
    assert outside.read_bytes() == PRECIOUS
    assert sorted(p.name for p in run.iterdir()) == [DirectoryLock.NAME]


@pytest.mark.parametrize("name", ["checkpoints", "metrics.json", "weights.safetensors"])
def test_the_cli_refuses_a_linked_output_before_reading_any_data(
    tmp_path, capsys, name
):
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    (run / name).symlink_to(elsewhere / name)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--dataset", "digits", "--epochs", "1", "--out-dir", str(run),
                  "--no-progress", "--resume"])  # fmt: skip
    assert stopped.value.code == 2
    assert "symbolic link" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_a_checkpointer_refuses_a_linked_folder(tmp_path):
    from jaxblitz.checkpoints import Checkpointer

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "checkpoints").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LinkRefusedError):
        Checkpointer(tmp_path / "checkpoints")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_lock_taken_and_released_leaves_one_regular_file_then_none(tmp_path):
    with DirectoryLock(tmp_path) as lock:
        st = os.lstat(lock.path)
        assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert not os.path.lexists(tmp_path / DirectoryLock.NAME)


@pytest.mark.parametrize("kind", ["symlink", "dangling symlink", "hard link"])
@pytest.mark.parametrize("name", list(WRITERS))
def test_every_output_refuses_a_planted_link_naming_it(tmp_path, name, kind):
    path = tmp_path / name
    outside = tmp_path / "elsewhere" / "precious"
    outside.parent.mkdir()
    _plant(kind, path, outside)
    with pytest.raises(LinkRefusedError) as refused:
        WRITERS[name](path)
    assert str(refused.value).startswith(f"{path}: a ")
    assert refused.value.filename == str(path)
    assert _precious_untouched(kind, outside)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["elsewhere", name])


def test_an_output_refuses_a_device_in_its_place(tmp_path):
    fifo = tmp_path / "metrics.json"
    os.mkfifo(fifo)
    with pytest.raises(LinkRefusedError, match="FIFO"):
        write_json({"a": 1}, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_refuse_links_passes_what_jaxblitz_may_write_and_names_what_it_may_not(
    tmp_path,
):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    for ok in ["missing", "file", "folder", "missing/below"]:
        assert refuse_links(tmp_path / ok) == tmp_path / ok
    os.symlink("folder", tmp_path / "linked-folder")
    os.link(tmp_path / "file", tmp_path / "second-name")
    os.mkfifo(tmp_path / "fifo")
    refused = {}
    for bad in ["linked-folder", "second-name", "fifo"]:
        with pytest.raises(LinkRefusedError) as e:
            refuse_links(tmp_path / bad)
        refused[bad] = (e.value.errno, e.value.filename)
    assert refused == {
        "linked-folder": (errno.ELOOP, str(tmp_path / "linked-folder")),
        "second-name": (errno.EMLINK, str(tmp_path / "second-name")),
        "fifo": (errno.EEXIST, str(tmp_path / "fifo")),
    }


def test_the_data_cache_never_writes_through_a_link(tmp_path):
    archive = tmp_path / "cifar-10-python.tar.gz"
    archive.write_bytes(b"archive")
    splits = {"test": (np.zeros((1, 3, 32, 32), np.uint8), np.zeros(1, np.int32))}
    images, labels, sums = fetch._cache_files(archive, "test")
    images.parent.mkdir()
    outside = tmp_path / "precious"
    _plant("symlink", images, outside)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fetch.write_cache(archive, splits)
    assert any("symbolic link" in str(w.message) for w in caught)
    assert outside.read_bytes() == PRECIOUS
    assert fetch.read_cache(archive, "test") is None  # no cache, no harm


def test_a_download_refuses_a_link_before_any_mirror_is_tried(tmp_path, monkeypatch):
    tried = []
    monkeypatch.setattr(fetch, "_fetch", lambda url, *a: tried.append(url) or 1 / 0)
    outside = tmp_path / "precious"
    _plant("dangling symlink", tmp_path / "cifar-10-python.tar.gz", outside)
    with pytest.raises(LinkRefusedError):
        fetch.download("cifar10", "cifar-10-python.tar.gz", tmp_path)
    assert tried == [] and not os.path.lexists(outside)


def test_fresh_moves_a_planted_link_aside_as_a_link(tmp_path):
    outside = tmp_path / "precious"
    run = tmp_path / "run"
    run.mkdir()
    _plant("dangling symlink", run / "metrics.json", outside)
    aside = runs.move_aside(run)
    assert aside is not None and os.path.islink(aside / "metrics.json")
    assert not os.path.lexists(run / "metrics.json")
    assert not os.path.lexists(outside)


# -- compat.save: where torch.save writes --------------------------------------------


def _savers():
    savers = [pytest.param(compat.save, id="compat")]
    if HAVE_TORCH:
        import torch

        savers.append(pytest.param(torch.save, id="torch"))
    return savers


def _load(path):
    return compat.load(path, weights_only=True)


@pytest.mark.parametrize("save", _savers())
def test_save_writes_through_a_symlink_into_its_target_as_torch_does(tmp_path, save):
    target = tmp_path / "target.pt"
    target.write_bytes(PRECIOUS)
    os.symlink("target.pt", tmp_path / "link.pt")
    save({"step": 3}, tmp_path / "link.pt")
    assert os.path.islink(tmp_path / "link.pt")
    assert _load(target) == {"step": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.pt", "target.pt"]


@pytest.mark.parametrize("save", _savers())
def test_save_through_a_dangling_symlink_creates_its_target_as_torch_does(
    tmp_path, save
):
    os.symlink("made.pt", tmp_path / "link.pt")
    save({"step": 3}, tmp_path / "link.pt")
    assert os.path.islink(tmp_path / "link.pt")
    assert _load(tmp_path / "made.pt") == {"step": 3}


@pytest.mark.parametrize("save", _savers())
def test_save_writes_the_file_a_hard_link_shares_as_torch_does(tmp_path, save):
    (tmp_path / "a.pt").write_bytes(PRECIOUS)
    os.link(tmp_path / "a.pt", tmp_path / "b.pt")
    save({"step": 3}, tmp_path / "b.pt")
    assert os.stat(tmp_path / "a.pt").st_nlink == 2
    assert _load(tmp_path / "a.pt") == {"step": 3}


@pytest.mark.parametrize("save", _savers())
def test_save_writes_into_a_device_and_leaves_it_a_device_as_torch_does(tmp_path, save):
    null = tmp_path / "null"  # never /dev/null itself: a bug would replace it
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    save({"step": 3}, null)
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert os.lstat(null).st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("save", _savers())
def test_save_keeps_a_files_permissions_as_torch_does(tmp_path, save):
    path = tmp_path / "model.pt"
    path.write_bytes(PRECIOUS)
    path.chmod(0o640)
    save({"step": 3}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert _load(path) == {"step": 3}


def _unprivileged(do) -> str:
    """``do()``'s outcome where folder permissions hold: as nobody in a forked
    child when running as root (root writes any folder), else right here."""

    def outcome():
        try:
            do()
            return "ok"
        except Exception as e:
            return f"{type(e).__name__} {getattr(e, 'filename', None)}"

    if os.geteuid() != 0:
        return outcome()
    compat.save({"step": 0}, io.BytesIO())  # imports done before the fork
    read, write = os.pipe()
    with warnings.catch_warnings():  # JAX's threads: the child runs Python only
        warnings.simplefilter("ignore", RuntimeWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, outcome().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return text


def test_save_into_a_writable_file_in_a_read_only_folder_writes_it_as_torch_does():
    top = tempfile.mkdtemp()  # not under pytest's root-only folder: nobody reads it
    try:
        os.chmod(top, 0o755)
        folder = os.path.join(top, "read-only")
        os.mkdir(folder)
        path = os.path.join(folder, "model.pt")
        with open(path, "wb") as f:
            f.write(PRECIOUS)
        os.chmod(path, 0o666)
        os.chmod(folder, 0o555)
        new = os.path.join(folder, "new.pt")
        assert _unprivileged(lambda: compat.save({"step": 3}, path)) == "ok"
        assert _unprivileged(lambda: compat.save({"step": 3}, new)) == (
            f"PermissionError {new}"  # the path given, not a temporary file's
        )
        assert _load(path) == {"step": 3}
        assert sorted(os.listdir(folder)) == ["model.pt"]
    finally:
        os.chmod(os.path.join(top, "read-only"), 0o755)
        shutil.rmtree(top)


def test_save_to_a_regular_file_stays_atomic(tmp_path):
    path = tmp_path / "model.pt"
    compat.save({"step": 1}, path)
    inode = os.stat(path).st_ino

    def half_then_fail(f):
        f.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError) as full:
        atomic_write(path, half_then_fail, links="follow")
    assert full.value.filename == str(path)
    assert _load(path) == {"step": 1}
    compat.save({"step": 2}, path)
    assert os.stat(path).st_ino != inode  # renamed into place, not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt"]


# -- the same run, the same bytes -----------------------------------------------------


def test_saved_weights_are_the_same_bytes_every_time(tmp_path):
    blobs = set()
    for i in range(20):  # safetensors' metadata order was a coin toss per call
        blobs.add(save_weights(_params(), tmp_path / f"{i}.safetensors").read_bytes())
    assert len(blobs) == 1
    (blob,) = blobs
    size = int.from_bytes(blob[:8], "little")
    metadata = json.loads(blob[8 : 8 + size])["__metadata__"]
    assert list(metadata) == sorted(metadata)
    assert (8 + size) % 8 == 0


def test_the_same_picture_is_the_same_bytes_with_no_version_text(tmp_path):
    first = plots.save_loss_curve([[1.0, 0.5], [0.4]], tmp_path / "a.png")
    second = plots.save_loss_curve([[1.0, 0.5], [0.4]], tmp_path / "b.png")
    assert first.read_bytes() == second.read_bytes()
    assert b"Matplotlib version" not in first.read_bytes()
