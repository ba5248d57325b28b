"""Devices as PyTorch's CPU build reports them, on a CPU-only JAX process; and
the calls of real scripts that sit beside them (grad modes, Variable, randint)."""

import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.autograd import Variable

real = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("value", repr(fn()))
    except Exception as e:  # noqa: BLE001 -- the error itself is compared
        return (type(e).__name__, str(e).split(" (jaxblitz")[0])


CASES = {
    "accelerator available": lambda t: t.accelerator.is_available(),
    "current accelerator": lambda t: t.accelerator.current_accelerator(),
    "accelerator count": lambda t: t.accelerator.device_count(),
    "accelerator index": lambda t: t.accelerator.current_device_index(),
    "accelerator sync": lambda t: t.accelerator.synchronize(),
    "mps available": lambda t: t.backends.mps.is_available(),
    "mps built": lambda t: t.backends.mps.is_built(),
    "cudnn benchmark": lambda t: t.backends.cudnn.benchmark,
    "cuda available": lambda t: t.cuda.is_available(),
    "cuda count": lambda t: t.cuda.device_count(),
    "cuda current": lambda t: t.cuda.current_device(),
    "cuda name": lambda t: t.cuda.get_device_name(),
    "cuda sync": lambda t: t.cuda.synchronize(),
    "cuda memory": lambda t: t.cuda.memory_allocated(),
    "cuda seed all": lambda t: t.cuda.manual_seed_all(0),
    "device mps": lambda t: t.device("mps"),
    "device meta": lambda t: t.device("meta"),
    "device xpu:1": lambda t: t.device("xpu:1"),
    "device cuda, 1": lambda t: t.device("cuda", 1),
    "device type kw": lambda t: t.device(type="cpu"),
    "device int": lambda t: t.device(0),
    "device bad": lambda t: t.device("foo"),
    "device bad index": lambda t: t.device("cuda:x"),
    "to mps": lambda t: t.ones(2).to("mps"),
    "to cuda": lambda t: t.ones(2).to("cuda"),
    ".cuda()": lambda t: t.ones(2).cuda(),
    "to cpu:0": lambda t: t.ones(2).to("cpu:0").device,
    "get_device": lambda t: t.ones(2).get_device(),
    "is_cuda": lambda t: t.ones(2).is_cuda,
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.skipif(
    real.version.cuda is not None,
    reason="the spec is PyTorch's CPU build; this PyTorch is a CUDA build (pip's "
    "default wheel on some Pythons), which reports 'cuda' even with no GPU",
)
def test_device_queries_answer_as_pytorchs_cpu_build(case):
    assert _outcome(lambda: CASES[case](torch)) == _outcome(lambda: CASES[case](real))


def test_cudnn_flags_are_kept_for_the_script_to_read_back(monkeypatch):
    import jaxblitz.compat.backends.cudnn as cudnn

    monkeypatch.setattr(cudnn, "benchmark", True)
    assert torch.backends.cudnn.benchmark is True


def test_cuda_graphs_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="torch.cuda.CUDAGraph"):
        torch.cuda.CUDAGraph()


def test_variable_is_a_tensor_sharing_storage_with_the_flag_set():
    data = torch.ones(2, 2)
    x = Variable(data, requires_grad=True)
    assert isinstance(x, Variable) and isinstance(data, Variable)
    assert x.requires_grad and x is not data and x.is_leaf
    ((x + 2) * (x + 2) * 3).mean().backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]
    data.add_(1)  # shares storage, as torch's Variable(t)
    assert x.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0, 2.0])


def test_grad_modes_decorate_bare_and_called_as_torch():
    x = torch.ones(2, requires_grad=True)

    @torch.no_grad
    def bare(a):
        return a * 2

    @torch.no_grad()
    def called(a):
        return a * 2

    @torch.enable_grad
    def enabled(a):
        return a * 2

    @torch.inference_mode
    def inferred(a):
        return a * 2

    assert not bare(x).requires_grad and not called(x).requires_grad
    assert not inferred(x).requires_grad and bare.__name__ == "bare"
    with torch.no_grad():
        assert enabled(x).requires_grad
    assert (x * 2).requires_grad


def test_randint_takes_high_with_size_by_keyword_as_torch():
    drawn = torch.randint(10, size=(3,))
    assert drawn.dtype == torch.int64 and drawn.shape == (3,)
    assert drawn.min().item() >= 0 and drawn.max().item() < 10
