"""compat.vision.datasets: torchvision's MNIST, FashionMNIST and CIFAR10 read from
torchvision's on-disk layouts (files made here, in tmp_path), and Digits."""

import gzip
import io
import os
import pickle
import tarfile

import numpy as np
import pytest
from PIL import Image

import jaxblitz.compat as torch
from jaxblitz.compat.utils.data import DataLoader
from jaxblitz.compat.vision import datasets, transforms

TRANSFORM = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
)
LABEL_NAMES = [
    "airplane", "automobile", "bird", "cat", "deer",
    "dog", "frog", "horse", "ship", "truck",
]  # fmt: skip


def write_idx(path, array, magic, compress):
    header = magic.to_bytes(4, "big") + b"".join(
        d.to_bytes(4, "big") for d in array.shape
    )
    payload = header + array.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(payload) if compress else payload)


def write_mnist(root, folder="MNIST", stem="train", n=5, compress=False, seed=0):
    """torchvision's raw/ folder: {stem}-images-idx3-ubyte and -labels-idx1-ubyte."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (n, 28, 28), np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    raw = root / folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    gz = ".gz" if compress else ""
    write_idx(raw / f"{stem}-images-idx3-ubyte{gz}", pixels, 0x803, compress)
    write_idx(raw / f"{stem}-labels-idx1-ubyte{gz}", labels, 0x801, compress)
    return pixels, labels


def cifar_batches(seed=0):
    """Five train batches (2 images each) and a test batch (3), as torchvision's."""
    rng = np.random.default_rng(seed)

    def batch(n):
        return rng.integers(0, 256, (n, 3072), np.uint8), rng.integers(0, 10, n)

    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    return {name: batch(3 if name == "test_batch" else 2) for name in names}


def pickled(batches):
    """Each file's bytes: protocol 2 pickles with bytes keys, like the originals."""
    files = {
        name: pickle.dumps(
            {b"batch_label": b"x", b"labels": [int(y) for y in labels], b"data": px},
            protocol=2,
        )
        for name, (px, labels) in batches.items()
    }
    meta = {b"label_names": [n.encode() for n in LABEL_NAMES], b"num_vis": 3072}
    files["batches.meta"] = pickle.dumps(meta, protocol=2)
    return files


def write_cifar_folder(root, batches):
    folder = root / "cifar-10-batches-py"
    folder.mkdir()
    for name, raw in pickled(batches).items():
        (folder / name).write_bytes(raw)


def write_cifar_archive(root, batches):
    with tarfile.open(root / "cifar-10-python.tar.gz", "w:gz") as tar:
        for name, raw in pickled(batches).items():
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_torchvisions_raw_folder_plain_or_gz(tmp_path, compress):
    pixels, labels = write_mnist(tmp_path, compress=compress)
    train = datasets.MNIST(str(tmp_path), train=True)
    assert len(train) == 5
    assert train.data.dtype == torch.uint8 and tuple(train.data.shape) == (5, 28, 28)
    assert train.targets.dtype == torch.int64
    np.testing.assert_array_equal(train.data.numpy(), pixels)
    assert train.targets.tolist() == labels.tolist()
    img, target = train[2]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    np.testing.assert_array_equal(np.asarray(img), pixels[2])
    assert type(target) is int and target == labels[2]
    assert train.classes[3] == "3 - three" and train.class_to_idx["9 - nine"] == 9


def test_mnist_to_tensor_gives_one_channel_floats_in_unit_range(tmp_path):
    pixels, labels = write_mnist(tmp_path, stem="t10k", n=3)
    test = datasets.MNIST(
        tmp_path, train=False, download=True, transform=transforms.ToTensor()
    )
    image, target = test[-1]
    assert tuple(image.shape) == (1, 28, 28) and image.dtype == torch.float32
    np.testing.assert_array_equal(
        image.numpy()[0], np.float32(pixels[-1]) / np.float32(255)
    )
    assert float(image.min()) >= 0 and float(image.max()) <= 1
    images, targets = next(iter(DataLoader(test, batch_size=3)))
    assert tuple(images.shape) == (3, 1, 28, 28) and targets.dtype == torch.int64
    assert targets.tolist() == labels.tolist()


def test_mnist_repr_is_torchvisions(tmp_path):
    write_mnist(tmp_path, n=4)
    train = datasets.MNIST(
        str(tmp_path), transform=TRANSFORM, target_transform=transforms.Lambda(int)
    )
    assert repr(train) == (
        "Dataset MNIST\n"
        "    Number of datapoints: 4\n"
        f"    Root location: {tmp_path}\n"
        "    Split: Train\n"
        "    StandardTransform\n"
        "Transform: Compose(\n"
        "               ToTensor()\n"
        "               Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))\n"
        "           )\n"
        "Target transform: Lambda()"
    )


def test_fashion_mnist_reads_its_own_folder_and_classes(tmp_path):
    pixels, labels = write_mnist(tmp_path, folder="FashionMNIST", compress=True)
    train = datasets.FashionMNIST(tmp_path)
    assert train.classes[9] == "Ankle boot" and len(train) == 5
    np.testing.assert_array_equal(np.asarray(train[0][0]), pixels[0])
    with pytest.raises(RuntimeError, match="MNIST needs train-images-idx3-ubyte"):
        datasets.MNIST(tmp_path)  # FashionMNIST's files are not MNIST's


def test_mnist_reads_a_replaced_data_subset(tmp_path):
    pixels, labels = write_mnist(tmp_path)
    train = datasets.MNIST(tmp_path)
    train.data, train.targets = train.data[3:], train.targets[3:]
    assert len(train) == 2
    np.testing.assert_array_equal(np.asarray(train[0][0]), pixels[3])
    assert train[1][1] == labels[4]
    with pytest.raises(IndexError, match="index 2 is out of bounds"):
        train[2]


@pytest.mark.parametrize("download", [False, True])
def test_missing_mnist_names_the_files_folder_and_url(tmp_path, download):
    with pytest.raises(RuntimeError) as e:
        datasets.MNIST(tmp_path, download=download)
    message = str(e.value)
    assert str(tmp_path / "MNIST" / "raw") in message
    assert "train-labels-idx1-ubyte" in message
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/" in message


def test_cifar10_reads_torchvisions_extracted_folder(tmp_path):
    batches = cifar_batches()
    write_cifar_folder(tmp_path, batches)
    train = datasets.CIFAR10(str(tmp_path), train=True, download=True)
    test = datasets.CIFAR10(str(tmp_path), train=False, transform=TRANSFORM)
    pixels = np.concatenate([batches[f"data_batch_{i}"][0] for i in range(1, 6)])
    labels = np.concatenate([batches[f"data_batch_{i}"][1] for i in range(1, 6)])
    expected = pixels.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    assert (len(train), len(test)) == (10, 3)
    assert isinstance(train.data, np.ndarray) and train.data.dtype == np.uint8
    np.testing.assert_array_equal(train.data, expected)
    assert train.targets == labels.tolist()
    assert all(type(t) is int for t in train.targets)
    assert train.classes == LABEL_NAMES and train.class_to_idx["truck"] == 9
    img, target = train[7]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (32, 32)
    np.testing.assert_array_equal(np.asarray(img), expected[7])
    assert target == labels[7]
    image, _ = test[0]
    test_pixels = batches["test_batch"][0][0].reshape(3, 32, 32)
    np.testing.assert_allclose(image.numpy(), test_pixels / 127.5 - 1, atol=1e-6)
    assert repr(train).splitlines()[:4] == [
        "Dataset CIFAR10",
        "    Number of datapoints: 10",
        f"    Root location: {tmp_path}",
        "    Split: Train",
    ]


def test_cifar10_reads_the_archive_alone_without_writing_into_root(tmp_path):
    batches = cifar_batches(seed=1)
    write_cifar_archive(tmp_path, batches)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    test = datasets.CIFAR10(tmp_path, train=False, transform=TRANSFORM)
    images, labels = next(iter(DataLoader(test, batch_size=3)))
    assert tuple(images.shape) == (3, 3, 32, 32) and images.dtype == torch.float32
    assert labels.tolist() == batches["test_batch"][1].tolist()
    assert test.classes == LABEL_NAMES
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("download", [False, True])
def test_missing_cifar10_names_the_folder_archive_and_url(tmp_path, download):
    with pytest.raises(RuntimeError, match="Dataset not found") as e:
        datasets.CIFAR10(tmp_path, download=download)
    message = str(e.value)
    assert str(tmp_path / "cifar-10-batches-py") in message
    assert str(tmp_path / "cifar-10-python.tar.gz") in message
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz" in message


def test_cifar10_refuses_a_pickle_that_would_run_code(tmp_path):
    batches = cifar_batches()
    write_cifar_folder(tmp_path, batches)
    evil = pickle.dumps({b"data": os.system}, protocol=2)
    (tmp_path / "cifar-10-batches-py" / "test_batch").write_bytes(evil)
    with pytest.raises(ValueError, match="refusing to unpickle"):
        datasets.CIFAR10(tmp_path, train=False)


def test_digits_stand_in_has_cifars_shapes_and_the_cores_split():
    from jaxblitz import data

    train = datasets.Digits(train=True, transform=TRANSFORM)
    test = datasets.Digits(train=False)
    assert (len(train), len(test)) == (1438, 359)
    assert train.data.shape == (1438, 32, 32, 3) and train.data.dtype == np.uint8
    assert test[0][0].mode == "RGB"
    core = data.load("digits", "train")
    image, label = train[0]
    np.testing.assert_allclose(image.numpy()[0], core.images[0, 0], atol=1.01 / 255)
    assert label == core.labels[0]
