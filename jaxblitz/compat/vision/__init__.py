"""Blitz 4, Training a classifier: ``torchvision`` stand-ins -- ``datasets``
(CIFAR10, MNIST, FashionMNIST, Digits, ImageFolder), ``io``, ``transforms``,
``utils.make_grid`` and ``models.resnet18``, read from torchvision's on-disk
layouts, never downloaded.

    import jaxblitz.compat.vision as torchvision
    import jaxblitz.compat.vision.transforms as transforms
"""

from jaxblitz.compat.vision import datasets, io, transforms, utils

__all__ = ["datasets", "io", "models", "transforms", "utils"]


def __getattr__(name: str):
    if name == "models":  # imported on first use: it builds on compat.nn
        import importlib

        return importlib.import_module("jaxblitz.compat.vision.models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
