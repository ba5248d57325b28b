"""Blitz 4, Training a classifier: ``torchvision.datasets.VisionDataset``.

What every torchvision dataset shares: ``root``, ``transform`` and
``target_transform`` (wrapped in a ``StandardTransform``), the ``__repr__`` that
prints them, and, here, the error for a dataset that is not on disk. Nothing is
ever downloaded: ``download=True`` uses the files when they are already there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jaxblitz.compat.utils.data import Dataset


class StandardTransform:
    """torchvision's pair of ``transform`` (on the input) and ``target_transform``."""

    def __init__(self, transform: Any = None, target_transform: Any = None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> tuple[Any, Any]:
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def _format_transform_repr(self, transform: Any, head: str) -> list[str]:
        lines = transform.__repr__().splitlines()
        return [f"{head}{lines[0]}"] + [f"{' ' * len(head)}{li}" for li in lines[1:]]

    def __repr__(self) -> str:
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format_transform_repr(
                self.target_transform, "Target transform: "
            )
        return "\n".join(body)


class VisionDataset(Dataset):
    """``torchvision.datasets.VisionDataset``: root and transforms, and the repr."""

    _repr_indent = 4

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        transforms: Any = None,
        transform: Any = None,
        target_transform: Any = None,
    ) -> None:
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate = transform is not None or target_transform is not None
        if has_transforms and has_separate:
            raise ValueError(
                "Only transforms or transform/target_transform can be passed as "
                "argument"
            )
        self.transform = transform
        self.target_transform = target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def _transformed(self, img: Any, target: Any) -> tuple[Any, Any]:
        """``(img, target)`` through ``transform`` and ``target_transform``."""
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)


class ImageDataset(VisionDataset):
    """A split of images: ``_sample(index)`` gives ``(PIL image, target)``, then
    ``transform`` and ``target_transform`` apply, as torchvision's datasets do."""

    train: bool

    def _sample(self, index: int) -> tuple[Any, Any]:
        raise NotImplementedError

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        return self._transformed(*self._sample(index))

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        split = "Train" if self.train is True else "Test"
        return f"Split: {split}"


def not_found(
    name: str,
    folder: Path,
    files: list[str],
    url: str,
    download: bool,
    alternative: str = "",
) -> RuntimeError:
    """torchvision's "Dataset not found" RuntimeError, saying what to put where.

    torchvision downloads with ``download=True``; jaxblitz never touches the
    network here, so either way the files must already be on disk.
    """
    listed = ", ".join(files)
    why = (
        "download=True does not download in jaxblitz.compat (no network access); "
        if download
        else "You can use download=True to download it with torchvision; "
    )
    return RuntimeError(
        f"Dataset not found or corrupted. {name} needs {listed} in {folder}"
        f"{alternative}. "
        f"{why}fetch them from {url} and put them there."
    )
