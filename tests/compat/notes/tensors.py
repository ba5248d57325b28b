"""The Blitz's "Tensors" (and the older "What is PyTorch?"): creation, attributes,
indexing, joining, arithmetic, in-place ops and the bridge to NumPy. Random
tensors are compared by shape and dtype only."""

from __future__ import annotations

import numpy as np

from tests.compat.notes.record import Notes


def _like(t) -> tuple:
    return (t.shape, t.dtype)


def run(torch) -> dict[str, object]:
    notes = Notes()

    with notes.section("initializing"):
        data = [[1, 2], [3, 4]]
        x_data = torch.tensor(data)
        notes.record("x_data", lambda: x_data)
        np_array = np.array(data)
        x_np = torch.from_numpy(np_array)
        notes.record("x_np", lambda: x_np)
        x_ones = torch.ones_like(x_data)  # retains the properties of x_data
        notes.record("ones_like", lambda: f"Ones Tensor: \n {x_ones} \n")
        # overrides the datatype of x_data
        x_rand = torch.rand_like(x_data, dtype=torch.float)
        notes.record("rand_like", lambda: _like(x_rand))
        notes.record(
            "rand_like_in_range", lambda: bool(((x_rand >= 0) & (x_rand < 1)).all())
        )
        notes.record("rand_like_int", lambda: torch.rand_like(x_data))
        shape = (2, 3)
        notes.record("rand", lambda: _like(torch.rand(shape)))
        notes.record("ones", lambda: f"Ones Tensor: \n {torch.ones(shape)} \n")
        notes.record("zeros", lambda: f"Zeros Tensor: \n {torch.zeros(shape)}")
        notes.record("float_list", lambda: torch.tensor([1.5, 2]))
        notes.record("bool_list", lambda: torch.tensor([True, False]))
        notes.record("mixed_list", lambda: torch.tensor([1, 2.5, True]))
        notes.record("scalar", lambda: torch.tensor(3))
        notes.record("ragged", lambda: torch.tensor([[1, 2], [3]]))

    with notes.section("attributes"):
        tensor = torch.rand(3, 4)
        notes.record("shape", lambda: f"Shape of tensor: {tensor.shape}")
        notes.record("dtype", lambda: f"Datatype of tensor: {tensor.dtype}")
        notes.record("device", lambda: f"Device tensor is stored on: {tensor.device}")
        notes.record("size", lambda: tensor.size())
        notes.record("size_1", lambda: tensor.size(1))
        notes.record("numel", lambda: tensor.numel())
        notes.record("dim", lambda: (tensor.dim(), tensor.ndim))
        notes.record("element_size", lambda: tensor.element_size())
        notes.record("is_floating_point", lambda: tensor.is_floating_point())

    with notes.section("indexing"):
        tensor = torch.ones(4, 4)
        notes.record("first_row", lambda: f"First row: {tensor[0]}")
        notes.record("first_column", lambda: f"First column: {tensor[:, 0]}")
        notes.record("last_column", lambda: f"Last column: {tensor[..., -1]}")
        tensor[:, 1] = 0
        notes.record("print", lambda: str(tensor))
        notes.record("tensor", lambda: tensor)

    with notes.section("joining"):
        tensor = torch.ones(4, 4)
        tensor[:, 1] = 0
        t1 = torch.cat([tensor, tensor, tensor], dim=1)
        notes.record("t1", lambda: t1)
        notes.record("stack", lambda: torch.stack([tensor[0], tensor[1]]).shape)
        notes.record(
            "stack_dim1", lambda: torch.stack([tensor[0], tensor[1]], dim=1).shape
        )
        notes.record("cat_mismatch", lambda: torch.cat([tensor, torch.ones(4, 3)]))
        notes.record(
            "cat_promotes",
            lambda: torch.cat([torch.ones(1), torch.ones(1, dtype=torch.long)]),
        )

    with notes.section("arithmetic"):
        tensor = torch.ones(4, 4)
        tensor[:, 1] = 0
        # matrix multiplication between two tensors; y1, y2, y3 have the same value
        y1 = tensor @ tensor.T
        y2 = tensor.matmul(tensor.T)
        y3 = torch.rand_like(y1)
        torch.matmul(tensor, tensor.T, out=y3)
        notes.record("y1", lambda: y1)
        notes.record("y2", lambda: y2)
        notes.record("y3", lambda: y3)
        # element-wise product; z1, z2, z3 have the same value
        z1 = tensor * tensor
        z2 = tensor.mul(tensor)
        z3 = torch.rand_like(tensor)
        torch.mul(tensor, tensor, out=z3)
        notes.record("z1", lambda: z1)
        notes.record("z2", lambda: z2)
        notes.record("z3", lambda: z3)

    with notes.section("single_element"):
        tensor = torch.ones(4, 4)
        tensor[:, 1] = 0
        agg = tensor.sum()
        agg_item = agg.item()
        notes.record("agg_item", lambda: agg_item)
        notes.record("agg_item_type", lambda: type(agg_item).__name__)
        notes.record("int_item_type", lambda: type(torch.tensor([5]).item()).__name__)
        notes.record("bool_item_type", lambda: type(torch.tensor(True).item()).__name__)
        notes.record("item_of_many", lambda: tensor.item())
        notes.record("float", lambda: float(torch.tensor([2.5])))
        notes.record("int", lambda: int(torch.tensor(7.9)))

    with notes.section("in_place"):
        tensor = torch.ones(4, 4)
        tensor[:, 1] = 0
        notes.record("before", lambda: f"{tensor} \n")
        returned = tensor.add_(5)
        notes.record("after", lambda: str(tensor))
        notes.record("returns_self", lambda: returned is tensor)
        x = torch.ones(2)
        y = x
        x += 1
        notes.record("iadd_is_in_place", lambda: y)
        x = x + 1
        notes.record("add_rebinds", lambda: (y, x))
        x.copy_(torch.tensor([7, 8]))
        notes.record("copy_casts", lambda: x)
        tensor.zero_()
        notes.record("zero_", lambda: tensor.sum())

    with notes.section("numpy_bridge"):
        t = torch.ones(5)
        notes.record("t", lambda: f"t: {t}")
        n = t.numpy()
        notes.record("n", lambda: f"n: {n}")
        # A change in the tensor reflects in the NumPy array.
        t.add_(1)
        notes.record("t_after_add_", lambda: f"t: {t}")
        notes.record("n_after_add_", lambda: f"n: {n}")
        notes.record("n_array", lambda: n)
        n = np.ones(5)
        t = torch.from_numpy(n)
        # Changes in the NumPy array reflects in the tensor.
        np.add(n, 1, out=n)
        notes.record("from_numpy_t", lambda: f"t: {t}")
        notes.record("from_numpy_n", lambda: f"n: {n}")
        notes.record("from_numpy_dtype", lambda: t.dtype)
        t.mul_(3)
        notes.record("n_after_mul_", lambda: n)
        n += 1  # numpy's in-place add
        notes.record("t_after_numpy_iadd", lambda: t)
        n = n + 1  # a new array: the tensor keeps the old one
        notes.record("t_after_numpy_add", lambda: t)

    with notes.section("what_is_pytorch"):
        x = torch.empty(5, 3)
        notes.record("empty", lambda: (x.size(), x.dtype))
        x = torch.zeros(5, 3, dtype=torch.long)
        notes.record("zeros_long", lambda: x)
        x = torch.tensor([5.5, 3])
        notes.record("tensor", lambda: x)
        x = x.new_ones(5, 3, dtype=torch.double)  # new_* methods take in sizes
        notes.record("new_ones", lambda: x)
        x = torch.randn_like(x, dtype=torch.float)  # override dtype!
        notes.record("randn_like", lambda: _like(x))
        notes.record("size", lambda: x.size())
        y = torch.rand(5, 3)
        result = torch.empty(5, 3)
        torch.add(x, y, out=result)
        notes.record("add_out", lambda: torch.allclose(result, x + y))
        # adds x to y
        y.add_(x)
        notes.record("add_", lambda: torch.allclose(result, y))
        x = torch.arange(16.0).view(4, 4)
        notes.record("x_col", lambda: x[:, 1])
        y = x.view(16)
        z = x.view(-1, 8)  # the size -1 is inferred from other dimensions
        notes.record("view_sizes", lambda: (x.size(), y.size(), z.size()))
        x = torch.tensor([0.25])
        notes.record("x", lambda: x)
        notes.record("item", lambda: x.item())
        a = torch.ones(5)
        b = a.numpy()
        a.add_(1)
        notes.record("a", lambda: a)
        notes.record("b", lambda: b)
        a = np.ones(5)
        b = torch.from_numpy(a)
        np.add(a, 1, out=a)
        notes.record("np_a", lambda: a)
        notes.record("from_numpy_b", lambda: b)

    return notes
