"""``torch.angle`` and ``torch.conj_physical`` on real tensors, against PyTorch:
values, dtypes, the zero gradient, and the conjugate being the tensor itself."""

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")

VALUES = [-2.0, 0.0, 3.0, float("nan"), -0.0, float("-inf"), float("inf")]


@pytest.mark.parametrize(
    "values, dtype",
    [(VALUES, "float32"), (VALUES, "float64"), ([-2, 0, 3], "int64"),
     ([True, False], "bool"), ([0, 5], "uint8")],
)  # fmt: skip
def test_angle_matches_torch(values, dtype):
    t = pt.angle(pt.tensor(values, dtype=getattr(pt, dtype)))
    c = ct.angle(ct.tensor(values, dtype=getattr(ct, dtype)))
    assert str(c.dtype) == str(t.dtype)
    np.testing.assert_array_equal(c.numpy(), t.numpy())
    np.testing.assert_array_equal(ct.tensor(values).angle().numpy(), t.float().numpy())


def test_angle_has_torchs_node_and_a_zero_gradient():
    x = ct.tensor([-2.0, 1.0, float("nan")], requires_grad=True)
    y = ct.angle(x)
    assert type(y.grad_fn).__name__ == "AngleBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3, np.float32))


def test_a_real_tensor_is_its_own_physical_conjugate():
    x = ct.tensor([1.0, -2.0], requires_grad=True)
    assert ct.conj_physical(x) is x and x.conj_physical() is x
    y = ct.tensor([1, 2])
    assert ct.conj_physical_(y) is y and y.conj_physical_() is y
    with pytest.raises(TypeError):
        ct.angle([1.0])
    with pytest.raises(TypeError):
        pt.angle([1.0])
