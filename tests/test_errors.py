"""Bad input across the public API: a clear error, never a traceback from XLA.

Each case names the call, the exception type and the words the message must hold:
what was received and what was expected (in compat, PyTorch's own wording, checked
against PyTorch 2.x where PyTorch has one).
"""

import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxblitz.compat as torch
import jaxblitz.compat.nn.functional as F
import jaxblitz.nnx
from jaxblitz import cli, data, evaluate, models, parallel, plots, train
from jaxblitz.checkpoints import load_weights, save_weights
from jaxblitz.compat import nn, optim
from jaxblitz.compat.utils.data import DataLoader, TensorDataset


class Data(NamedTuple):
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]


def _params(channels: int = 3):
    return models.init_lenet(jax.random.key(0), channels)


def _images(*shape, dtype=jnp.float32):
    return jnp.zeros(shape, dtype)


def _digits(n: int = 8, labels=None, images=None) -> Data:
    x = np.zeros((n, 1, 32, 32), np.float32) if images is None else images
    y = np.arange(n, dtype=np.int32) % 10 if labels is None else labels
    return Data(x, np.asarray(y), tuple("0123456789"))


def _fit(dataset: Data):
    return train.fit(train.Config(dataset="digits", epochs=1), dataset, log=print)


def _load_weights_like(tmp_path, flat: dict) -> None:
    path = tmp_path / "w.safetensors"
    params = _params(1)
    named = {k: np.asarray(v) for k, v in models.flatten_params(params).items()}
    named.update(flat)
    save_weights(
        models.unflatten_params({k: v for k, v in named.items() if v is not None}), path
    )
    load_weights(path, like=params)


def _cli(*flags):
    return cli.main(["--dataset", "digits", "--no-progress", *flags])


# (id, call, exception, message regex). ``call`` takes pytest's tmp_path.
CASES = [
    # -- lenet and the core's layers and losses ---------------------------------
    ("lenet-unbatched", lambda t: models.lenet(_params(), _images(3, 32, 32)),
     ValueError, r"got shape \(3, 32, 32\).*x\[None\].*unsqueeze\(0\)"),
    ("lenet-rank-5", lambda t: models.lenet(_params(), _images(1, 1, 3, 32, 32)),
     ValueError, r"shaped \(B, 3, 32, 32\); got shape \(1, 1, 3, 32, 32\)"),
    ("lenet-channels", lambda t: models.lenet(_params(), _images(2, 1, 32, 32)),
     ValueError, r"expects 3 input channel\(s\).*got 1 channel"),
    ("lenet-channels-last",
     lambda t: models.lenet(_params(), _images(2, 32, 32, 3)),
     ValueError, r"expects 3 input channel.*channels-last.*x\.transpose\(0, 3, 1, 2\)"),
    ("lenet-spatial", lambda t: models.lenet(_params(1), _images(2, 1, 28, 28)),
     ValueError, r"expects 32x32 images.*got 28x28.*Pad"),
    ("lenet-dtype", lambda t: models.lenet(_params(), _images(2, 3, 32, 32,
                                                               dtype=jnp.uint8)),
     TypeError, r"floating-point images; got dtype uint8"),
    ("lenet-not-array", lambda t: models.lenet(_params(), [[0.0]]),
     TypeError, r"expects an array \(B, 3, 32, 32\); got list"),
    ("lenet-impl", lambda t: models.lenet(_params(), _images(1, 3, 32, 32), "fft"),
     ValueError, r"impl must be None, 'im2col' or 'xla', got 'fft'"),
    ("init-lenet-widths", lambda t: models.init_lenet(jax.random.key(0), 3, (6,)),
     ValueError, r"widths must be two positive ints, got \(6,\)"),
    ("init-lenet-channels", lambda t: models.init_lenet(jax.random.key(0), 0),
     ValueError, r"in_channels must be >= 1, got 0"),
    ("cross-entropy-float-labels",
     lambda t: models.cross_entropy(jnp.zeros((2, 10)), jnp.zeros(2)),
     TypeError, r"integer class labels; got dtype float32"),
    ("cross-entropy-label-count",
     lambda t: models.cross_entropy(jnp.zeros((2, 10)), jnp.zeros(3, jnp.int32)),
     ValueError, r"labels shaped \(2,\).*got \(3,\)"),
    ("mse-shapes", lambda t: models.mse_loss(jnp.zeros((1, 10)), jnp.zeros(10)),
     ValueError, r"equal shapes.*\(1, 10\).*\(10,\)"),
    # -- training: config, data, labels ---------------------------------------------
    ("config-batch-size-0", lambda t: train.Config(batch_size=0),
     ValueError, r"batch_size must be >= 1, got 0"),
    ("config-batch-size-negative", lambda t: train.Config(batch_size=-4),
     ValueError, r"batch_size must be >= 1, got -4"),
    ("config-batch-size-float", lambda t: train.Config(batch_size=2.5),
     TypeError, r"batch_size must be an int, got float 2.5"),
    ("config-lr-negative", lambda t: train.Config(lr=-0.1),
     ValueError, r"lr must be > 0, got -0.1"),
    ("config-lr-nan", lambda t: train.Config(lr=float("nan")),
     ValueError, r"lr must be > 0, got nan"),
    ("config-lr-string", lambda t: train.Config(lr="0.1"),
     TypeError, r"lr must be a number, got str '0.1'"),
    ("config-momentum-1", lambda t: train.Config(momentum=1.0),
     ValueError, r"momentum must be in \[0, 1\), got 1.0"),
    ("config-optimizer", lambda t: train.Config(optimizer="lbfgs"),
     ValueError, r"optimizer must be one of \('sgd'.*got 'lbfgs'"),
    ("config-epochs-0", lambda t: train.Config(epochs=0),
     ValueError, r"epochs must be >= 1, got 0"),
    ("fit-label-out-of-range", lambda t: _fit(_digits(labels=[0, 1, 2, 3, 4, 5, 6,
                                                               10])),
     ValueError, r"class indices in \[0, 10\); got values from 0 to 10"),
    ("fit-label-negative", lambda t: _fit(_digits(labels=[-1, 1, 2, 3, 4, 5, 6, 7])),
     ValueError, r"in \[0, 10\); got values from -1 to 7"),
    ("fit-float-labels", lambda t: _fit(_digits(labels=np.zeros(8, np.float32))),
     TypeError, r"labels must be integer class indices; got float32"),
    ("fit-no-class-names",
     lambda t: _fit(Data(np.zeros((8, 1, 32, 32), np.float32), np.arange(8) % 10,
                         None)),
     TypeError, r"class_names must be a non-empty sequence.*got None"),
    ("fit-class-names-a-string",
     lambda t: _fit(Data(np.zeros((8, 1, 32, 32), np.float32), np.arange(8) % 10,
                         "0123456789")),
     TypeError, r"class_names must be a non-empty sequence.*got '0123456789'"),
    ("nnx-fit-no-class-names",
     lambda t: jaxblitz.nnx.fit(
         train.Config(dataset="digits", epochs=1),
         Data(np.zeros((8, 1, 32, 32), np.float32), np.arange(8) % 10, None)),
     TypeError, r"class_names must be a non-empty sequence.*got None"),
    ("fit-empty-dataset", lambda t: _fit(_digits(0)),
     ValueError, r"Cannot train on an empty dataset \(0 examples\)"),
    ("fit-images-labels-mismatch", lambda t: _fit(_digits(8, labels=np.arange(5))),
     ValueError, r"8 images but labels shaped \(5,\); expected \(8,\)"),
    ("fit-uint8-images", lambda t: _fit(_digits(images=np.zeros((8, 1, 32, 32),
                                                                 np.uint8))),
     TypeError, r"must be floating point.*got uint8.*normalize"),
    ("fit-28x28-images", lambda t: _fit(_digits(images=np.zeros((8, 1, 28, 28),
                                                                 np.float32))),
     ValueError, r"shaped \(N, C, 32, 32\); got \(8, 1, 28, 28\)"),
    ("evaluate-label-out-of-range",
     lambda t: evaluate.evaluate(_params(1), _digits(labels=np.full(8, 12))),
     ValueError, r"in \[0, 10\); got values from 12 to 12"),
    ("predict-batch-size-0",
     lambda t: evaluate.predict(_params(), np.zeros((5, 3, 32, 32), np.float32), 0),
     ValueError, r"predict: batch_size must be >= 1, got 0"),
    ("predict-batch-size-negative",
     lambda t: evaluate.predict(_params(), np.zeros((5, 3, 32, 32), np.float32), -1),
     ValueError, r"predict: batch_size must be >= 1, got -1"),
    ("predict-batch-size-float",
     lambda t: evaluate.predict(_params(), np.zeros((5, 3, 32, 32), np.float32), 2.0),
     TypeError, r"predict: batch_size must be an int, got float 2.0"),
    ("evaluate-batch-size-0",
     lambda t: evaluate.evaluate(_params(1), _digits(), batch_size=0),
     ValueError, r"predict: batch_size must be >= 1, got 0"),
    ("loss-curve-no-epochs", lambda t: plots.save_loss_curve([], t / "loss.png"),
     ValueError, r"save_loss_curve: no losses to plot"),
    ("loss-curve-empty-epochs",
     lambda t: plots.save_loss_curve([[], []], t / "loss.png"),
     ValueError, r"save_loss_curve: no losses to plot"),
    ("drop-last-empty",
     lambda t: data.epoch_order(jax.random.key(0), 3, 4, drop_last=True),
     ValueError, r"batch_size 4 > 3 examples leaves no batch"),
    # -- datasets ---------------------------------------------------------------------
    ("dataset-unknown", lambda t: data.load("imagenet", "train", t),
     ValueError, r"unknown dataset 'imagenet'; expected one of \('cifar10'"),
    ("dataset-split", lambda t: data.load("digits", "valid"),
     ValueError, r"unknown split 'valid' of digits"),
    ("batches-size-0", lambda t: data.batches(_digits(), 0, jax.random.key(0)),
     ValueError, r"batch_size must be positive, got 0"),
    ("batches-size-negative", lambda t: data.batches(_digits(), -1, jax.random.key(0)),
     ValueError, r"batch_size must be positive, got -1"),
    ("batches-no-key", lambda t: data.batches(_digits(), 4),
     ValueError, r"needs a key.*jax.random.key\(0\)"),
    ("batches-mismatch", lambda t: data.batches(_digits(8, labels=np.arange(3)), 2,
                                                shuffle=False),
     ValueError, r"dataset has 8 images but 3 labels"),
    # -- devices -----------------------------------------------------------------------
    ("devices-too-many", lambda t: parallel.make_mesh(len(jax.devices()) + 63),
     ValueError, r"Asked for \d+ devices but \d+ CPU device\(s\) are available"),
    ("devices-zero", lambda t: parallel.make_mesh(0),
     ValueError, r"devices must be a positive int or 'all', got 0"),
    ("shard-sizes-no-shards", lambda t: parallel.shard_sizes(4, 0),
     ValueError, r"num_shards >= 1, got 4 and 0"),
    ("shard-sizes-negative-batch", lambda t: parallel.shard_sizes(-4, 2),
     ValueError, r"batch_size >= 0 .* got -4 and 2"),
    ("devices-not-a-number", lambda t: parallel.make_mesh("many"),
     ValueError, r"devices must be a positive int or 'all', got 'many'"),
    # -- weights: missing, extra, mis-shaped keys ------------------------------------
    ("weights-missing-key",
     lambda t: _load_weights_like(t, {"fc3.bias": None}),
     ValueError, r"missing keys \['fc3.bias'\], unexpected keys \[\]"),
    ("weights-extra-key",
     lambda t: _load_weights_like(t, {"fc4.weight": np.zeros((2, 2), np.float32)}),
     ValueError, r"missing keys \[\], unexpected keys \['fc4.weight'\]"),
    ("weights-misshaped",
     lambda t: _load_weights_like(t, {"fc3.weight": np.zeros((5, 84), np.float32)}),
     ValueError, r"fc3.weight: file has \(5, 84\), model expects \(10, 84\)"),
    ("weights-missing-file", lambda t: load_weights(t / "nope.safetensors"),
     FileNotFoundError, r"nope.safetensors"),
    ("state-dict-missing", lambda t: nn.Linear(2, 2).load_state_dict(
        {"weight": torch.zeros(2, 2)}),
     RuntimeError, r'loading state_dict for Linear:\n\tMissing key\(s\) in '
                   r'state_dict: "bias"'),
    ("state-dict-unexpected", lambda t: nn.Linear(2, 2).load_state_dict(
        {"weight": torch.zeros(2, 2), "bias": torch.zeros(2), "scale": torch.ones(1)}),
     RuntimeError, r'Unexpected key\(s\) in state_dict: "scale"'),
    ("state-dict-misshaped", lambda t: nn.Linear(2, 2).load_state_dict(
        {"weight": torch.zeros(3, 2), "bias": torch.zeros(2)}),
     RuntimeError, r"size mismatch for weight: copying a param with shape "
                   r"torch.Size\(\[3, 2\]\) from checkpoint, the shape in current "
                   r"model is torch.Size\(\[2, 2\]\)"),
    # -- compat layers, in PyTorch's words -------------------------------------------
    ("conv2d-channels", lambda t: nn.Conv2d(3, 6, 5)(torch.zeros(1, 1, 32, 32)),
     RuntimeError, r"weight of size \[6, 3, 5, 5\], expected input\[1, 1, 32, 32\] "
                   r"to have 3 channels, but got 1 channels instead"),
    ("conv2d-rank", lambda t: nn.Conv2d(3, 6, 5)(torch.zeros(32, 32)),
     RuntimeError, r"input to conv2d, but got input of size: \[32, 32\]"),
    ("conv2d-too-small", lambda t: nn.Conv2d(3, 6, 5)(torch.zeros(1, 3, 4, 4)),
     RuntimeError, r"padded input size per channel: \(4 x 4\). Kernel size: "
                   r"\(5 x 5\). Kernel size can't be greater than actual input size"),
    ("maxpool-too-small", lambda t: nn.MaxPool2d(2)(torch.zeros(1, 3, 1, 1)),
     RuntimeError, r"Given input size: \(3x1x1\). Calculated output size: "
                   r"\(3x0x0\). Output size is too small"),
    ("linear-in-features", lambda t: nn.Linear(4, 3)(torch.zeros(2, 5)),
     RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 4x3\)"),
    ("linear-dtype", lambda t: nn.Linear(4, 3)(torch.zeros(2, 4, dtype=torch.long)),
     RuntimeError, r"mat1 and mat2 must have the same dtype, but got Long and Float"),
    ("cross-entropy-target-out-of-range",
     lambda t: nn.CrossEntropyLoss()(torch.zeros(3, 10), torch.tensor([0, 1, 10])),
     IndexError, r"Target 10 is out of bounds"),
    ("cross-entropy-target-negative",
     lambda t: nn.CrossEntropyLoss()(torch.zeros(3, 10), torch.tensor([0, -1, 2])),
     IndexError, r"Target -1 is out of bounds"),
    ("nll-target-out-of-range",
     lambda t: F.nll_loss(torch.zeros(2, 10), torch.tensor([3, 11])),
     IndexError, r"Target 11 is out of bounds"),
    ("cross-entropy-float-target",
     lambda t: nn.CrossEntropyLoss()(torch.zeros(3, 10), torch.zeros(3)),
     RuntimeError, r"expected target dtype to be Long or Byte, but got Float"),
    ("cross-entropy-batch", lambda t: F.cross_entropy(torch.zeros(3, 10),
                                                      torch.tensor([1, 2])),
     ValueError, r"Expected input batch_size \(3\) to match target batch_size \(2\)"),
    ("dropout-p", lambda t: nn.Dropout(1.5),
     ValueError, r"dropout probability has to be between 0 and 1, but got 1.5"),
    # -- compat tensors and autograd -------------------------------------------------
    ("broadcast", lambda t: torch.ones(2, 3) + torch.ones(4, 3),
     RuntimeError, r"size of tensor a \(2\) must match the size of tensor b \(4\) at "
                   r"non-singleton dimension 0"),
    ("view", lambda t: torch.ones(2, 3).view(4, 2),
     RuntimeError, r"shape '\[4, 2\]' is invalid for input of size 6"),
    ("sum-dim", lambda t: torch.ones(2, 3).sum(dim=3),
     IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], "
                 r"but got 3\)"),
    ("softmax-dim", lambda t: F.softmax(torch.ones(2, 3), dim=-3),
     IndexError, r"range of \[-2, 1\], but got -3"),
    ("unsqueeze-dim", lambda t: torch.ones(2, 3).unsqueeze(5),
     IndexError, r"range of \[-3, 2\], but got 5"),
    ("transpose-dim", lambda t: torch.ones(2, 3).transpose(0, 2),
     IndexError, r"range of \[-2, 1\], but got 2"),
    ("argmax-dim", lambda t: torch.ones(2, 3).argmax(dim=2),
     IndexError, r"range of \[-2, 1\], but got 2"),
    ("permute-duplicate", lambda t: torch.ones(2, 3).permute(0, 0),
     RuntimeError, r"permute\(\): duplicate dims are not allowed"),
    ("cat-sizes", lambda t: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]),
     RuntimeError, r"Sizes of tensors must match except in dimension 0. Expected "
                   r"size 3 but got size 4 for tensor number 1 in the list"),
    ("negative-size", lambda t: torch.randn(-1, 3),
     RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1, 3\]"),
    ("item-of-many", lambda t: torch.ones(3).item(),
     RuntimeError, r"a Tensor with 3 elements cannot be converted to Scalar"),
    ("backward-non-scalar",
     lambda t: (torch.ones(3, requires_grad=True) * 2).backward(),
     RuntimeError, r"grad can be implicitly created only for scalar outputs"),
    ("backward-no-grad", lambda t: torch.ones(3).sum().backward(),
     RuntimeError, r"element 0 of tensors does not require grad and does not have "
                   r"a grad_fn"),
    ("index-out-of-range", lambda t: torch.ones(2, 3)[5],
     IndexError, r"index 5 is out of bounds for dimension 0 with size 2"),
    # -- compat optimizers and data ---------------------------------------------------
    ("sgd-lr", lambda t: optim.SGD(nn.Linear(2, 2).parameters(), lr=-1),
     ValueError, r"Invalid learning rate: -1"),
    ("sgd-momentum", lambda t: optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1,
                                         momentum=-0.5),
     ValueError, r"Invalid momentum value: -0.5"),
    ("adam-beta", lambda t: optim.Adam(nn.Linear(2, 2).parameters(), betas=(1.5, 0.9)),
     ValueError, r"Invalid beta parameter at index 0: 1.5"),
    ("optimizer-empty", lambda t: optim.SGD([], lr=0.1),
     ValueError, r"optimizer got an empty parameter list"),
    ("dataloader-batch-size-0",
     lambda t: DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=0),
     ValueError, r"batch_size should be a positive integer value, but got "
                 r"batch_size=0"),
    ("tensor-dataset-sizes", lambda t: TensorDataset(torch.ones(4, 2), torch.ones(3)),
     AssertionError, r"Size mismatch between tensors"),
]  # fmt: skip

CLI_CASES = [
    (["--batch-size", "0"], r"batch_size must be >= 1, got 0"),
    (["--batch-size", "four"], r"argument --batch-size: invalid int value: 'four'"),
    (["--epochs", "0"], r"epochs must be >= 1, got 0"),
    (["--momentum", "1"], r"momentum must be in \[0, 1\), got 1.0"),
    (["--lr", "-0.01"], r"lr must be > 0, got -0.01"),
    (["--lr", "nan"], r"lr must be > 0, got nan"),
    (["--dataset", "imagenet"], r"argument --dataset: invalid choice: 'imagenet'"),
    (["--loop", "vmap"], r"argument --loop: invalid choice: 'vmap'"),
    (["--checkpoint-every", "-1"], r"checkpoint_every must be >= 0, got -1"),
    (["--widths", "6,x"], r"expected two positive ints like 6,16.*got '6,x'"),
    (["--devices", "64"], r"Asked for 64 devices but 1 CPU device\(s\) are available"),
    (["--devices", "0"], r"devices must be a positive int or 'all', got 0"),
    (["--epoch", "3", "--frobnicate"], r"unrecognized arguments: --frobnicate"),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_gets_a_clear_error(call, error, message, tmp_path):
    with pytest.raises(error) as info:
        call(tmp_path)
    assert re.search(message, str(info.value)), str(info.value)
    # Raised by jaxblitz (or argparse/Python itself), not from inside JAX or XLA.
    origin = info.traceback[-1].path
    assert "jax/_src" not in str(origin) and "jaxlib" not in str(origin), origin


@pytest.mark.parametrize(
    ("flags", "message"), CLI_CASES, ids=[" ".join(f) for f, _ in CLI_CASES]
)
def test_bad_cli_flags_exit_2_with_usage_and_no_traceback(flags, message, capsys):
    with pytest.raises(SystemExit) as info:
        _cli(*flags)
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith("usage: jaxblitz-train")
    assert re.search(message, err), err
    assert "Traceback" not in err
