"""compat Tensor: the sparse family of methods on strided (dense) tensors, as
PyTorch answers them; making a sparse tensor is refused by name."""

import pytest

import jaxblitz.compat as torch

pt = pytest.importorskip("torch")


def test_to_dense_of_a_dense_tensor_is_the_tensor_itself():
    for lib in (torch, pt):
        x = lib.eye(2, requires_grad=True)
        assert x.to_dense() is x
        assert x.to_dense(lib.float32) is x
        y = x.to_dense(lib.float64)
        assert y.dtype is lib.float64
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"
        assert y.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_to_dense_refuses_a_dtype_that_is_not_one_as_torch_does():
    for lib in (torch, pt):
        with pytest.raises(TypeError) as caught:
            lib.zeros(2).to_dense(3)
        assert str(caught.value) == (
            "to_dense(): argument 'dtype' (position 1) must be torch.dtype, not int"
        )


def test_sparse_and_dense_dims_of_a_dense_tensor_are_torchs():
    for lib in (torch, pt):
        x = lib.zeros(2, 3, 4)
        assert (x.sparse_dim(), x.dense_dim()) == (0, 3)


@pytest.mark.parametrize(
    "method",
    ["values", "indices", "coalesce", "is_coalesced", "crow_indices",
     "col_indices", "ccol_indices", "row_indices"],
)  # fmt: skip
def test_a_sparse_only_method_raises_torchs_error_for_a_dense_tensor(method):
    with pytest.raises(RuntimeError) as ours:
        getattr(torch.ones(2, 2), method)()
    with pytest.raises(RuntimeError) as theirs:
        getattr(pt.ones(2, 2), method)()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("method", ["to_sparse", "to_sparse_coo", "to_sparse_csr"])
def test_making_a_sparse_tensor_is_refused_by_name(method):
    with pytest.raises(NotImplementedError) as caught:
        getattr(torch.eye(3), method)()
    assert str(caught.value) == (
        f"Tensor.{method} is not supported by jaxblitz.compat: sparse tensors are "
        "not supported: use dense tensors"
    )
