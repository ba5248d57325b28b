"""The implementation modules scripts import from (torch.nn.modules.loss,
torch.utils.data.dataloader, torch.nn.grad, torch.backends.mkldnn...) are there
in compat, each name offered or refused by name, and what they offer behaves
as torch's does."""

import importlib
import sys
import warnings

import numpy as np
import pytest

from jaxblitz.compat._not_offered import NotOffered

pt = pytest.importorskip("torch")
import jaxblitz.compat as torch  # noqa: E402

NN_MODULES = [
    "activation",
    "adaptive",
    "batchnorm",
    "channelshuffle",
    "container",
    "conv",
    "distance",
    "dropout",
    "flatten",
    "fold",
    "instancenorm",
    "lazy",
    "linear",
    "loss",
    "module",
    "normalization",
    "padding",
    "pixelshuffle",
    "pooling",
    "rnn",
    "sparse",
    "transformer",
    "upsampling",
    "utils",
]


def _modules(name: str):
    """compat's module and torch's, by torch's dotted name."""
    ours = importlib.import_module("jaxblitz.compat" + name.removeprefix("torch"))
    importlib.import_module(name)
    return ours, sys.modules[name]


@pytest.mark.parametrize(
    "name",
    ["torch.nn.modules", *(f"torch.nn.modules.{s}" for s in NN_MODULES)]
    + [f"torch.utils.data.{s}" for s in ("dataset", "sampler", "dataloader")]
    + ["torch.utils.data.distributed", "torch.optim.lr_scheduler"],
)
def test_each_name_of_a_module_scripts_import_from_is_offered_or_refused(name):
    ours, theirs = _modules(name)
    unexplained = []
    for attr in theirs.__all__:
        try:
            getattr(ours, attr)
        except NotOffered as e:
            assert f"{name}.{attr} is not supported by jaxblitz.compat: " in str(e)
        except AttributeError:
            unexplained.append(attr)
    assert not unexplained


@pytest.mark.parametrize(
    ("name", "attrs"),
    [
        ("torch.nn.modules.loss", "_Loss _WeightedLoss"),
        ("torch.nn.modules.conv", "_ConvNd _ConvTransposeNd"),
        ("torch.nn.modules.batchnorm", "_BatchNorm _NormBase SyncBatchNorm"),
        ("torch.nn.modules.rnn", "RNNBase"),
        ("torch.nn.modules.pooling", "_MaxPoolNd _AvgPoolNd"),
        ("torch.nn.modules.module", "Module"),
        ("torch.nn.modules.container", "Sequential"),
    ],
)
def test_torchs_private_base_classes_are_compats_layers_bases(name, attrs):
    ours, theirs = _modules(name)
    for attr in attrs.split():
        assert getattr(ours, attr).__name__ == getattr(theirs, attr).__name__
    assert issubclass(torch.nn.MSELoss, _modules("torch.nn.modules.loss")[0]._Loss)
    assert issubclass(torch.nn.Conv2d, _modules("torch.nn.modules.conv")[0]._ConvNd)


def test_the_tuple_helpers_answer_as_torchs():
    ours, theirs = _modules("torch.nn.modules.utils")
    for helper in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4, 5, 6], range(2)):
            assert getattr(ours, helper)(arg) == getattr(theirs, helper)(arg)
    assert ours._reverse_repeat_tuple((1, 2), 2) == theirs._reverse_repeat_tuple(
        (1, 2), 2
    )
    assert ours._list_with_default([None, 3], [8, 9, 10]) == [9, 3]
    assert theirs._list_with_default([None, 3], [8, 9, 10]) == [9, 3]


def test_consume_prefix_strips_keys_and_metadata_as_torchs():
    from collections import OrderedDict

    ours, theirs = _modules("torch.nn.modules.utils")
    results = []
    for module in (ours, theirs):
        state = OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
        state._metadata = {"": {}, "module": {"v": 1}, "module.c": {"v": 2}}
        module.consume_prefix_in_state_dict_if_present(state, "module.")
        results.append((list(state.items()), state._metadata))
    assert results[0] == results[1]
    assert results[0][0] == [("b", 2), ("a", 1), ("c.d", 3)]


def test_a_refused_layer_is_refused_from_its_implementation_module_too():
    from jaxblitz.compat.nn import modules

    with pytest.raises(NotImplementedError, match="fused linear"):
        modules.LinearCrossEntropyLoss  # noqa: B018 -- reading the name is the test
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        modules.Nope  # noqa: B018


def test_the_data_modules_hold_the_loaders_classes():
    from jaxblitz.compat.utils.data.dataloader import DataLoader, default_collate
    from jaxblitz.compat.utils.data.dataset import Dataset
    from jaxblitz.compat.utils.data.sampler import BatchSampler

    assert DataLoader is torch.utils.data.DataLoader
    assert Dataset is torch.utils.data.Dataset
    assert BatchSampler is torch.utils.data.BatchSampler
    batch = default_collate([(np.float32(1.0), 2), (np.float32(3.0), 4)])
    assert batch[0].tolist() == [1.0, 3.0] and batch[1].tolist() == [2, 4]


def test_datapipes_are_refused_saying_why():
    with pytest.raises(NotImplementedError, match="DataPipes"):
        torch.utils.data.IterDataPipe  # noqa: B018


@pytest.mark.parametrize("n", [1, 2, 3])
def test_nn_grad_gives_torchs_input_and_weight_gradients(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 4, *(7,) * n)).astype(np.float32)
    w = rng.standard_normal((6, 2, *(3,) * n)).astype(np.float32)
    settings = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    conv = getattr(pt.nn.functional, f"conv{n}d")
    out = conv(pt.tensor(x), pt.tensor(w), **settings)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    name = f"conv{n}d"
    want_x = getattr(pt.nn.grad, f"{name}_input")(
        x.shape, pt.tensor(w), pt.tensor(g), **settings
    )
    want_w = getattr(pt.nn.grad, f"{name}_weight")(
        pt.tensor(x), w.shape, pt.tensor(g), **settings
    )
    got_x = getattr(torch.nn.grad, f"{name}_input")(
        x.shape, torch.tensor(w), torch.tensor(g), **settings
    )
    got_w = getattr(torch.nn.grad, f"{name}_weight")(
        torch.tensor(x), w.shape, torch.tensor(g), **settings
    )
    np.testing.assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-5, atol=1e-4)
    assert not got_x.requires_grad and not got_w.requires_grad


def test_nn_grad_is_differentiable_in_the_weight_as_torchs():
    x = np.linspace(-1, 1, 25, dtype=np.float32).reshape(1, 1, 25)
    w = np.array([[[0.5, -1.0, 2.0]]], np.float32)
    g = np.linspace(0, 1, 23, dtype=np.float32).reshape(1, 1, 23)
    grads = []
    for lib in (pt, torch):
        weight = lib.tensor(w, requires_grad=True)
        lib.nn.grad.conv1d_input(x.shape, weight, lib.tensor(g)).pow(2).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_sync_batch_norm_is_batch_norm_in_one_process_as_torchs(training):
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    results = []
    for lib in (pt, torch):
        m = lib.nn.SyncBatchNorm(3, momentum=None)
        m.train(training)
        y = m(lib.tensor(x))
        results.append((y.detach().numpy(), m.running_mean.numpy(), repr(m)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)
    assert results[1][2] == results[0][2]


def test_sync_batch_norm_checks_its_input_as_torchs():
    for lib in (pt, torch):
        with pytest.raises(ValueError, match=r"^expected at least 2D input \(got 1D"):
            lib.nn.SyncBatchNorm(3)(lib.zeros(3))
        with pytest.raises(ValueError, match="number of input channels should be"):
            lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0))


def test_convert_sync_batchnorm_swaps_each_batch_norm_keeping_its_tensors():
    net = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.Linear(2, 2))
    weight = net[0].weight
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    theirs = pt.nn.SyncBatchNorm.convert_sync_batchnorm(
        pt.nn.Sequential(pt.nn.BatchNorm2d(3), pt.nn.Linear(2, 2))
    )
    assert repr(converted) == repr(theirs)
    assert converted[0].weight is weight


def test_container_warns_as_torchs_and_adds_its_children():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = torch.nn.Container(a=torch.nn.Linear(1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(c) == repr(pt.nn.Container(a=pt.nn.Linear(1, 1)))


@pytest.mark.parametrize("n", [2, 3])
def test_convert_conv_weight_memory_format_gives_torchs_strides(n):
    strides = []
    for lib in (pt, torch):
        conv = getattr(lib.nn, f"Conv{n}d")(4, 6, 3)
        fmt = lib.channels_last if n == 2 else lib.channels_last_3d
        before = conv.weight.detach().numpy().copy()
        convert = getattr(lib.nn.utils, f"convert_conv{n}d_weight_memory_format")
        net = lib.nn.Sequential(conv)
        assert convert(net, fmt) is net
        np.testing.assert_array_equal(conv.weight.detach().numpy(), before)
        strides.append(conv.weight.stride())
    assert strides[0] == strides[1]


def test_cpu_library_backends_answer_for_compats_kernels():
    b = torch.backends
    assert not b.mkl.is_available() and not b.mkldnn.is_available()
    assert not b.nnpack.is_available() and not b.openmp.is_available()
    assert b.opt_einsum.is_available() and b.opt_einsum.strategy == "auto"
    assert b.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    # the flags' defaults are torch's CPU build's
    assert b.mkldnn.enabled == pt.backends.mkldnn.enabled
    assert b.mkldnn.deterministic == pt.backends.mkldnn.deterministic
    assert b.opt_einsum.enabled == pt.backends.opt_einsum.enabled


def test_cpu_library_flags_set_and_restore_as_torchs():
    b = torch.backends
    with b.mkldnn.flags(enabled=False):
        assert b.mkldnn.enabled is False
    assert b.mkldnn.enabled is True
    assert b.nnpack.set_flags(False) == (True,)
    assert b.nnpack.set_flags(True) == (False,)
    with b.opt_einsum.flags(strategy="greedy"):
        assert b.opt_einsum.strategy == "greedy"
    assert b.opt_einsum.strategy == "auto"
    with pytest.raises(NotImplementedError, match="compat has no Intel MKL"):
        b.mkl.verbose  # noqa: B018
