"""Every name of torch.cuda is offered or refused by name. Without a GPU an
offered one answers as torch's CPU-only build does (the same value, or the same
error); on a GPU, from JAX's device. A name torch lacks gets the plain
AttributeError."""

import warnings

import pytest

import jaxblitz.compat as ct
from jaxblitz.compat._not_offered import REASONS, NotOffered

pt = pytest.importorskip("torch")

NO_GPU = not ct.cuda.is_available()
cpu_build = pytest.mark.skipif(
    not NO_GPU or pt.cuda.is_available(), reason="compares CPU-only answers"
)
on_gpu = pytest.mark.skipif(NO_GPU, reason="needs JAX's GPU")


def _names() -> list[str]:
    return sorted({*pt.cuda.__all__, "OutOfMemoryError", "AcceleratorError"})


def test_every_torch_cuda_name_is_offered_or_refused_by_name():
    unexplained = []
    for name in _names():
        try:
            getattr(ct.cuda, name)
        except NotOffered as e:
            assert f"torch.cuda.{name} is not supported by jaxblitz.compat: " in str(e)
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


def test_a_refused_cuda_name_is_one_torch_has_and_hasattr_answers_false():
    refused = REASONS["torch.cuda"]
    assert "CUDAGraph" in refused and "reset_peak_memory_stats" in refused
    assert not [name for name in refused if not hasattr(pt.cuda, name)]
    assert not [name for name in refused if hasattr(ct.cuda, name)]
    with pytest.raises(NotImplementedError, match="JAX's allocator"):
        ct.cuda.set_per_process_memory_fraction  # noqa: B018 -- reading is the test
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'") as e:
        ct.cuda.no_such_name  # noqa: B018 -- a name torch lacks too
    assert not isinstance(e.value, NotOffered)


def _answer(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except Exception as e:  # noqa: BLE001 -- the error is the answer
            value = (type(e).__name__, str(e).partition(" (jaxblitz")[0])
    return value, [(w.category, str(w.message)) for w in caught]


CPU_BUILD_CALLS = {
    "current_stream": lambda t: t.cuda.current_stream(),
    "default_stream": lambda t: t.cuda.default_stream(),
    "Stream": lambda t: t.cuda.Stream(),
    "Event": lambda t: t.cuda.Event(enable_timing=True),
    "get_rng_state": lambda t: t.cuda.get_rng_state(),
    "get_rng_state_all": lambda t: t.cuda.get_rng_state_all(),
    "set_rng_state": lambda t: t.cuda.set_rng_state(t.get_rng_state()),
    "set_rng_state_all": lambda t: t.cuda.set_rng_state_all([t.get_rng_state()]),
    "get_device_capability": lambda t: t.cuda.get_device_capability(),
    "get_arch_list": lambda t: t.cuda.get_arch_list(),
    "get_gencode_flags": lambda t: t.cuda.get_gencode_flags(),
    "is_bf16_supported": lambda t: t.cuda.is_bf16_supported(),
    "is_tf32_supported": lambda t: t.cuda.is_tf32_supported(),
    "init": lambda t: t.cuda.init(),
    "mem_get_info": lambda t: t.cuda.mem_get_info(),
    "memory_reserved": lambda t: t.cuda.memory_reserved(),
    "max_memory_reserved": lambda t: t.cuda.max_memory_reserved(),
    "memory_cached": lambda t: t.cuda.memory_cached(),
    "max_memory_cached": lambda t: t.cuda.max_memory_cached(),
    "memory_stats": lambda t: dict(t.cuda.memory_stats()),
    "default_generators": lambda t: t.cuda.default_generators,
    "has_half": lambda t: t.cuda.has_half,
    "has_magma": lambda t: t.cuda.has_magma,
    "is_current_stream_capturing": lambda t: t.cuda.is_current_stream_capturing(),
    "stream(None)": lambda t: t.cuda.stream(None).__enter__(),
    "set_stream(None)": lambda t: t.cuda.set_stream(None),
    "device(0)": lambda t: t.cuda.device(0).__enter__(),
    "device(-1)": lambda t: t.cuda.device(-1).__enter__(),
    "device_of": lambda t: t.cuda.device_of(t.zeros(1)).idx,
    "set_device(0)": lambda t: t.cuda.set_device(0),
    "set_device(None)": lambda t: t.cuda.set_device(None),
    "set_device('cpu')": lambda t: t.cuda.set_device("cpu"),
    "FloatTensor(2)": lambda t: t.cuda.FloatTensor(2),
    "LongTensor([1])": lambda t: t.cuda.LongTensor([1]),
    "FloatStorage(2)": lambda t: t.cuda.FloatStorage(2),
    "isinstance FloatTensor": lambda t: isinstance(t.zeros(1), t.cuda.FloatTensor),
    "isinstance FloatStorage": lambda t: isinstance(t.zeros(1), t.cuda.FloatStorage),
}


@cpu_build
@pytest.mark.parametrize("what", CPU_BUILD_CALLS)
def test_without_a_gpu_each_name_answers_as_torchs_cpu_build(what):
    call = CPU_BUILD_CALLS[what]
    assert _answer(lambda: call(ct)) == _answer(lambda: call(pt))


def test_the_legacy_cuda_types_carry_torchs_names_and_dtypes():
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor"):
        ours, theirs = getattr(ct.cuda, name), getattr(pt.cuda, name)
        assert (ours.__module__, ours.__name__) == (theirs.__module__, theirs.__name__)
        assert str(ours.dtype) == str(theirs.dtype) and ours.is_cuda is theirs.is_cuda
        assert ct.FloatTensor.is_cuda is pt.FloatTensor.is_cuda is False
    assert isinstance(ct.zeros(1), ct.FloatTensor)  # the CPU's type still answers


def test_out_of_memory_error_is_torchs_runtime_error():
    assert ct.cuda.OutOfMemoryError is ct.OutOfMemoryError
    for ours, theirs in (
        (ct.OutOfMemoryError, pt.OutOfMemoryError),
        (ct.AcceleratorError, pt.AcceleratorError),
        (ct.cuda.DeferredCudaCallError, pt.cuda.DeferredCudaCallError),
    ):
        assert ours.__qualname__ == theirs.__qualname__
        assert ours.__module__ == theirs.__module__
        assert [c.__name__ for c in ours.__mro__[1:]] == [
            c.__name__ for c in theirs.__mro__[1:]
        ]
    with pytest.raises(RuntimeError, match="out of memory"):
        raise ct.cuda.OutOfMemoryError("CUDA out of memory")


@on_gpu
def test_on_a_gpu_events_time_the_work_between_them():
    start, end = ct.cuda.Event(enable_timing=True), ct.cuda.Event(enable_timing=True)
    start.record()
    x = ct.ones(256, 256, device="cuda")
    (x @ x).sum().item()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0.0 and end.query()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        ct.cuda.Event().elapsed_time(end)


@on_gpu
def test_on_a_gpu_streams_are_the_devices_one_queue():
    s = ct.cuda.Stream()
    assert s == ct.cuda.current_stream() == ct.cuda.default_stream()
    with ct.cuda.stream(s):
        y = ct.ones(3, device="cuda") * 2
    s.synchronize()
    assert y.tolist() == [2.0, 2.0, 2.0]
    major, minor = ct.cuda.get_device_capability()
    assert ct.cuda.get_arch_list() == [f"sm_{major}{minor}"]
    assert isinstance(y, ct.cuda.FloatTensor) and not isinstance(y, ct.FloatTensor)
    assert ct.cuda.FloatTensor(2).device.type == "cuda"
    free, total = ct.cuda.mem_get_info()
    assert 0 <= free <= total
