"""Tests for jaxblitz.data: files written here from seeded arrays; never the network."""

import contextlib
import gzip
import hashlib
import io
import os
import pickle
import tarfile
import threading
import urllib.parse
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxblitz import data
from jaxblitz.data import Dataset, archives, batches, fetch, load
from jaxblitz.plots import save_image_grid

BLITZ_CLASSES = (
    "plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
CIFAR_LABEL_NAMES = [
    "airplane", "automobile", "bird", "cat", "deer",
    "dog", "frog", "horse", "ship", "truck",
]  # fmt: skip
DEBIAN_FASHION = Path("/usr/share/datasets/fashion-mnist")
REAL_NETWORK_CHECK = fetch.network_available
FIRST_TEST_INDICES = [3, 7, 13, 19, 36]  # of digits' seeded split


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path_factory):
    """No test reaches the network, the default data folder or tfds's own folder."""

    def no_network(*args, **kwargs):
        raise AssertionError("tests never touch the network")

    monkeypatch.setattr(fetch, "network_available", lambda *a, **k: False)
    monkeypatch.setattr(fetch.urllib.request, "urlopen", no_network)
    monkeypatch.setattr(fetch, "TFDS_DATA_DIR", str(tmp_path_factory.mktemp("tfds")))
    monkeypatch.setenv("JAXBLITZ_DATA", str(tmp_path_factory.mktemp("default")))


# -- fixtures in the original formats ----------------------------------------------


def cifar_arrays(seed=0, batches=2, per_batch=6, n_test=5):
    """Seeded ``{"train": [(pixels, labels), ...], "test": (pixels, labels)}``."""
    rng = np.random.default_rng(seed)

    def split(n):
        return rng.integers(0, 256, (n, 3, 32, 32), np.uint8), rng.integers(0, 10, n)

    return {"train": [split(per_batch) for _ in range(batches)], "test": split(n_test)}


def add_member(tar, name, payload):
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def write_python_archive(folder, arrays):
    """torchvision's cifar-10-python.tar.gz: pickled (protocol 2) batch dicts."""

    def batch(pixels, labels):
        return pickle.dumps(
            {
                b"batch_label": b"fixture",
                b"labels": [int(y) for y in labels],
                b"data": pixels.reshape(len(pixels), -1),
                b"filenames": [b"x.png"] * len(labels),
            },
            protocol=2,
        )

    path = folder / archives.PYTHON_ARCHIVE
    meta = {b"label_names": [n.encode() for n in CIFAR_LABEL_NAMES], b"num_vis": 3072}
    with tarfile.open(path, "w:gz") as tar:
        for i, part in enumerate(arrays["train"], 1):
            add_member(tar, f"cifar-10-batches-py/data_batch_{i}", batch(*part))
        add_member(tar, "cifar-10-batches-py/test_batch", batch(*arrays["test"]))
        add_member(tar, "cifar-10-batches-py/batches.meta", pickle.dumps(meta, 2))
        add_member(tar, "cifar-10-batches-py/readme.html", b"<html></html>")
    return path


def write_binary_archive(folder, arrays):
    """tfds's cifar-10-binary.tar.gz: 3073-byte records (label, then R, G, B)."""

    def records(pixels, labels):
        flat = pixels.reshape(len(pixels), -1)
        return np.concatenate([labels[:, None].astype(np.uint8), flat], 1).tobytes()

    path = folder / archives.BINARY_ARCHIVE
    with tarfile.open(path, "w:gz") as tar:
        for i, part in enumerate(arrays["train"], 1):
            add_member(tar, f"cifar-10-batches-bin/data_batch_{i}.bin", records(*part))
        add_member(tar, "cifar-10-batches-bin/test_batch.bin", records(*arrays["test"]))
        names = "\n".join(CIFAR_LABEL_NAMES) + "\n\n"
        add_member(tar, "cifar-10-batches-bin/batches.meta.txt", names.encode())
    return path


def write_idx(path, array, magic, compress=True):
    header = magic.to_bytes(4, "big") + b"".join(
        d.to_bytes(4, "big") for d in array.shape
    )
    payload = header + array.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


def write_idx_split(folder, split, seed=0, n=7, compress=True):
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (n, 28, 28), np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    stem = {"train": "train", "test": "t10k"}[split]
    gz = ".gz" if compress else ""
    folder.mkdir(parents=True, exist_ok=True)
    write_idx(folder / f"{stem}-images-idx3-ubyte{gz}", pixels, 0x803, compress)
    write_idx(folder / f"{stem}-labels-idx1-ubyte{gz}", labels, 0x801, compress)
    return pixels, labels


def unnormalize(images):
    return np.rint((images + 1) / 2 * 255).astype(np.uint8)


# -- CIFAR-10 ----------------------------------------------------------------------


@pytest.mark.parametrize("writer", [write_python_archive, write_binary_archive])
def test_cifar_archive_round_trips_pixels_and_labels(tmp_path, writer):
    arrays = cifar_arrays()
    writer(tmp_path, arrays)
    train, test = load("cifar10", "train", tmp_path), load("cifar10", "test", tmp_path)
    pixels = np.concatenate([p for p, _ in arrays["train"]])
    labels = np.concatenate([y for _, y in arrays["train"]])
    assert train.images.shape == (12, 3, 32, 32) and train.images.dtype == np.float32
    np.testing.assert_array_equal(train.images, data.normalize(pixels))
    np.testing.assert_array_equal(unnormalize(train.images), pixels)
    np.testing.assert_array_equal(unnormalize(test.images), arrays["test"][0])
    assert train.labels.dtype == np.int32
    np.testing.assert_array_equal(train.labels, labels)
    np.testing.assert_array_equal(test.labels, arrays["test"][1])
    assert train.class_names == BLITZ_CLASSES


def test_cifar_layout_is_nchw_with_red_green_blue_planes(tmp_path):
    arrays = cifar_arrays(batches=1, per_batch=1, n_test=1)
    arrays["train"][0][0][:] = 0
    arrays["train"][0][0][0, 1, 3, 5] = 255  # green, row 3, column 5
    write_binary_archive(tmp_path, arrays)
    images = load("cifar10", "train", tmp_path).images
    assert images.shape == (1, 3, 32, 32)
    assert np.argwhere(images == 1.0).tolist() == [[0, 1, 3, 5]]
    assert images.min() == -1.0


def test_normalize_is_totensor_then_normalize_bit_for_bit():
    torch = pytest.importorskip("torch")
    pixels = np.arange(256, dtype=np.uint8).reshape(1, 1, 16, 16)
    expected = (torch.from_numpy(pixels).float() / 255 - 0.5) / 0.5
    ours = data.normalize(pixels)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, expected.numpy())
    assert ours.min() == -1.0 and ours.max() == 1.0


def test_cifar_archive_is_decoded_once_into_pickle_free_npy(tmp_path, monkeypatch):
    write_binary_archive(tmp_path, cifar_arrays())
    first = load("cifar10", "test", tmp_path)
    cached = sorted((tmp_path / "npy").glob("*.npy"))
    assert len(cached) == 4  # train and test, images and labels
    for f in cached:
        np.load(f, allow_pickle=False)
    monkeypatch.setattr(archives, "read_cifar", lambda path: pytest.fail("decoded"))
    for split in ("train", "test"):
        again = load("cifar10", split, tmp_path)
        assert again.images.flags.writeable and again.images.dtype == np.float32
    np.testing.assert_array_equal(
        load("cifar10", "test", tmp_path).images, first.images
    )


def test_cache_of_one_archive_is_not_served_for_another(tmp_path):
    write_python_archive(tmp_path, cifar_arrays(seed=0))
    old = load("cifar10", "test", tmp_path)
    path = write_python_archive(tmp_path, cifar_arrays(seed=1, n_test=4))
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    new = load("cifar10", "test", tmp_path)
    assert len(new.labels) == 4 and len(old.labels) == 5


def test_truncated_archive_says_which_file_and_what_to_do(tmp_path):
    path = write_binary_archive(tmp_path, cifar_arrays())
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(
        ValueError, match=r"cifar-10-binary\.tar\.gz is truncated.*Delete"
    ):
        load("cifar10", "train", tmp_path)


def test_full_size_archive_with_wrong_checksum_is_refused(tmp_path, monkeypatch):
    path = write_python_archive(tmp_path, cifar_arrays())
    real = hashlib.md5(path.read_bytes()).hexdigest()
    key = ("cifar10", archives.PYTHON_ARCHIVE)
    wrong = fetch.PUBLISHED[key]._replace(size=path.stat().st_size, digest="0" * 32)
    monkeypatch.setitem(fetch.PUBLISHED, key, wrong)
    with pytest.raises(ValueError, match=f"md5 is {real}, expected {'0' * 32}"):
        load("cifar10", "train", tmp_path)
    monkeypatch.setitem(fetch.PUBLISHED, key, wrong._replace(digest=real))
    assert len(load("cifar10", "train", tmp_path).labels) == 12


def test_archive_in_the_wrong_format_is_refused(tmp_path):
    write_python_archive(tmp_path, cifar_arrays())
    # The pickled archive under the binary archive's name.
    (tmp_path / archives.PYTHON_ARCHIVE).rename(tmp_path / archives.BINARY_ARCHIVE)
    with pytest.raises(ValueError, match="is not a CIFAR-10 binary archive"):
        load("cifar10", "train", tmp_path)


def test_binary_batch_of_partial_records_is_refused(tmp_path):
    path = tmp_path / archives.BINARY_ARCHIVE
    with tarfile.open(path, "w:gz") as tar:
        for name in ("data_batch_1.bin", "test_batch.bin"):
            add_member(tar, f"cifar-10-batches-bin/{name}", bytes(3073 + 100))
        add_member(tar, "cifar-10-batches-bin/batches.meta.txt", b"a b c d e f g h i j")
    with pytest.raises(ValueError, match="not whole 3073-byte records"):
        load("cifar10", "train", tmp_path)


def test_python_archive_never_runs_pickled_code(tmp_path):
    path = write_python_archive(tmp_path, cifar_arrays())
    evil = pickle.dumps(os.system, protocol=2)  # a global outside the allowed few
    with tarfile.open(path, "w:gz") as tar:
        for name in ("data_batch_1", "test_batch", "batches.meta"):
            add_member(tar, f"cifar-10-batches-py/{name}", evil)
    with pytest.raises(ValueError, match=r"refusing to unpickle (posix|nt)\.system"):
        load("cifar10", "train", tmp_path)


def test_unknown_dataset_or_split_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'cifar100'.*'cifar10'"):
        load("cifar100", "train", tmp_path)
    with pytest.raises(ValueError, match="unknown split 'valid'"):
        load("digits", "valid")


@pytest.mark.parametrize("name", ["cifar10", "mnist", "fashion_mnist"])
def test_empty_data_dir_offline_fails_fast_naming_three_ways(
    tmp_path, monkeypatch, name
):
    probes, tfds_calls = [], []

    def network_available(url, timeout=fetch.CONNECT_TIMEOUT_S):
        probes.append((url, timeout))
        return False

    def tfds_arrays(name, split, *, download):
        tfds_calls.append(download)
        return None

    monkeypatch.setattr(fetch, "network_available", network_available)
    monkeypatch.setattr(fetch, "tfds_arrays", tfds_arrays)
    with pytest.raises(FileNotFoundError) as info:
        load(name, "train", tmp_path)
    # Fast: one probe bounded by its timeout (seconds), never tfds's own download,
    # which waits minutes offline; the fixture fails any urlopen.
    [(url, timeout)] = probes
    assert timeout <= 10
    assert tfds_calls == [False]  # only a copy tfds already prepared
    message = str(info.value)
    assert str(tmp_path) in message and "cannot be reached: offline?" in message
    assert urllib.parse.urlsplit(url).hostname in message
    for way in ("1. a local copy", "2. tensorflow-datasets", "3. a direct download"):
        assert way in message


@pytest.mark.parametrize("name", ["cifar10", "mnist"])
def test_a_data_dir_that_is_a_file_is_named_as_such(tmp_path, monkeypatch, name):
    monkeypatch.setattr(fetch, "network_available", lambda *a, **k: True)
    monkeypatch.setattr(fetch, "download", None)  # never reached
    a_file = tmp_path / "data"
    a_file.write_text("x")
    with pytest.raises(NotADirectoryError, match=f"{a_file} is a file, not a folder"):
        load(name, "train", a_file)


def test_network_check_gives_up_within_its_timeout(monkeypatch):
    release, asked = threading.Event(), []

    def connect_that_hangs(address, timeout):  # a DNS lookup or SYN with no answer
        asked.append((address, timeout))
        release.wait(60)
        return contextlib.nullcontext()  # ... that succeeds, too late

    monkeypatch.setattr(fetch.urllib.request, "getproxies", dict)
    monkeypatch.setattr(fetch.socket, "create_connection", connect_that_hangs)
    try:
        assert not REAL_NETWORK_CHECK("https://example.org/data.gz", timeout=0.05)
    finally:
        release.set()
    assert asked == [(("example.org", 443), 0.05)]


def test_network_check_says_no_when_the_connection_is_refused():
    assert not REAL_NETWORK_CHECK("http://127.0.0.1:9/", timeout=1.0)  # no listener


# -- the direct download, served from memory ---------------------------------------


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def serve(monkeypatch, payload):
    requested = []

    def urlopen(url, timeout):
        requested.append((url, timeout))
        return FakeResponse(payload)

    monkeypatch.setattr(fetch, "network_available", lambda *a, **k: True)
    monkeypatch.setattr(fetch, "have_tensorflow", lambda: False)
    monkeypatch.setattr(fetch.urllib.request, "urlopen", urlopen)
    return requested


def test_download_verifies_and_writes_into_data_dir(tmp_path, monkeypatch):
    (tmp_path / "remote").mkdir()
    payload = write_binary_archive(tmp_path / "remote", cifar_arrays()).read_bytes()
    key = ("cifar10", archives.BINARY_ARCHIVE)
    published = fetch.PUBLISHED[key]._replace(
        size=len(payload), digest=hashlib.sha256(payload).hexdigest()
    )
    monkeypatch.setitem(fetch.PUBLISHED, key, published)
    requested = serve(monkeypatch, payload)
    target = tmp_path / "fresh"
    assert len(load("cifar10", "test", target).labels) == 5
    assert requested[0][0] == "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
    assert (target / archives.BINARY_ARCHIVE).read_bytes() == payload
    assert not list(target.glob(".*.tmp"))


def test_download_with_wrong_checksum_leaves_nothing_behind(tmp_path, monkeypatch):
    serve(monkeypatch, b"not the archive")
    with pytest.raises(ConnectionError, match=r"sha256 .* expected c4a38c50"):
        load("cifar10", "train", tmp_path)
    assert list(tmp_path.iterdir()) == []


# -- MNIST and Fashion-MNIST idx files ---------------------------------------------


@pytest.mark.parametrize("name", ["mnist", "fashion_mnist"])
def test_idx_files_round_trip_padded_to_32(tmp_path, name):
    pixels, labels = write_idx_split(tmp_path / name, "test")
    loaded = load(name, "test", tmp_path)
    assert loaded.images.shape == (7, 1, 32, 32) and loaded.images.dtype == np.float32
    np.testing.assert_array_equal(unnormalize(loaded.images[:, 0, 2:30, 2:30]), pixels)
    border = np.ones((32, 32), bool)
    border[2:30, 2:30] = False
    assert (loaded.images[:, 0][:, border] == -1.0).all()
    np.testing.assert_array_equal(loaded.labels, labels)
    assert loaded.class_names == data.CLASS_NAMES[name]


def test_fashion_mnist_class_names_are_the_standard_ones():
    assert data.CLASS_NAMES["fashion_mnist"][:2] == ("T-shirt/top", "Trouser")
    assert data.CLASS_NAMES["fashion_mnist"][-1] == "Ankle boot"
    assert data.CLASS_NAMES["mnist"] == tuple("0123456789")


def test_uncompressed_idx_files_in_torchvision_layout_load(tmp_path):
    pixels, _ = write_idx_split(tmp_path / "MNIST" / "raw", "train", compress=False)
    images = load("mnist", "train", tmp_path).images
    np.testing.assert_array_equal(unnormalize(images[:, 0, 2:30, 2:30]), pixels)


def test_idx_file_with_the_wrong_magic_number_is_refused(tmp_path):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")
    images = folder / "t10k-images-idx3-ubyte.gz"
    labels = folder / "t10k-labels-idx1-ubyte.gz"
    images.write_bytes(labels.read_bytes())
    with pytest.raises(ValueError, match=r"t10k-images.*magic number is 0x801"):
        load("mnist", "test", tmp_path)


def test_truncated_idx_file_is_refused(tmp_path):
    folder = tmp_path / "mnist"
    write_idx_split(folder, "test")
    images = folder / "t10k-images-idx3-ubyte.gz"
    raw = gzip.decompress(images.read_bytes())
    images.write_bytes(gzip.compress(raw[:-10]))
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz is truncated"):
        load("mnist", "test", tmp_path)
    images.write_bytes(gzip.compress(raw)[:-10])
    with pytest.raises(ValueError, match="is truncated or not gzip.*Delete"):
        load("mnist", "test", tmp_path)


@pytest.mark.skipif(not DEBIAN_FASHION.is_dir(), reason="dataset-fashion-mnist absent")
def test_debian_fashion_mnist_package_loads_real_data():
    train = load("fashion_mnist", "train", DEBIAN_FASHION)
    test = load("fashion_mnist", "test", DEBIAN_FASHION)
    assert train.images.shape == (60000, 1, 32, 32)
    assert test.images.shape == (10000, 1, 32, 32)
    assert np.bincount(test.labels).tolist() == [1000] * 10
    assert train.images.min() >= -1.0 and train.images.max() <= 1.0


# -- tensorflow-datasets -----------------------------------------------------------


def test_tfds_copy_is_used_when_data_dir_has_none(tmp_path, monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    # Without TensorFlow tfds serves prepared data through data_source only; the
    # mock answers that call with random examples.
    monkeypatch.setattr(fetch, "have_tensorflow", lambda: False)
    with tfds.testing.mock_data(num_examples=5):
        cifar = load("cifar10", "train", tmp_path)
        mnist = load("mnist", "test", tmp_path)
        source = tfds.data_source("cifar10", split="train", download=False)
        first = source[0]["image"].transpose(2, 0, 1)  # (3, 32, 32)
    assert cifar.images.shape == (5, 3, 32, 32) and cifar.class_names == BLITZ_CLASSES
    np.testing.assert_array_equal(unnormalize(cifar.images[0]), first)
    assert mnist.images.shape == (5, 1, 32, 32)
    assert (mnist.images[:, :, :2] == -1).all()  # padded like the idx files
    assert not list(tmp_path.iterdir())


def test_local_archive_is_preferred_to_tfds(tmp_path, monkeypatch):
    write_binary_archive(tmp_path, cifar_arrays())
    monkeypatch.setattr(fetch, "tfds_arrays", lambda *a, **k: pytest.fail("tfds"))
    assert len(load("cifar10", "test", tmp_path).labels) == 5


# -- digits ------------------------------------------------------------------------


def test_digits_loads_offline_with_fixed_shapes_and_balance(monkeypatch):
    def no_other_source(*args, **kwargs):
        raise AssertionError("digits is bundled: no other source is asked")

    monkeypatch.setattr(fetch, "network_available", no_other_source)
    monkeypatch.setattr(fetch, "tfds_arrays", no_other_source)
    train, test = load("digits", "train"), load("digits", "test")
    assert train.images.shape == (1438, 1, 32, 32)
    assert test.images.shape == (359, 1, 32, 32)
    assert train.images.dtype == np.float32 and train.labels.dtype == np.int32
    assert train.images.min() == -1.0 and train.images.max() == 1.0
    assert train.class_names == tuple("0123456789")
    counts = np.bincount(test.labels, minlength=10)
    total = counts + np.bincount(train.labels, minlength=10)
    np.testing.assert_allclose(counts / total, 0.2, atol=0.01)  # stratified 80/20


def test_digits_split_is_fixed_and_matches_scikit_learn():
    from sklearn.datasets import load_digits

    raw = load_digits()
    split = data.digits.split_indices(raw.target)
    assert not set(split["train"]) & set(split["test"])
    assert len(split["train"]) + len(split["test"]) == 1797
    # Fingerprint of the seeded split: changes only if the split itself changes.
    assert split["test"][:5].tolist() == FIRST_TEST_INDICES
    test = load("digits", "test")
    np.testing.assert_array_equal(test.labels, raw.target[split["test"]])
    blocks = test.images[:, 0].reshape(-1, 8, 4, 8, 4)  # nearest x4: constant blocks
    np.testing.assert_array_equal(
        blocks, blocks[:, :, :1, :, :1].repeat(4, 2).repeat(4, 4)
    )
    expected = (raw.images[split["test"]] / 16 - 0.5) / 0.5
    np.testing.assert_array_equal(blocks[:, :, 0, :, 0], expected.astype(np.float32))


# -- batches -----------------------------------------------------------------------


def small_dataset(n=10):
    images = np.arange(n, dtype=np.float32).reshape(n, 1, 1, 1) * np.ones((1, 1, 2, 2))
    return Dataset(images.astype(np.float32), np.arange(n, dtype=np.int32), ("a",))


def test_batches_with_the_same_key_come_in_the_same_order():
    ds = small_dataset()
    first = [y.tolist() for _, y in batches(ds, 3, jax.random.key(7))]
    again = [y.tolist() for _, y in batches(ds, 3, jax.random.key(7))]
    other = [y.tolist() for _, y in batches(ds, 3, jax.random.key(8))]
    assert first == again and first != other
    order = np.asarray(jax.random.permutation(jax.random.key(7), 10)).tolist()
    assert sum(first, []) == order


def test_batches_cover_every_example_once_and_keep_images_with_labels():
    ds = small_dataset()
    got = list(batches(ds, 4, jax.random.key(0)))
    assert [len(y) for _, y in got] == [4, 4, 2]
    assert sorted(np.concatenate([y for _, y in got]).tolist()) == list(range(10))
    for x, y in got:
        np.testing.assert_array_equal(x[:, 0, 0, 0], y)


def test_batches_drop_last_and_unshuffled_order():
    ds = small_dataset()
    dropped = list(batches(ds, 4, jax.random.key(0), drop_last=True))
    assert [len(y) for _, y in dropped] == [4, 4]
    plain = [y.tolist() for _, y in batches(ds, 4, shuffle=False)]
    assert plain == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_batches_refuse_a_missing_key_or_a_bad_batch_size():
    ds = small_dataset()
    with pytest.raises(ValueError, match="needs a key"):
        batches(ds, 4)
    with pytest.raises(ValueError, match="batch_size must be positive, got 0"):
        batches(ds, 0, shuffle=False)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        batches(ds, 2.5, shuffle=False)


# -- pictures ----------------------------------------------------------------------


@pytest.mark.parametrize("channels", [1, 3])
def test_save_image_grid_writes_a_decodable_png(tmp_path, channels):
    import matplotlib.image

    rng = np.random.default_rng(0)
    images = rng.uniform(-1, 1, (10, channels, 32, 32)).astype(np.float32)
    path = save_image_grid(
        images,
        np.arange(10),
        BLITZ_CLASSES,
        tmp_path / "out" / "grid.png",
        predicted=np.arange(10)[::-1],
        nrow=4,
    )
    assert path == tmp_path / "out" / "grid.png"
    picture = matplotlib.image.imread(path)
    height, width = picture.shape[:2]
    assert 300 < height < 600 and 400 < width < 700  # 3 rows of 4 at 100 dpi
    assert len(list(path.parent.iterdir())) == 1  # no temporary file left


def test_save_image_grid_refuses_bad_shapes_and_labels(tmp_path):
    with pytest.raises(ValueError, match=r"got shape \(32, 32\)"):
        save_image_grid(np.zeros((32, 32)), [0], BLITZ_CLASSES, tmp_path / "a.png")
    with pytest.raises(ValueError, match="class indices in 0..9"):
        save_image_grid(np.zeros((1, 3, 8, 8)), [10], BLITZ_CLASSES, tmp_path / "a.png")
