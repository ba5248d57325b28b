"""Docs "Broadcasting semantics" and "Type promotion": result shapes, in-place
broadcasting errors, result dtypes and integer arithmetic with negatives."""

from __future__ import annotations

from tests.compat.notes.record import Notes


def run(torch) -> dict[str, object]:
    notes = Notes()

    with notes.section("doc_general"):
        x = torch.empty(5, 7, 3)
        y = torch.empty(5, 7, 3)
        # same shapes are always broadcastable
        notes.record("same", lambda: (x + y).size())
        # x and y are not broadcastable: x does not have at least 1 dimension
        x = torch.empty((0,))
        y = torch.empty(2, 2)
        notes.record("empty", lambda: (x + y).size())
        # can line up trailing dimensions
        x = torch.empty(5, 3, 4, 1)
        y = torch.empty(3, 1, 1)
        notes.record("trailing", lambda: (x + y).size())
        # but:
        x = torch.empty(5, 2, 4, 1)
        y = torch.empty(3, 1, 1)
        notes.record("mismatch", lambda: (x + y).size())
        x = torch.empty(5, 1, 4, 1)
        y = torch.empty(3, 1, 1)
        notes.record("resulting_size", lambda: (x + y).size())
        x = torch.empty(1)
        y = torch.empty(3, 1, 7)
        notes.record("one_dim", lambda: (x + y).size())

    with notes.section("doc_inplace"):
        x = torch.empty(5, 3, 4, 1)
        y = torch.empty(3, 1, 7)
        notes.record("grow_self", lambda: (x.add_(y)).size())
        x = torch.empty(5, 3, 4, 1)
        y = torch.empty(3, 1, 1)
        notes.record("ok", lambda: (x.add_(y)).size())
        x = torch.empty(1, 3, 1)
        y = torch.empty(3, 1, 7)
        notes.record("grow_leading", lambda: (x.add_(y)).size())

    with notes.section("doc_backwards_compat"):
        notes.record(
            "ones_plus_vector",
            lambda: torch.add(torch.ones(4, 1), torch.randn(4)).size(),
        )

    with notes.section("values"):
        col = torch.arange(3).view(3, 1)
        row = torch.arange(4)
        notes.record("outer_product", lambda: col * row)
        notes.record("outer_sum", lambda: col + row)
        notes.record("compare", lambda: torch.arange(3)[:, None] < torch.arange(3))
        notes.record("where_scalars", lambda: torch.where(row > 1, row, 0))
        notes.record(
            "matmul_batch", lambda: (torch.ones(2, 1, 3, 4) @ torch.ones(5, 4, 2)).shape
        )
        notes.record(
            "vector_matmul_matrix", lambda: (torch.ones(3) @ torch.ones(3, 2)).shape
        )
        notes.record(
            "matrix_matmul_vector", lambda: (torch.ones(2, 3) @ torch.ones(3)).shape
        )
        notes.record("matmul_mismatch", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
        notes.record("broadcast_shapes", lambda: torch.broadcast_shapes((3, 1), (4,)))
        a, b = torch.broadcast_tensors(torch.ones(3, 1), torch.zeros(4))
        notes.record("broadcast_tensors", lambda: (a.shape, b.shape))

    with notes.section("inplace_ok"):
        x = torch.zeros(2, 3)
        x += torch.tensor([1.0, 2.0, 3.0])
        x.mul_(torch.tensor([[2.0], [3.0]]))
        notes.record("x", lambda: x)
        x.sub_(1)
        notes.record("sub_scalar", lambda: x)

    with notes.section("backward"):
        a = torch.ones(3, 1, requires_grad=True)
        b = torch.ones(4, requires_grad=True)
        (a * b).sum().backward()
        notes.record("a_grad", lambda: a.grad)
        notes.record("b_grad", lambda: b.grad)

    with notes.section("doc_promotion"):
        float_tensor = torch.ones(1, dtype=torch.float)
        double_tensor = torch.ones(1, dtype=torch.double)
        int_tensor = torch.ones(1, dtype=torch.int)
        long_tensor = torch.ones(1, dtype=torch.long)
        uint_tensor = torch.ones(1, dtype=torch.uint8)
        bool_tensor = torch.ones(1, dtype=torch.bool)
        # zero-dim tensors
        long_zerodim = torch.tensor(1, dtype=torch.long)

        notes.record("add_5_5", lambda: torch.add(5, 5).dtype)
        # 5 is an int64, but does not have higher category than int_tensor
        notes.record("int_plus_5", lambda: (int_tensor + 5).dtype)
        notes.record("int_plus_long_zerodim", lambda: (int_tensor + long_zerodim).dtype)
        notes.record("long_plus_int", lambda: (long_tensor + int_tensor).dtype)
        notes.record("bool_plus_long", lambda: (bool_tensor + long_tensor).dtype)
        notes.record("bool_plus_uint8", lambda: (bool_tensor + uint_tensor).dtype)
        notes.record("float_plus_double", lambda: (float_tensor + double_tensor).dtype)
        notes.record("bool_plus_int", lambda: (bool_tensor + int_tensor).dtype)
        # long is a different kind than float: only large enough to hold the float
        notes.record(
            "add_long_float", lambda: torch.add(long_tensor, float_tensor).dtype
        )

        def imul(name, left, right):
            def thunk():
                out = left.clone()
                out *= right
                return out

            notes.record("imul_" + name, thunk)

        # allowed:
        imul("float_float", float_tensor, float_tensor)
        imul("float_int", float_tensor, int_tensor)
        imul("float_uint8", float_tensor, uint_tensor)
        imul("float_bool", float_tensor, bool_tensor)
        imul("float_double", float_tensor, double_tensor)
        imul("int_long", int_tensor, long_tensor)
        imul("int_uint8", int_tensor, uint_tensor)
        imul("uint8_int", uint_tensor, int_tensor)
        # disallowed (RuntimeError: result type can't be cast to the output type):
        imul("int_float", int_tensor, float_tensor)
        imul("bool_int", bool_tensor, int_tensor)
        imul("bool_uint8", bool_tensor, uint_tensor)

        notes.record("result_type", lambda: torch.result_type(int_tensor, 1.0))
        notes.record(
            "promote_types", lambda: torch.promote_types(torch.int32, torch.float16)
        )
        notes.record("can_cast", lambda: torch.can_cast(torch.double, torch.float))

    with notes.section("promotion"):
        i = torch.tensor([1, 2, 3])
        notes.record("int_plus_float_scalar", lambda: i + 1.5)
        notes.record("int_times_float_scalar", lambda: i * 0.5)
        notes.record(
            "int32_plus_float_zerodim",
            lambda: torch.tensor([1], dtype=torch.int32) + torch.tensor(1.5),
        )
        notes.record(
            "float_plus_double_zerodim",
            lambda: torch.ones(1) + torch.tensor(1.0, dtype=torch.float64),
        )
        notes.record(
            "int32_times_long_zerodim",
            lambda: torch.tensor([2], dtype=torch.int32) * torch.tensor(3),
        )
        notes.record(
            "half_plus_float_scalar", lambda: torch.ones(1, dtype=torch.float16) + 1.5
        )
        notes.record(
            "half_plus_float",
            lambda: torch.ones(1, dtype=torch.float16) + torch.ones(1),
        )
        notes.record("int_plus_true", lambda: i + True)
        notes.record("bool_zerodim_plus_int", lambda: torch.tensor(True) + 1)
        t, f = torch.tensor([True, False]), torch.tensor([True, True])
        notes.record("bool_plus_bool", lambda: t + f)
        notes.record("bool_times_bool", lambda: t * f)
        notes.record("bool_minus_bool", lambda: t - f)
        notes.record("bool_and", lambda: t & f)
        notes.record("bool_sum", lambda: t.sum())
        notes.record("int32_sum", lambda: torch.ones(3, dtype=torch.int32).sum())
        notes.record("int_mean", lambda: i.mean())
        notes.record(
            "float_pow_long_tensor",
            lambda: torch.tensor([2.0, 3.0]) ** torch.tensor([2, 3]),
        )
        notes.record("long_pow_float_scalar", lambda: i**0.5)
        notes.record("long_pow_long", lambda: i**2)
        notes.record("scalar_pow_long", lambda: 2**i)
        notes.record("long_pow_negative", lambda: i**-1)
        notes.record("float_pow_negative", lambda: torch.tensor([2.0]) ** -1)
        notes.record("where_int_float", lambda: torch.where(i > 1, i, 1.5))
        notes.record(
            "uint8_wraps_down", lambda: torch.tensor([1], dtype=torch.uint8) - 2
        )
        u = torch.tensor([200], dtype=torch.uint8)
        notes.record("uint8_wraps_up", lambda: u + u)
        notes.record("long_iadd_float", lambda: torch.arange(3).add_(1.5))
        notes.record("bool_iadd_int", lambda: torch.tensor([True]).add_(1))

    with notes.section("division"):
        a = torch.tensor([-7, 7, -8, 8])
        notes.record("true_div", lambda: a / 2)
        notes.record("true_div_int_tensor", lambda: a / torch.tensor([2, 2, 3, 3]))
        notes.record("floor_div", lambda: a // 2)
        notes.record("floor_div_neg", lambda: a // -3)
        notes.record("remainder", lambda: a % 3)
        notes.record("remainder_neg", lambda: a % -3)
        notes.record("fmod", lambda: torch.fmod(a, 3))
        notes.record("trunc", lambda: torch.div(a, 3, rounding_mode="trunc"))
        notes.record("floor", lambda: torch.div(a, 3, rounding_mode="floor"))
        notes.record("float_floor_div", lambda: torch.tensor([-7.5, 7.5]) // 2)
        notes.record("float_remainder", lambda: torch.tensor([-7.5, 7.5]) % 2)
        notes.record("scalar_true_div", lambda: torch.tensor(3) / 2)
        notes.record("rtruediv", lambda: 1 / torch.tensor([2, 4]))
        notes.record("rfloordiv", lambda: 7 // torch.tensor([2, -2]))
        notes.record("float_div_zero", lambda: torch.tensor([1.0, -1.0, 0.0]) / 0)
        notes.record("int_floordiv_zero", lambda: torch.tensor([1]) // 0)
        notes.record("long_idiv", lambda: torch.arange(3).div_(2))
        x = torch.arange(4)
        x //= 2
        notes.record("long_ifloordiv", lambda: x)

    with notes.section("comparisons"):
        i = torch.tensor([1, 2, 3])
        notes.record("eq_int_float", lambda: i == torch.tensor([1.0, 2.5, 3.0]))
        notes.record("lt_float_scalar", lambda: i < 1.5)
        notes.record("eq_float_scalar", lambda: i == 2.0)
        notes.record("ge_broadcast", lambda: i >= torch.tensor([[2], [3]]))
        notes.record("torch_eq", lambda: torch.eq(i, 2))
        notes.record(
            "ne_bool", lambda: torch.tensor([True, False]) != torch.tensor([1, 1])
        )
        notes.record("equal", lambda: torch.equal(i, torch.tensor([1.0, 2.0, 3.0])))
        notes.record("max_with_float", lambda: torch.maximum(i, torch.tensor([2.5])))

    return notes
