"""compat's answers to what real PyTorch scripts touch in passing -- ``torch.amp``
and ``torch.cuda.amp``, ``torch.onnx``, ``torch.distributed`` -- against PyTorch on
a CPU-only machine: the same results and warnings, or a refusal by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def caught(make):
    """``make()``'s result and the (category, message) of each warning it gave."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = make()
    return result, [(w.category, str(w.message)) for w in seen]


# -- torch.amp / torch.cuda.amp ------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.amp.GradScaler("cuda", enabled=False),
        lambda t: t.amp.GradScaler("cuda"),
        lambda t: t.amp.GradScaler(),
        lambda t: t.amp.GradScaler("cpu", enabled=False),
        lambda t: t.cuda.amp.GradScaler(enabled=False),
        lambda t: t.cuda.amp.GradScaler(),
    ],
)
def test_a_grad_scaler_pytorch_disables_is_disabled_with_its_warnings(make):
    ours, our_warnings = caught(lambda: make(ct))
    theirs, their_warnings = caught(lambda: make(pt))
    assert our_warnings == their_warnings
    assert ours.is_enabled() is theirs.is_enabled() is False
    assert ours.get_scale() == theirs.get_scale() == 1.0
    assert ours.state_dict() == theirs.state_dict() == {}
    ours.load_state_dict({"scale": 3.0})  # a no-op when disabled
    assert ours.get_scale() == 1.0


def test_a_disabled_grad_scaler_passes_the_loss_and_steps_the_optimizer():
    scaler = ct.amp.GradScaler("cpu", enabled=False)
    w = ct.nn.Parameter(ct.tensor([1.0, 2.0]))
    opt = ct.optim.SGD([w], lr=0.5)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    assert scaler.step(opt) is None
    scaler.update()
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])


def _scaled_run(torch, steps, **options):
    """Parameters and scaler state after each of ``steps`` (each an input row),
    trained with an enabled CPU GradScaler."""
    w = torch.nn.Parameter(torch.tensor([0.5, -1.25, 2.0]))
    opt = torch.optim.SGD([w], lr=0.125, momentum=0.5)
    scaler = torch.amp.GradScaler("cpu", **options)
    seen = []
    for i, row in enumerate(steps):
        opt.zero_grad()
        loss = (w * torch.tensor(row)).pow(2).sum()
        scaled = scaler.scale(loss)
        seen.append(float(scaled.detach()))
        scaled.backward()
        if i % 2:
            scaler.unscale_(opt)  # as before clipping, then step() unscales no more
            seen.append(w.grad.detach().numpy().copy())
        scaler.step(opt)
        scaler.update()
        seen += [w.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict()]
    return seen


def test_an_enabled_cpu_grad_scaler_scales_skips_backs_off_and_grows_as_pytorch():
    steps = [
        [1.0, 2.0, 3.0],
        [0.5, np.inf, 1.0],  # inf gradients: the step is skipped, the scale halves
        [1.5, -2.0, 0.25],
        [1e30, 1.0, 1.0],  # the scaled loss overflows float32
        [0.25, 0.5, -1.0],
        [1.0, 1.0, 1.0],
        [2.0, 0.5, 0.125],
    ]
    options = {"init_scale": 1024.0, "growth_interval": 2, "backoff_factor": 0.25}
    ours, theirs = _scaled_run(ct, steps, **options), _scaled_run(pt, steps, **options)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b or (np.isnan(a) and np.isnan(b))


def test_an_enabled_grad_scaler_state_dict_round_trips_and_refuses_an_empty_one():
    for torch in (ct, pt):
        scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
        assert scaler.get_scale() == 8.0 and scaler.is_enabled()
        scaler.scale(torch.tensor(1.0))
        scaler.update(3.0)
        copy = torch.amp.GradScaler("cpu")
        copy.load_state_dict(scaler.state_dict())
        assert copy.state_dict() == {
            "scale": 3.0,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 5,
            "_growth_tracker": 0,
        }
        with pytest.raises(RuntimeError, match="saved from a disabled instance"):
            copy.load_state_dict({})


def test_an_enabled_grad_scaler_refuses_misuse_in_pytorch_words():
    for torch in (ct, pt):
        w = torch.nn.Parameter(torch.tensor([1.0]))
        opt = torch.optim.SGD([w], lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(opt)
        scaler.scale(w.sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently"):
            scaler.step(opt, closure=lambda: None)
        with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
            torch.amp.GradScaler("cpu", growth_factor=1.0)
        scaled = scaler.scale([w.sum(), (w.sum(), w.sum() * 2)])
        assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
        first, second = (float(v.detach()) for v in (scaled[0], scaled[1][1]))
        assert second == 2 * first == 2 * 65536 * float(w.detach())


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.autocast(device_type="cuda", enabled=False),
        lambda t: t.autocast("cuda"),
        lambda t: t.autocast("cpu", enabled=False),
        lambda t: t.autocast("cpu", dtype=t.float32),
        lambda t: t.amp.autocast("cuda", enabled=False),
        lambda t: t.cuda.amp.autocast(enabled=False),
        lambda t: t.cuda.amp.autocast(),
    ],
)
def test_an_autocast_pytorch_disables_is_a_no_op_with_its_warnings(make):
    ours, our_warnings = caught(lambda: make(ct))
    theirs, their_warnings = caught(lambda: make(pt))
    assert our_warnings == their_warnings
    assert (ours.device, ours.fast_dtype.__str__()) == (
        theirs.device,
        str(theirs.fast_dtype),
    )
    x = ct.ones(2, 2)
    with ours as entered:
        assert entered is ours
        assert not ct.is_autocast_enabled(ours.device)
        assert (x @ x).dtype == ct.float32

    @ours
    def double(v):
        """Doubles."""
        return v * 2

    assert double(3) == 6 and double.__doc__ == "Doubles."


def test_autocast_refuses_bad_arguments_as_pytorch():
    for torch in (ct, pt):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            torch.autocast(torch.device("cpu"))
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            torch.autocast("xyz", enabled=False)
        with pytest.raises(TypeError, match="requires a callable, but got int"):
            torch.autocast("cpu", enabled=False)(3)
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert torch.get_autocast_dtype("cuda") == torch.float16
        assert torch.amp.is_autocast_available("cuda")


def test_the_cuda_amp_module_imports_as_pytorch_spells_it():
    import jaxblitz.compat.cuda.amp
    from jaxblitz.compat.cuda.amp import GradScaler, autocast, custom_fwd

    assert jaxblitz.compat.cuda.amp is ct.cuda.amp
    assert issubclass(GradScaler, ct.amp.GradScaler)
    assert issubclass(autocast, ct.amp.autocast)

    class Ctx:
        pass

    forward, messages = caught(lambda: custom_fwd(lambda ctx, x: x + 1))
    assert messages == [
        (
            FutureWarning,
            "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
            "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
        )
    ]
    ctx = Ctx()
    assert forward(ctx, 1) == 2 and ctx._fwd_used_autocast is False
    backward = ct.amp.custom_bwd(device_type="cpu")(lambda ctx, g: g * 3)
    assert backward(ctx, 2) == 6


# -- torch.onnx -----------------------------------------------------------------


def test_onnx_imports_and_its_export_is_refused_by_name():
    import jaxblitz.compat.onnx
    from jaxblitz.compat import onnx

    assert onnx is jaxblitz.compat.onnx is ct.onnx
    assert onnx.is_in_onnx_export() is pt.onnx.is_in_onnx_export() is False
    model = ct.nn.Linear(2, 1)
    with pytest.raises(NotImplementedError, match="torch.onnx.export is not"):
        onnx.export(model, (ct.ones(1, 2),), "model.onnx", input_names=["x"])
    with pytest.raises(NotImplementedError, match="torch.onnx.dynamo_export is not"):
        onnx.dynamo_export(model, ct.ones(1, 2))
    with pytest.raises(NotImplementedError, match="torch.onnx.register_custom_op"):
        onnx.register_custom_op_symbolic("::foo", None, 9)
    assert issubclass(onnx.OnnxExporterError, RuntimeError)
    assert not hasattr(onnx, "__path__")


# -- torch.distributed ----------------------------------------------------------


def _raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 -- the error is what is compared
        return type(error), str(error)
    return None


def test_distributed_answers_as_pytorch_without_a_process_group(monkeypatch):
    import jaxblitz.compat.distributed as dist

    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    real = pt.distributed
    assert dist.is_available() is real.is_available() is True
    assert dist.is_initialized() is real.is_initialized() is False
    assert dist.is_torchelastic_launched() is real.is_torchelastic_launched()
    for name in ("get_rank", "get_world_size", "get_backend", "destroy_process_group"):
        assert _raised(getattr(dist, name)) == _raised(getattr(real, name)), name
    assert _raised(dist.get_node_local_rank) == _raised(real.get_node_local_rank)
    assert dist.get_node_local_rank(fallback_rank=0) == 0
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank() == real.get_node_local_rank() == 3
    assert dist.group.WORLD is dist.GroupMember.WORLD is None
    assert dist.ReduceOp.SUM.value == 0 and dist.ReduceOp.AVG.value == 1
    assert dist.Backend("GLOO") == dist.Backend.GLOO == real.Backend.GLOO


def test_distributed_refuses_a_process_group_and_collectives_by_name():
    from jaxblitz.compat import distributed as dist

    with pytest.raises(NotImplementedError, match="init_process_group is not"):
        dist.init_process_group("gloo", rank=0, world_size=1)
    # torch's words and type (a script's `except ValueError` still works)
    with pytest.raises(ValueError, match="Default process group has not.*all_reduce"):
        dist.all_reduce(ct.ones(2), op=dist.ReduceOp.SUM)
    with pytest.raises(ValueError, match="Default process group has not.*barrier"):
        dist.barrier()
    with pytest.raises(ValueError, match="torch.distributed.broadcast needs"):
        dist.broadcast(ct.ones(2), src=0)
    with pytest.raises(NotImplementedError, match="torch.distributed.rpc is not"):
        dist.rpc  # noqa: B018
    assert not hasattr(dist, "__path__")


def test_distributed_data_parallel_raises_pytorchs_error_without_a_group():
    from jaxblitz.compat.nn.parallel import DistributedDataParallel

    theirs = _raised(lambda: pt.nn.parallel.DistributedDataParallel(pt.nn.Linear(2, 2)))
    ours = _raised(lambda: DistributedDataParallel(ct.nn.Linear(2, 2), device_ids=[0]))
    assert ours[0] is theirs[0] is ValueError
    assert ours[1].startswith(theirs[1])
    assert issubclass(ct.nn.parallel.DistributedDataParallel, ct.nn.Module)


@pytest.mark.parametrize("size", [0, 1, 7, 10, 12, 101])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_distributed_sampler_gives_pytorchs_indices(size, replicas, drop_last, shuffle):
    from jaxblitz.compat.utils.data.distributed import DistributedSampler
    from torch.utils.data.distributed import DistributedSampler as Theirs

    data = list(range(size))
    for rank in range(replicas):
        options = dict(num_replicas=replicas, rank=rank, shuffle=shuffle)
        ours = DistributedSampler(data, seed=5, drop_last=drop_last, **options)
        theirs = Theirs(data, seed=5, drop_last=drop_last, **options)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size
        for epoch in (0, 1, 7):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs), (rank, epoch)


def test_distributed_sampler_shuffles_as_pytorch_for_any_seed():
    from jaxblitz.compat.utils._distributed_sampler import torch_randperm

    for seed in (0, 1, 123456789, 2**32 + 9, 2**40 + 17, -3):
        g = pt.Generator().manual_seed(seed)
        assert torch_randperm(1000, seed) == pt.randperm(1000, generator=g).tolist()
    assert torch_randperm(0, 4) == [] and torch_randperm(1, 4) == [0]


def test_distributed_sampler_refuses_what_pytorch_refuses():
    from jaxblitz.compat.utils.data import DistributedSampler

    for Sampler in (DistributedSampler, pt.utils.data.DistributedSampler):
        with pytest.raises(ValueError, match="Default process group has not"):
            Sampler(range(4))
        with pytest.raises(ValueError, match=r"Invalid rank 3, .*\[0, 2\]"):
            Sampler(range(4), num_replicas=3, rank=3)
        with pytest.raises(ValueError, match=r"Invalid rank -1"):
            Sampler(range(4), num_replicas=3, rank=-1)


def test_a_distributed_sampler_feeds_a_data_loader():
    import jaxblitz.compat.utils.data as data

    dataset = data.TensorDataset(ct.arange(10))
    sampler = data.DistributedSampler(dataset, num_replicas=2, rank=1, seed=3)
    loader = data.DataLoader(dataset, batch_size=2, sampler=sampler)
    theirs = pt.utils.data.DistributedSampler(range(10), num_replicas=2, rank=1, seed=3)
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        theirs.set_epoch(epoch)
        seen = [int(v) for (batch,) in loader for v in batch]
        assert seen == list(theirs) and len(loader) == 3


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        ("nn", "LinearCrossEntropyLoss"),
        ("nn.functional", "scaled_mm"),
        ("optim", "SparseAdam"),
    ],
)
def test_a_torch_name_compat_does_not_offer_is_refused_with_its_reason(namespace, name):
    """``nn.LinearCrossEntropyLoss`` raises NotImplementedError naming it and why; it is
    also an AttributeError, so ``hasattr`` answers False and ``getattr`` with a
    default gives the default."""
    module = ct
    for part in namespace.split("."):
        module = getattr(module, part)
    with pytest.raises(NotImplementedError, match=f"torch.{namespace}.{name} is not"):
        getattr(module, name)
    assert not hasattr(module, name) and getattr(module, name, None) is None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        module.Nope  # noqa: B018


# -- torch.func, forward-mode AD, torch.autograd.functional ------------------

REFUSED_MODULES = {
    "torch.func": "jaxblitz.compat.func",
    "torch.autograd.forward_ad": "jaxblitz.compat.autograd.forward_ad",
    "torch.autograd.functional": "jaxblitz.compat.autograd.functional",
    "torch.nn.utils.stateless": "jaxblitz.compat.nn.utils.stateless",
}


@pytest.mark.parametrize("theirs", sorted(REFUSED_MODULES))
def test_a_refused_module_imports_with_torchs_public_functions(theirs):
    """A script's ``from torch.func import vmap`` runs; the names are torch's."""
    import importlib

    real, ours = (
        importlib.import_module(theirs),
        importlib.import_module(REFUSED_MODULES[theirs]),
    )
    names = getattr(ours, "__all__", None) or [
        n for n in dir(ours) if not n.startswith("_") and n[0].islower()
    ]
    wanted = [
        n
        for n in getattr(real, "__all__", dir(real))
        if not n.startswith("_") and callable(getattr(real, n))
        and getattr(getattr(real, n), "__module__", "").startswith("torch")
    ]  # fmt: skip
    assert set(wanted) <= set(dir(ours)), set(wanted) - set(dir(ours))
    assert set(names) <= set(dir(real))


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: ct.func.functionalize(lambda x: x), "torch.func.functionalize"),
        (
            lambda: ct.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t),
            "torch.autograd.graph.saved_tensors_hooks",
        ),
        (
            lambda: ct.autograd.graph.save_on_cpu(pin_memory=False),
            "torch.autograd.graph.save_on_cpu",
        ),
        (
            lambda: ct.ones(2, requires_grad=True).pow(2).grad_fn._raw_saved_self,
            r"PowBackward0\._raw_saved_self \(a SavedTensor, for hooks on saved "
            r"tensors\)",
        ),
    ],
)
def test_a_function_transform_is_refused_by_name_when_used(call, named):
    with pytest.raises(NotImplementedError, match=f"^{named} is not supported by"):
        call()
