"""Calls training scripts make around their model, as torch answers them:
activation checkpointing, deterministic-algorithm switches, print options."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as compat
from jaxblitz.compat.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _warnings(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("use_reentrant", [None, True, False])
def test_checkpoint_gives_torchs_values_gradients_and_warnings(use_reentrant):
    w = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    results = []
    for lib, ckpt in ((torch, torch.utils.checkpoint.checkpoint), (compat, checkpoint)):
        lin = lib.nn.Linear(4, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
            lin.bias.zero_()
        x = lib.ones(2, 4, requires_grad=True)
        out, said = _warnings(ckpt, lin, x, use_reentrant=use_reentrant)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), lin.weight.grad.numpy()))
        results.append(said)
    for got, want in zip(results[2], results[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert results[3] == results[1]


def test_reentrant_checkpoint_without_grad_inputs_records_nothing_as_torchs():
    for lib, ckpt in ((torch, torch.utils.checkpoint.checkpoint), (compat, checkpoint)):
        lin, x = lib.nn.Linear(3, 3), lib.ones(2, 3)
        out, said = _warnings(ckpt, lin, x, use_reentrant=True)
        assert not out.requires_grad
        assert said == [
            "None of the inputs have requires_grad=True. Gradients will be None"
        ]
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint(lambda x: x, compat.ones(1), use_reentrant=True, foo=1)


def test_checkpoint_sequential_runs_the_modules_in_turn():
    seq = compat.nn.Sequential(
        compat.nn.Linear(3, 4), compat.nn.ReLU(), compat.nn.Linear(4, 2)
    )
    x = compat.ones(5, 3)
    got = checkpoint_sequential(seq, 2, x, use_reentrant=False)
    np.testing.assert_array_equal(got.detach().numpy(), seq(x).detach().numpy())


def test_deterministic_switches_answer_as_torchs():
    try:
        for lib in (torch, compat):
            lib.use_deterministic_algorithms(True, warn_only=True)
            assert lib.are_deterministic_algorithms_enabled()
            assert lib.get_deterministic_debug_mode() == 1
            lib.set_deterministic_debug_mode("error")
            assert lib.get_deterministic_debug_mode() == 2
            assert not lib.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError, match="must be bool, not int"):
            compat.use_deterministic_algorithms(1)
        with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 5"):
            compat.set_deterministic_debug_mode(5)
    finally:
        for lib in (torch, compat):
            lib.use_deterministic_algorithms(False)


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"sci_mode": False},
        {"sci_mode": True},
        {"threshold": 5, "edgeitems": 1},
        {"linewidth": 30},
        {"profile": "short"},
        {"profile": "full"},
    ],
)
def test_set_printoptions_prints_as_torch(options):
    a = np.array([1.23456789, 2.5e-5, 300.0], np.float32)
    grid = (np.arange(2000, dtype=np.float32) / 7).reshape(40, 50)[:8, :8]
    try:
        printed = []
        for lib in (torch, compat):
            lib.set_printoptions(**options)
            printed.append(
                [
                    str(lib.tensor(a)),
                    str(lib.tensor(grid)),
                    str(lib.arange(2000) / 7),
                    str(lib.arange(10)),
                ]
            )
        assert printed[1] == printed[0]
    finally:
        for lib in (torch, compat):
            lib.set_printoptions(profile="default")


def test_anomaly_detection_names_the_node_that_returned_nan_as_torch():
    errors = []
    for lib in (torch, compat):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            mode = lib.autograd.detect_anomaly()
        with mode:
            assert lib.is_anomaly_enabled()
            y = (x.sqrt() * 0 / x).sum()
            with pytest.raises(RuntimeError) as e:
                y.backward()
            errors.append(str(e.value).splitlines()[0])
        assert not lib.is_anomaly_enabled()
    assert (
        errors[1]
        == errors[0]
        == ("Function 'DivBackward0' returned nan values in its 1th output.")
    )
    with compat.autograd.set_detect_anomaly(True, check_nan=False):
        assert compat.is_anomaly_enabled()
        assert not compat.is_anomaly_check_nan_enabled()
    assert not compat.is_anomaly_enabled()
