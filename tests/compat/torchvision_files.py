"""Small datasets and weight files in the layouts torchvision leaves on disk."""

from __future__ import annotations

import importlib.util
import pickle
import struct
from pathlib import Path

import numpy as np

CIFAR_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
               "horse", "ship", "truck"]  # fmt: skip


def write_idx(path: Path, array: np.ndarray) -> None:
    """An uncompressed idx file (the ``raw/`` files torchvision extracts)."""
    magic = 0x0800 + array.ndim  # unsigned bytes, then the number of dimensions
    header = struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def write_mnist(root: Path, n_train: int, n_test: int, folder: str = "MNIST") -> None:
    """``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``; every class
    appears in each split."""
    raw = root / folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for stem, n in (("train", n_train), ("t10k", n_test)):
        labels = np.arange(n) % 10
        images = rng.integers(0, 256, (n, 28, 28))
        write_idx(raw / f"{stem}-images-idx3-ubyte", images)
        write_idx(raw / f"{stem}-labels-idx1-ubyte", labels)


def write_cifar10(root: Path, per_batch: int, n_test: int) -> None:
    """``root/cifar-10-batches-py/``: five training batches, the test batch and
    ``batches.meta``, pickled with bytes keys as the real files are."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name in names:
        n = n_test if name == "test_batch" else per_batch
        batch = {
            b"batch_label": name.encode(),
            b"labels": [int(k % 10) for k in range(n)],
            b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            b"filenames": [f"{k}.png".encode() for k in range(n)],
        }
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    meta = {b"label_names": [n.encode() for n in CIFAR_NAMES], b"num_vis": 3072}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))


def resnet18_shapes() -> dict[str, tuple[int, ...]]:
    """torchvision's resnet18 ``state_dict``: names and shapes."""
    shapes: dict[str, tuple[int, ...]] = {"conv1.weight": (64, 3, 7, 7)}

    def bn(prefix: str, n: int) -> None:
        for key in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{prefix}.{key}"] = (n,)
        shapes[f"{prefix}.num_batches_tracked"] = ()

    bn("bn1", 64)
    width = 64
    for layer, out in enumerate((64, 128, 256, 512), start=1):
        for block in (0, 1):
            p = f"layer{layer}.{block}"
            first = width if block == 0 else out
            shapes[f"{p}.conv1.weight"] = (out, first, 3, 3)
            bn(f"{p}.bn1", out)
            shapes[f"{p}.conv2.weight"] = (out, out, 3, 3)
            bn(f"{p}.bn2", out)
            if block == 0 and layer > 1:
                shapes[f"{p}.downsample.0.weight"] = (out, width, 1, 1)
                bn(f"{p}.downsample.1", out)
        width = out
    shapes["fc.weight"], shapes["fc.bias"] = (1000, 512), (1000,)
    return shapes


def write_resnet18_weights(torch_home: Path) -> Path:
    """torchvision's cache file ``$TORCH_HOME/hub/checkpoints/resnet18-f37072fd.pth``
    with small random weights, written by real PyTorch where it is installed."""
    rng = np.random.default_rng(2)
    arrays = {}
    for name, shape in resnet18_shapes().items():
        if name.endswith("num_batches_tracked"):
            arrays[name] = np.array(0, np.int64)
        elif name.endswith("running_var"):
            arrays[name] = np.ones(shape, np.float32)
        else:
            arrays[name] = (rng.standard_normal(shape) * 0.05).astype(np.float32)
    path = torch_home / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    path.parent.mkdir(parents=True, exist_ok=True)
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.save({k: torch.from_numpy(v) for k, v in arrays.items()}, path)
    else:
        import jaxblitz.compat as compat

        compat.save({k: compat.from_numpy(v) for k, v in arrays.items()}, path)
    return path
