"""compat.vision: torchvision's CIFAR10 over jaxblitz.data, transforms, Digits."""

import numpy as np

import jaxblitz.compat as torch
from jaxblitz.compat.utils.data import DataLoader
from jaxblitz.compat.vision import datasets, transforms
from tests.test_data import cifar_arrays, write_python_archive

TRANSFORM = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
)


def test_cifar10_reads_torchvisions_archive_from_root(tmp_path):
    arrays = cifar_arrays()
    write_python_archive(tmp_path, arrays)
    train = datasets.CIFAR10(root=str(tmp_path), train=True, transform=TRANSFORM)
    test = datasets.CIFAR10(root=str(tmp_path), train=False, transform=TRANSFORM)
    pixels = np.concatenate([p for p, _ in arrays["train"]])  # (12, 3, 32, 32) uint8
    labels = np.concatenate([y for _, y in arrays["train"]])
    assert (len(train), len(test)) == (12, 5)
    np.testing.assert_array_equal(train.data, pixels.transpose(0, 2, 3, 1))
    assert train.targets == labels.tolist()
    image, label = train[3]
    assert tuple(image.shape) == (3, 32, 32) and image.dtype == torch.float32
    np.testing.assert_allclose(image.numpy(), pixels[3] / 127.5 - 1, atol=1e-6)
    assert label == labels[3]
    images, batch_labels = next(iter(DataLoader(train, batch_size=4)))
    assert tuple(images.shape) == (4, 3, 32, 32)
    assert batch_labels.tolist() == labels[:4].tolist()


def test_digits_stand_in_has_cifars_shapes_and_the_cores_split():
    from jaxblitz import data

    train = datasets.Digits(train=True, transform=TRANSFORM)
    test = datasets.Digits(train=False)
    assert (len(train), len(test)) == (1438, 359)
    assert train.data.shape == (1438, 32, 32, 3) and train.data.dtype == np.uint8
    core = data.load("digits", "train")
    image, label = train[0]
    np.testing.assert_allclose(  # the stand-in is uint8, like a PIL image
        image.numpy()[0], core.images[0, 0], atol=1.01 / 255
    )
    assert label == core.labels[0]
