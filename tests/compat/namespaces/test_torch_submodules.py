"""Every submodule of torch (and of torch.utils, nn, optim, backends, autograd and
cuda, and the private ones scripts touch) is offered by compat or refused by
name, as an import (a ModuleNotFoundError saying why, so ``except ImportError``
fallbacks still run) and as an attribute (``hasattr`` False): a new torch
release's submodule fails here until it is decided. Then the offered modules'
behaviour against PyTorch's."""

import importlib
import pkgutil
import types

import numpy as np
import pytest

import jaxblitz.compat as ct
from jaxblitz.compat._not_offered import SUBMODULES, NotOffered
from jaxblitz.compat.port import port_source

pt = pytest.importorskip("torch")

_PACKAGES = (
    "torch",
    "torch.utils",
    "torch.nn",
    "torch.optim",
    "torch.backends",
    "torch.autograd",
    "torch.cuda",
)
_PRIVATE = ("torch._dynamo", "torch._inductor")


def _torch_submodules() -> list[str]:
    found = list(_PRIVATE)
    for package in _PACKAGES:
        path = importlib.import_module(package).__path__
        found += [
            f"{package}.{info.name}"
            for info in pkgutil.iter_modules(path)
            if not info.name.startswith("_")
        ]
    return sorted(found)


def _compat_name(torch_name: str) -> str:
    return "jaxblitz.compat" + torch_name.removeprefix("torch")


def _parent_and_name(torch_name: str) -> tuple[object, object, str]:
    package, _, name = torch_name.rpartition(".")
    ours = importlib.import_module(_compat_name(package))
    return ours, importlib.import_module(package), name


def _decide(torch_name: str) -> str:
    """'offered' or 'refused', checking the import and the attribute agree."""
    ours, theirs, name = _parent_and_name(torch_name)
    try:
        module = importlib.import_module(_compat_name(torch_name))
    except ModuleNotFoundError as e:
        assert f"{torch_name} is not supported by jaxblitz.compat: " in str(e)
        assert torch_name in SUBMODULES
        try:
            value = getattr(ours, name)
        except NotOffered as e:
            assert f"{torch_name} is not supported by jaxblitz.compat: " in str(e)
            assert not hasattr(ours, name)
        else:  # the package binds a function of that name over the module
            assert not isinstance(value, types.ModuleType)
            if torch_name == "torch.functional":  # compat's bridge to the core
                assert value is ct.bridge.functional
            else:  # as torch's does (torch.autograd.gradcheck)
                assert not isinstance(getattr(theirs, name), types.ModuleType)
        return "refused"
    assert torch_name not in SUBMODULES
    assert getattr(ours, name) is module
    return "offered"


def test_every_torch_submodule_is_offered_or_refused_by_name():
    undecided, decided = [], {}
    for torch_name in _torch_submodules():
        try:
            decided[torch_name] = _decide(torch_name)
        except ImportError as e:  # a bare "No module named ..."
            undecided.append(f"{torch_name}: {e}")
    assert not undecided, f"neither offered nor refused: {undecided}"
    offered = {name for name, how in decided.items() if how == "offered"}
    for name in ("torch.random", "torch.optim.swa_utils", "torch.utils.hooks"):
        assert name in offered
    assert decided["torch.fx"] == decided["torch._dynamo"] == "refused"


def test_a_refused_submodule_is_one_torch_has():
    assert set(SUBMODULES) <= set(_torch_submodules())


def test_a_refused_import_says_why_in_each_form_a_script_writes():
    why = "torch.fx is not supported by jaxblitz.compat: torch.fx's symbolic"
    with pytest.raises(ModuleNotFoundError, match=why):
        import jaxblitz.compat.fx  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=why):  # again: not cached away
        import jaxblitz.compat.fx  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=why):
        from jaxblitz.compat import fx  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=why):
        from jaxblitz.compat.fx import symbolic_trace  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="torch.cuda.nvtx is not supported"):
        from jaxblitz.compat.cuda import nvtx  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="No module named 'jaxblitz.comp"):
        import jaxblitz.compat.no_such_module  # noqa: F401 -- torch lacks it too


def test_a_ported_scripts_import_fallback_still_runs():
    script = port_source(
        "try:\n    import torch.fx\n    traced = True\nexcept ImportError:\n"
        "    traced = False\nfrom torch import random\n"
    )
    scope: dict = {}
    exec(compile(script, "script.py", "exec"), scope)
    assert scope["traced"] is False and scope["random"] is ct.random


def test_a_refused_submodule_is_no_attribute():
    assert not hasattr(ct, "fx") and not hasattr(ct, "sparse")
    assert not hasattr(ct.utils, "cpp_extension") and not hasattr(ct.cuda, "nvtx")
    with pytest.raises(NotImplementedError, match="torch.sparse is not supported"):
        ct.sparse  # noqa: B018 -- reading the name is the test
    with pytest.raises(AttributeError, match="torch.cuda.graphs is not supported"):
        ct.cuda.graphs  # noqa: B018


# The offered modules' own names: each of torch's offered or refused by name.
_OFFERED = (
    "torch.random",
    "torch.cpu",
    "torch.xpu",
    "torch.mps",
    "torch.compiler",
    "torch.multiprocessing",
    "torch.utils.hooks",
    "torch.optim.swa_utils",
    "torch.nn.parameter",
    "torch.version",
    "torch.torch_version",
)


@pytest.mark.parametrize("torch_name", _OFFERED)
def test_each_name_of_an_offered_module_is_offered_or_refused(torch_name):
    theirs = importlib.import_module(torch_name)
    ours = importlib.import_module(_compat_name(torch_name))
    unexplained = []
    for name in theirs.__all__:
        try:
            getattr(ours, name)
        except NotOffered as e:
            assert f"{torch_name}.{name} is not supported by jaxblitz.compat" in str(e)
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


# -- torch.random --------------------------------------------------------------


def _draws_repeat(t, **fork) -> bool:
    """Whether the draw after a forked block repeats the one made without it."""
    t.manual_seed(7)
    plain = t.rand(3).tolist()
    t.manual_seed(7)
    with t.random.fork_rng(**fork):
        t.rand(5)
    return t.rand(3).tolist() == plain


@pytest.mark.parametrize(
    "fork",
    [{}, {"enabled": False}, {"devices": []}, {"device_type": "meta"}],
    ids=["default", "disabled", "no-devices", "meta"],
)
def test_fork_rng_restores_the_generator_as_torchs_does(fork):
    assert _draws_repeat(ct, **fork) is _draws_repeat(pt, **fork)


def test_fork_rng_restores_even_when_the_block_raises():
    ct.manual_seed(3)
    plain = ct.rand(2).tolist()
    ct.manual_seed(3)
    with pytest.raises(ValueError), ct.random.fork_rng():
        ct.rand(4)
        raise ValueError
    assert ct.rand(2).tolist() == plain


def test_fork_rng_refuses_what_torchs_refuses():
    foo = pytest.raises(RuntimeError, match="Expected one of cpu, cuda")
    with foo, ct.random.fork_rng(device_type="foo"):
        pass
    if not ct.cuda.is_available():
        no_gpu = pytest.raises(AssertionError, match="Torch not compiled with CUDA")
        with no_gpu, ct.random.fork_rng(devices=[0]):
            pass


def test_torch_random_is_torchs_seed_and_state():
    ct.random.manual_seed(11)
    assert ct.random.initial_seed() == 11 == ct.initial_seed()
    state = ct.random.get_rng_state()
    first = ct.rand(2).tolist()
    ct.random.set_rng_state(state)
    assert ct.rand(2).tolist() == first
    assert ct.random.seed() == ct.random.initial_seed()


# -- torch.cpu, torch.xpu, torch.mps ---------------------------------------------


def _outcome(call):
    try:
        return "value", call()
    except Exception as e:
        return type(e).__name__, str(e)


_DEVICE_CALLS = {
    "torch.cpu": [
        "is_available()",
        "is_initialized()",
        "device_count()",
        "current_device()",
        "synchronize()",
        "set_device(0)",
    ],
    "torch.xpu": [
        "is_available()",
        "is_initialized()",
        "device_count()",
        "is_bf16_supported()",
        "is_tf32_supported()",
        "get_arch_list()",
        "get_gencode_flags()",
        "empty_cache()",
        "memory_allocated()",
        "max_memory_allocated(0)",
        "memory_reserved()",
        "max_memory_reserved()",
        "memory_stats()",
        "memory_stats_as_nested_dict()",
        "memory_snapshot()",
        "manual_seed(3)",
        "manual_seed_all(3)",
        "seed()",
        "seed_all()",
        "get_rng_state_all()",
        "set_rng_state_all([])",
        "current_device()",
        "get_device_name()",
        "get_device_properties()",
        "get_device_capability()",
        "get_rng_state()",
        "initial_seed()",
        "mem_get_info()",
        "set_device(0)",
        "synchronize()",
        "init()",
        "manual_seed('a')",
    ],
    "torch.mps": [
        "is_available()",
        "device_count()",
        "manual_seed(3)",
        "seed()",
        "get_rng_state()",
        "synchronize()",
        "empty_cache()",
        "set_per_process_memory_fraction(0.5)",
        "current_allocated_memory()",
        "driver_allocated_memory()",
        "recommended_max_memory()",
    ],
}


@pytest.mark.parametrize(
    ("module", "call"),
    [(module, call) for module, calls in _DEVICE_CALLS.items() for call in calls],
)
def test_a_device_module_answers_as_a_cpu_build_of_torch(module, call):
    theirs = importlib.import_module(module)
    ours = importlib.import_module(_compat_name(module))
    assert _outcome(lambda: eval(f"m.{call}", {"m": ours})) == _outcome(
        lambda: eval(f"m.{call}", {"m": theirs})
    )


def test_a_device_modules_state_setters_accept_a_state_as_torchs_do():
    state = pt.zeros(3, dtype=pt.uint8)
    assert ct.xpu.set_rng_state(ct.zeros(3, dtype=ct.uint8)) is None
    assert pt.xpu.set_rng_state(state) is None
    assert (
        _outcome(lambda: ct.mps.set_rng_state(None))[1]
        == _outcome(lambda: pt.mps.set_rng_state(state))[1]
    )


# -- torch.compiler --------------------------------------------------------------


def test_is_compiling_is_true_only_while_torch_compile_traces():
    seen = []

    @ct.compile
    def step(x):
        seen.append(ct.compiler.is_compiling())
        return x * 2

    assert ct.compiler.is_compiling() is False
    assert step(ct.ones(2)).tolist() == [2.0, 2.0]
    step(ct.ones(2))  # the program runs; the Python is not traced again
    assert seen == [True]
    assert ct.compiler.is_dynamo_compiling() is False
    assert ct.compiler.is_exporting() is pt.compiler.is_exporting() is False


def test_a_disabled_function_is_left_eager_by_torch_compile():
    @ct.compiler.disable
    def step(x):
        return x.sum().item() + ct.compiler.is_compiling()  # reads a value: eager

    assert step.__wrapped__.__name__ == "step"
    assert ct.compile(step) is step
    assert ct.compile(step)(ct.ones(3)) == 3.0
    assert ct.compiler.disable(recursive=False)(step)(ct.ones(2)) == 2.0
    message = _outcome(lambda: pt.compiler.disable(3))
    assert _outcome(lambda: ct.compiler.disable(3)) == message
    assert ct.compiler.reset() is None and ct.compiler.compile is not None


# -- torch.multiprocessing ---------------------------------------------------------


def test_torch_multiprocessing_is_pythons_and_torchs_strategies():
    import multiprocessing

    for name in multiprocessing.__all__:
        assert getattr(ct.multiprocessing, name) is getattr(multiprocessing, name)
    mp = ct.multiprocessing
    assert (
        mp.get_all_sharing_strategies()
        == pt.multiprocessing.get_all_sharing_strategies()
    )
    assert mp.get_sharing_strategy() == pt.multiprocessing.get_sharing_strategy()
    with pytest.raises(AssertionError, match="invalid sharing strategy 'foo'"):
        mp.set_sharing_strategy("foo")
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy(pt.multiprocessing.get_sharing_strategy())
    queue = mp.Queue()
    queue.put(ct.arange(3).numpy())
    assert queue.get(timeout=10).tolist() == [0, 1, 2]


# -- torch.utils.hooks, torch.nn.parameter ---------------------------------------


def test_utils_hooks_handle_is_the_one_nn_hooks_return():
    net = ct.nn.Linear(2, 2)
    calls = []
    handle = net.register_forward_hook(lambda *a: calls.append(1))
    assert isinstance(handle, ct.utils.hooks.RemovableHandle)
    net(ct.ones(1, 2))
    handle.remove()
    net(ct.ones(1, 2))
    assert calls == [1]

    def hook(grad):
        return grad

    assert ct.utils.hooks.unserializable_hook(hook) is hook
    assert hook.__torch_unserializable__ is True


def test_nn_parameter_is_where_torch_keeps_parameter():
    from jaxblitz.compat.nn.parameter import Parameter, UninitializedParameter

    assert Parameter is ct.nn.Parameter and ct.nn.parameter.Parameter is Parameter
    assert ct.nn.parameter.is_lazy(UninitializedParameter())
    assert not ct.nn.parameter.is_lazy(Parameter(ct.ones(1)))


# -- torch.optim.swa_utils -----------------------------------------------------------


def _net(t):
    return t.nn.Sequential(
        t.nn.Linear(3, 4), t.nn.BatchNorm1d(4), t.nn.ReLU(), t.nn.Linear(4, 2)
    )


def _averages(t, net, batches):
    """Train ``net`` a few steps with SWA, two EMAs and SWALR; their states."""
    su = t.optim.swa_utils
    optimizer = t.optim.SGD(net.parameters(), lr=0.1)
    swa = su.AveragedModel(net)
    ema = su.AveragedModel(
        net, multi_avg_fn=su.get_ema_multi_avg_fn(0.9), use_buffers=True
    )
    ema_one = su.AveragedModel(net, avg_fn=su.get_ema_avg_fn(0.8))
    swa_multi = su.AveragedModel(net, multi_avg_fn=su.get_swa_multi_avg_fn())
    scheduler = su.SWALR(optimizer, swa_lr=0.05, anneal_epochs=3)
    lrs = []
    for x, y in batches:
        optimizer.zero_grad()
        ((net(t.tensor(x)) - t.tensor(y)) ** 2).mean().backward()
        optimizer.step()
        for model in (swa, ema, ema_one, swa_multi):
            model.update_parameters(net)
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    su.update_bn([(t.tensor(x),) for x, _ in batches], swa)
    states = [
        {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
        for m in (swa, ema, ema_one, swa_multi)
    ]
    return states, lrs


def test_swa_and_ema_averages_match_torchs_on_a_small_model():
    rng = np.random.default_rng(0)
    batches = [
        (
            rng.standard_normal((8, 3)).astype(np.float32),
            rng.standard_normal((8, 2)).astype(np.float32),
        )
        for _ in range(4)
    ]
    pt.manual_seed(0)
    theirs = _net(pt)
    ours = _net(ct)
    ours.load_state_dict(
        {k: ct.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    )
    their_states, their_lrs = _averages(pt, theirs, batches)
    our_states, our_lrs = _averages(ct, ours, batches)
    assert our_lrs == pytest.approx(their_lrs, rel=1e-12)
    for mine, torchs in zip(our_states, their_states, strict=True):
        assert mine.keys() == torchs.keys()
        for key, value in torchs.items():
            assert mine[key].dtype == value.dtype, key
            np.testing.assert_allclose(mine[key], value, rtol=1e-5, atol=1e-6)
    assert our_states[0]["n_averaged"] == 4


def test_update_bn_averages_over_the_whole_pass_and_restores_the_mode():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    nets = []
    for t in (ct, pt):
        net = t.nn.Sequential(t.nn.BatchNorm1d(2, momentum=0.3)).eval()
        t.optim.swa_utils.update_bn([t.tensor(x[:3]), t.tensor(x[3:])], net)
        assert not net.training and net[0].momentum == 0.3
        nets.append(net[0])
    np.testing.assert_allclose(nets[0].running_mean.numpy(), x.mean(0), rtol=1e-6)
    np.testing.assert_allclose(
        nets[0].running_var.numpy(), nets[1].running_var.numpy(), rtol=1e-6
    )


def test_swalr_anneals_linearly_and_refuses_as_torchs_does():
    lrs = {}
    for t in (ct, pt):
        opt = t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=1.0)
        sch = t.optim.swa_utils.SWALR(
            opt, swa_lr=0.2, anneal_epochs=4, anneal_strategy="linear"
        )
        lrs[t] = []
        for _ in range(6):
            opt.step()
            sch.step()
            lrs[t].append(sch.get_last_lr()[0])
    assert lrs[ct] == pytest.approx(lrs[pt], rel=1e-12)
    for bad in (
        lambda t: t.optim.swa_utils.SWALR(
            t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=1.0), 0.1, anneal_strategy="x"
        ),
        lambda t: t.optim.swa_utils.SWALR(
            t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=1.0), 0.1, anneal_epochs=-1
        ),
        lambda t: t.optim.swa_utils.get_ema_multi_avg_fn(1.5),
        lambda t: t.optim.swa_utils.AveragedModel(
            t.nn.Linear(1, 1), avg_fn=abs, multi_avg_fn=abs
        ),
    ):
        assert _outcome(lambda b=bad: b(ct)) == _outcome(lambda b=bad: b(pt))
