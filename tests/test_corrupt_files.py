"""Corrupt files: a clear error naming the file, never silently wrong numbers.

Exported weights are safetensors, checkpoints are orbax directories; neither format
checks its contents, so jaxblitz adds a SHA-256 and these tests flip bits and cut
files everywhere it matters. Compat ``save`` files are PyTorch's zip archives,
whose records carry a CRC-32 that ``load`` checks. Dataset archives are
gzip (CRC-32) with published checksums; the decoded ``.npy`` cache gets a CRC-32.
"""

import contextlib
import gzip
import os
import shutil
import threading
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz import train
from jaxblitz.checkpoints import (
    Checkpointer,
    CorruptFileError,
    load_weights,
    save_weights,
)
from jaxblitz.data import archives, load
from tests.test_data import cifar_arrays, write_binary_archive, write_idx_split

SMALL = {
    "fc": {"weight": np.arange(6, dtype=np.float32).reshape(2, 3) / 7},
    "out": {"bias": np.array([1.5, -2.0], np.float32)},
}


def flipped(blob: bytes, i: int, bit: int = 0) -> bytes:
    out = bytearray(blob)
    out[i] ^= 1 << bit
    return bytes(out)


def same_weights(a: dict, b: dict) -> bool:
    flat_a, flat_b = jax.tree.leaves_with_path(a), jax.tree.leaves_with_path(b)
    return len(flat_a) == len(flat_b) and all(
        pa == pb and x.dtype == y.dtype and np.array_equal(x, y)
        for (pa, x), (pb, y) in zip(flat_a, flat_b, strict=True)
    )


def test_every_single_bit_flip_in_a_weights_file_is_caught_or_harmless(tmp_path):
    path = save_weights(SMALL, tmp_path / "w.safetensors")
    blob = path.read_bytes()
    header = 8 + int.from_bytes(blob[:8], "little")
    outcomes = {"refused": 0, "identical": 0}
    for i in range(len(blob)):
        for bit in (0, 5):
            path.write_bytes(flipped(blob, i, bit))
            try:
                loaded = load_weights(path)
            except CorruptFileError as e:
                assert str(path) in str(e)
                outcomes["refused"] += 1
                continue
            # Loaded despite the flip: only possible where the flip changed
            # nothing that matters (JSON whitespace, the metadata's "format").
            assert i < header, f"a flip in the data at byte {i} went unnoticed"
            assert same_weights(loaded, SMALL), f"wrong numbers after flipping {i}"
            outcomes["identical"] += 1
    data_bytes = len(blob) - header
    assert outcomes["refused"] >= 2 * data_bytes > 0, outcomes


def test_a_weights_file_cut_at_any_length_is_refused(tmp_path):
    path = save_weights(SMALL, tmp_path / "w.safetensors")
    blob = path.read_bytes()
    for n in range(len(blob)):
        path.write_bytes(blob[:n])
        with pytest.raises(CorruptFileError, match="not a readable safetensors file"):
            load_weights(path)


def test_a_flipped_weight_says_which_file_and_that_numbers_cannot_be_trusted(
    tmp_path,
):
    path = save_weights(SMALL, tmp_path / "w.safetensors")
    blob = path.read_bytes()
    path.write_bytes(flipped(blob, len(blob) - 3))  # in fc.weight's last float
    with pytest.raises(CorruptFileError) as info:
        load_weights(path)
    assert f"{path} fails its checksum" in str(info.value)
    assert "cannot be trusted" in str(info.value)


def test_weights_without_a_checksum_still_load(tmp_path):
    """Files from safetensors.torch.save_file have no checksum: nothing to verify."""
    from safetensors.numpy import save_file

    save_file({"fc.weight": SMALL["fc"]["weight"]}, tmp_path / "torch.safetensors")
    loaded = load_weights(tmp_path / "torch.safetensors")
    np.testing.assert_array_equal(loaded["fc"]["weight"], SMALL["fc"]["weight"])


@pytest.mark.parametrize("load", [torch.load, load_weights], ids=["compat", "core"])
def test_a_device_or_a_pipe_is_refused_unread_not_read_to_an_end_it_lacks(
    load, tmp_path
):
    # /dev/zero would fill the memory; /dev/null ends, so the old read-it-all
    # code fails here quickly (another message) instead of blowing up.
    with pytest.raises(CorruptFileError, match=r"^/dev/null is a character device, "):
        load("/dev/null")
    fifo = tmp_path / "model.pt"
    os.mkfifo(fifo)

    def feed():  # a writer, so that an open that waits for one (the old) ends too
        with contextlib.suppress(OSError):  # the reader may be gone already
            fifo.write_bytes(b"PK")

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        with pytest.raises(CorruptFileError, match=r"is a FIFO \(named pipe\), not a"):
            load(fifo)
    finally:  # a reader of our own lets a writer still waiting finish
        with open(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            writer.join(5)
            f.read()


def test_compat_save_files_are_checked_by_their_zip_crc(tmp_path):
    import zipfile

    path = tmp_path / "net.pt"
    torch.save({"fc.weight": torch.tensor([[1.0, 2.0]])}, path)
    blob = path.read_bytes()
    assert torch.load(path)["fc.weight"].tolist() == [[1.0, 2.0]]
    info = zipfile.ZipFile(path).getinfo("net/data/0")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    path.write_bytes(flipped(blob, start + 7, 3))  # in the last float
    with pytest.raises(CorruptFileError, match="record data/0 .Bad CRC-32"):
        torch.load(path)
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(CorruptFileError, match="truncated, corrupt"):
        torch.load(path)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """Two checkpoints of a LeNet train state; step 2 is the one to damage."""
    folder = tmp_path_factory.mktemp("ckpt")
    config = train.Config(dataset="digits")
    state = train.init_state(config, 1)
    checkpointer = Checkpointer(folder)
    for step in (1, 2):
        checkpointer.save(step, state, {"epoch": step, "losses": [0.25] * 8})
    checkpointer.close()
    return folder, state


def test_every_file_of_a_damaged_checkpoint_is_caught_or_harmless(checkpoint, tmp_path):
    folder, state = checkpoint
    expected = [np.asarray(x) for x in jax.tree.leaves(state)]
    files = sorted(p for p in (folder / "2").rglob("*") if p.is_file())
    caught, checksum_caught = 0, 0
    for original in files:
        rel = original.relative_to(folder)
        blob = original.read_bytes()
        damages = [flipped(blob, int(len(blob) * f)) for f in (0.3, 0.6, 0.9)]
        damages.append(blob[: len(blob) // 2])
        for damaged in damages:
            work = tmp_path / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(folder, work)
            (work / rel).write_bytes(damaged)
            checkpointer = Checkpointer(work)
            try:
                restored, meta = checkpointer.restore(state, 2)
            except CorruptFileError as e:
                message = str(e)
                assert f"{work / '2'}" in message, message
                advice = f"Move {work / '2'} out of {work} to resume from step 1"
                assert advice in message, message
                caught += 1
                checksum_caught += "fails its checksum" in message
                continue
            finally:
                checkpointer.close()
            got = [np.asarray(x) for x in jax.tree.leaves(restored)]
            assert all(
                np.array_equal(a, b) for a, b in zip(expected, got, strict=True)
            ), rel
            assert meta == {"epoch": 2, "losses": [0.25] * 8}, rel
    # orbax/tensorstore alone let some flips through as wrong numbers.
    assert caught > 10 and checksum_caught >= 1, (caught, checksum_caught)


def test_resuming_from_a_damaged_checkpoint_is_a_clear_error(checkpoint, tmp_path):
    folder, state = checkpoint
    work = tmp_path / "ckpt"
    shutil.copytree(folder, work)
    meta = work / "2" / "meta" / "metadata"
    meta.write_text(meta.read_text().replace("0.25", "0.75", 1))  # valid JSON
    checkpointer = Checkpointer(work)
    with pytest.raises(CorruptFileError, match="fails its checksum"):
        checkpointer.restore(state)
    restored, old = checkpointer.restore(state, 1)  # the previous one is intact
    checkpointer.close()
    assert old == {"epoch": 1, "losses": [0.25] * 8}


def test_a_truncated_cifar_archive_anywhere_is_refused(tmp_path):
    path = write_binary_archive(tmp_path, cifar_arrays())
    blob = path.read_bytes()
    for n in (10, len(blob) // 3, len(blob) - 9):
        path.write_bytes(blob[:n])
        with pytest.raises(ValueError, match=r"cifar-10-binary\.tar\.gz is truncated"):
            load("cifar10", "train", tmp_path)


def test_a_bit_flipped_cifar_archive_is_refused_by_gzip_crc(tmp_path):
    path = write_binary_archive(tmp_path, cifar_arrays())
    blob = path.read_bytes()
    for i in (len(blob) // 4, len(blob) // 2, len(blob) - 6):  # data and CRC
        path.write_bytes(flipped(blob, i, 2))
        with pytest.raises(ValueError, match=archives.BINARY_ARCHIVE):
            load("cifar10", "train", tmp_path)


def test_a_bit_flipped_idx_gz_file_is_refused(tmp_path):
    write_idx_split(tmp_path / "mnist", "test")
    path = tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz"
    blob = path.read_bytes()
    path.write_bytes(flipped(blob, len(blob) // 2, 4))
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz is truncated or"):
        load("mnist", "test", tmp_path)
    assert gzip.decompress(blob)  # the original was fine


def test_a_damaged_npy_cache_is_decoded_again_not_served(tmp_path):
    arrays = cifar_arrays()
    write_binary_archive(tmp_path, arrays)
    good = load("cifar10", "train", tmp_path)  # decodes, writes the cache
    cached = next((tmp_path / "npy").glob("*-train-images.npy"))
    blob = cached.read_bytes()
    cached.write_bytes(flipped(blob, len(blob) - 1, 7))  # the last pixel
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = load("cifar10", "train", tmp_path)
    assert any("fails its checksum" in str(w.message) for w in caught)
    np.testing.assert_array_equal(again.images, good.images)
    assert Path(cached).read_bytes() == blob  # and the cache was rewritten
