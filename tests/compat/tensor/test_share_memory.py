"""share_memory_ and nn.Module.share_memory: compat's tensors live in one
process, so sharing them is refused by name rather than done as a no-op that
would let processes started afterwards (Hogwild training) each train a copy."""

import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")

REFUSAL = "Tensor.share_memory_ is not supported by jaxblitz.compat"


def test_share_memory_of_a_tensor_is_refused_by_name():
    with pytest.raises(NotImplementedError, match=REFUSAL):
        ct.ones(2).share_memory_()
    assert not ct.ones(2).is_shared()


def test_share_memory_of_a_module_with_tensors_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="update its own copy"):
        ct.nn.Linear(2, 2).share_memory()
    with pytest.raises(NotImplementedError, match=REFUSAL):
        ct.nn.BatchNorm1d(2, affine=False).share_memory()  # buffers only


@pytest.mark.parametrize("t", [ct, pt], ids=["compat", "torch"])
def test_a_module_without_tensors_shares_nothing_and_returns_itself(t):
    module = t.nn.Sequential(t.nn.ReLU(), t.nn.Flatten())
    assert module.share_memory() is module
