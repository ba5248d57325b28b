"""Tests for jaxblitz.data's tensorflow-datasets source: real prepared copies that
tfds's own builders write here, from seeded arrays; never the network."""

import io

import numpy as np
import pytest

tfds = pytest.importorskip("tensorflow_datasets")
PIL_Image = pytest.importorskip("PIL.Image")

from tensorflow_datasets.image_classification import cifar, mnist  # noqa: E402

from jaxblitz.data import fetch, load  # noqa: E402
from tests.test_data import offline  # noqa: E402, F401 -- the autouse isolation

# On Python >= 3.9 tfds 4.9.10 reaches `importlib_resources` (not installed) when
# it looks for a builder's checksums file; a builder defined here has none.
NO_CODE_PATH = {"code_path": None}


@pytest.fixture
def without_tensorflow(monkeypatch):
    """tfds as it is without the ``tf`` extra: only ``data_source`` reads."""

    def no_tf_reader(*args, **kwargs):
        raise AssertionError("without TensorFlow tfds reads through data_source")

    monkeypatch.setattr(fetch, "have_tensorflow", lambda: False)
    monkeypatch.setattr(tfds.core.DatasetBuilder, "as_dataset", no_tf_reader)


def seeded_splits(shape, seed=0, n_train=5, n_test=3):
    """``{"train": (images (N, H, W, C) uint8, labels), "test": ...}``."""
    rng = np.random.default_rng(seed)
    return {
        split: (rng.integers(0, 256, (n, *shape), np.uint8), rng.integers(0, 10, n))
        for split, n in [("train", n_train), ("test", n_test)]
    }


def png(image):
    """PNG bytes; tfds encodes a NumPy image with TensorFlow, PNG bytes without."""
    out = io.BytesIO()
    PIL_Image.fromarray(image.squeeze(-1) if image.shape[-1] == 1 else image).save(
        out, format="png"
    )
    return out.getvalue()


def prepare(base, splits, data_dir, file_format="array_record"):
    """Prepare ``base`` (tfds's own Cifar10 or MNIST builder) from ``splits`` into
    ``data_dir`` with tfds's builder and writer: the files ``tfds build`` writes."""

    class Tiny(base, skip_registration=True):
        name = base.name  # the registered builder reads the copy
        code_path = None  # see NO_CODE_PATH

        def _split_generators(self, dl_manager):
            return {split: self._generate_examples(split) for split in splits}

        def _generate_examples(self, split):
            for i, (image, label) in enumerate(zip(*splits[split], strict=True)):
                example = {"image": png(image), "label": int(label)}
                if "id" in self.info.features:
                    example["id"] = f"{split}_{i}"
                yield i, example

    builder = Tiny(data_dir=data_dir, file_format=file_format)
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(try_download_gcs=False)
    )
    return builder.data_path


def as_rows(pixels, labels):
    """The examples as sorted ``(bytes, label)`` rows: tfds shuffles on writing."""
    return sorted((p.tobytes(), int(y)) for p, y in zip(pixels, labels, strict=True))


def pixels_of(images):
    """Normalised (N, C, H, W) float32 back to (N, H, W, C) uint8."""
    return np.rint((images + 1) * 127.5).astype(np.uint8).transpose(0, 2, 3, 1)


def test_prepared_tfds_copy_is_read_without_tensorflow(tmp_path, without_tensorflow):
    cifar_splits = seeded_splits((32, 32, 3), seed=1)
    mnist_splits = seeded_splits((28, 28, 1), seed=2)
    folder = prepare(cifar.Cifar10, cifar_splits, fetch.TFDS_DATA_DIR)
    prepare(mnist.MNIST, mnist_splits, fetch.TFDS_DATA_DIR)
    assert sorted(p.name for p in folder.iterdir()) == [
        "cifar10-test.array_record-00000-of-00001",
        "cifar10-train.array_record-00000-of-00001",
        "dataset_info.json",
        "features.json",
    ]

    cifar10 = load("cifar10", "train", tmp_path)
    digits = load("mnist", "test", tmp_path)

    assert cifar10.images.shape == (5, 3, 32, 32) and cifar10.images.dtype == np.float32
    assert as_rows(pixels_of(cifar10.images), cifar10.labels) == as_rows(
        *cifar_splits["train"]
    )
    assert digits.images.shape == (3, 1, 32, 32)
    assert (digits.images[:, :, :2] == -1).all() and (
        digits.images[..., -2:] == -1
    ).all()
    padded = np.pad(mnist_splits["test"][0], ((0, 0), (2, 2), (2, 2), (0, 0)))
    assert as_rows(pixels_of(digits.images), digits.labels) == as_rows(
        padded, mnist_splits["test"][1]
    )
    assert not list(tmp_path.iterdir())  # nothing written to the data folder


def test_tfds_order_is_kept(without_tensorflow):
    prepare(cifar.Cifar10, seeded_splits((32, 32, 3)), fetch.TFDS_DATA_DIR)
    source = tfds.data_source("cifar10", split="test", data_dir=fetch.TFDS_DATA_DIR)
    images, labels = fetch.tfds_arrays("cifar10", "test", download=False)
    np.testing.assert_array_equal(images, np.stack([ex["image"] for ex in source]))
    np.testing.assert_array_equal(labels, [ex["label"] for ex in source])
    assert labels.dtype == np.int32


def test_no_tfds_copy_means_none_and_load_says_how_to_provide(
    tmp_path, without_tensorflow
):
    assert fetch.tfds_arrays("cifar10", "train", download=False) is None
    with pytest.raises(FileNotFoundError, match="tfds build cifar10"):
        load("cifar10", "train", tmp_path)


def test_damaged_tfds_copy_is_a_value_error_naming_tfds_and_folder(
    tmp_path, without_tensorflow
):
    folder = prepare(cifar.Cifar10, seeded_splits((32, 32, 3)), fetch.TFDS_DATA_DIR)
    records = folder / "cifar10-train.array_record-00000-of-00001"
    records.write_bytes(records.read_bytes()[:100])  # truncated
    with pytest.raises(ValueError, match="tensorflow-datasets") as caught:
        load("cifar10", "train", tmp_path)
    assert str(folder) in str(caught.value)


def test_tfds_copy_with_wrong_shapes_is_a_value_error(tmp_path, without_tensorflow):
    # MNIST-shaped images in a folder tfds reads as cifar10.
    folder = prepare(mnist.MNIST, seeded_splits((28, 28, 1)), fetch.TFDS_DATA_DIR)
    cifar10_folder = folder.parent.parent / "cifar10" / "3.0.2"
    cifar10_folder.parent.mkdir()
    folder.rename(cifar10_folder)
    for path in cifar10_folder.glob("mnist-*"):
        path.rename(path.with_name(path.name.replace("mnist", "cifar10")))
    info = cifar10_folder / "dataset_info.json"
    info.write_text(
        info.read_text().replace('"mnist"', '"cifar10"').replace("3.0.1", "3.0.2")
    )
    with pytest.raises(ValueError, match="tensorflow-datasets") as caught:
        load("cifar10", "test", tmp_path)
    assert str(cifar10_folder) in str(caught.value)


def test_unreadable_tfds_dataset_info_is_a_value_error(tmp_path, without_tensorflow):
    folder = prepare(cifar.Cifar10, seeded_splits((32, 32, 3)), fetch.TFDS_DATA_DIR)
    (folder / "dataset_info.json").write_text("{not json")
    with pytest.raises(ValueError, match="tensorflow-datasets") as caught:
        load("cifar10", "train", tmp_path)
    assert fetch.TFDS_DATA_DIR in str(caught.value)


def test_tfds_copy_only_tensorflow_reads_is_none_with_a_warning(without_tensorflow):
    folder = prepare(cifar.Cifar10, seeded_splits((32, 32, 3)), fetch.TFDS_DATA_DIR)
    info = folder / "dataset_info.json"
    info.write_text(info.read_text().replace('"array_record"', '"tfrecord"'))
    with pytest.warns(UserWarning, match="only TensorFlow reads"):
        assert fetch.tfds_arrays("cifar10", "train", download=False) is None


def test_prepared_tfds_copy_is_read_with_tensorflow(tmp_path):
    pytest.importorskip("tensorflow")
    assert fetch.have_tensorflow()
    cifar_splits = seeded_splits((32, 32, 3), seed=3)
    prepare(cifar.Cifar10, cifar_splits, fetch.TFDS_DATA_DIR, file_format="tfrecord")
    cifar10 = load("cifar10", "train", tmp_path)
    assert cifar10.images.shape == (5, 3, 32, 32)
    assert as_rows(pixels_of(cifar10.images), cifar10.labels) == as_rows(
        *cifar_splits["train"]
    )
    assert not list(tmp_path.iterdir())
