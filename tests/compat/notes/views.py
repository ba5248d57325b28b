"""Docs "Tensor Views": view ops share storage with their base; writes go both ways.

Storage is compared by relations only (``a.data_ptr() == b.data_ptr()``, offsets
in elements), never by raw pointers.
"""

from __future__ import annotations

import warnings

import numpy as np

from tests.compat.notes.record import Notes


def _offset(view, base) -> int:
    """How many elements ``view`` starts after ``base`` in their storage."""
    return (view.data_ptr() - base.data_ptr()) // base.element_size()


def run(torch) -> dict[str, object]:
    notes = Notes()

    with notes.section("doc_view"):
        t = torch.rand(4, 4)
        b = t.view(2, 8)
        # `t` and `b` share the same underlying data.
        notes.record(
            "same_storage",
            lambda: t.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(),
        )
        with warnings.catch_warnings():  # TypedStorage is deprecated
            warnings.simplefilter("ignore")
            notes.record(
                "same_storage_typed",
                lambda: t.storage().data_ptr() == b.storage().data_ptr(),
            )
        # Modifying view tensor changes base tensor as well.
        b[0][0] = 3.14
        notes.record("t00", lambda: t[0][0])

    with notes.section("doc_contiguous"):
        base = torch.tensor([[0, 1], [2, 3]])
        notes.record("base_contiguous", lambda: base.is_contiguous())
        t = base.transpose(0, 1)  # `t` is a view of `base`. No data movement.
        notes.record("t_contiguous", lambda: t.is_contiguous())
        notes.record("t_stride", lambda: t.stride())
        notes.record("t_shares", lambda: t.data_ptr() == base.data_ptr())
        c = t.contiguous()
        notes.record("c", lambda: c)
        notes.record("c_contiguous", lambda: c.is_contiguous())
        notes.record("c_stride", lambda: c.stride())
        notes.record("c_shares", lambda: c.data_ptr() == base.data_ptr())
        notes.record(
            "contiguous_of_contiguous_is_self", lambda: base.contiguous() is base
        )

    with notes.section("view"):
        a = torch.arange(12.0)
        v = a.view(3, 4)
        v2 = a.view(-1, 6)
        notes.record("v2_shape", lambda: v2.shape)
        v[1, 2] = 100.0
        notes.record("base_sees_view_write", lambda: a)
        notes.record("other_view_sees_write", lambda: v2)
        a[0] = -1.0
        notes.record("view_sees_base_write", lambda: v)
        notes.record("same_data_ptr", lambda: v.data_ptr() == a.data_ptr())
        notes.record("base_is_a", lambda: v._base is a)
        notes.record("view_of_view_base_is_a", lambda: v.view(12)._base is a)
        notes.record("base_of_base_is_none", lambda: a._base is None)
        notes.record("stride", lambda: v.stride())
        notes.record("row_offset", lambda: v[2].storage_offset())
        notes.record("row_offset_elements", lambda: _offset(v[2], a))
        notes.record("two_minus_ones", lambda: a.view(-1, -1))
        notes.record("bad_size", lambda: a.view(5, 3))
        notes.record("as_int32", lambda: torch.tensor([1.0]).view(torch.int32))

    with notes.section("view_noncontiguous"):
        x = torch.arange(6).reshape(2, 3).t()
        notes.record("view_error", lambda: x.view(6))
        r = x.reshape(6)
        notes.record("reshape", lambda: r)
        notes.record("reshape_copies", lambda: r.data_ptr() != x.data_ptr())
        y = torch.arange(6).reshape(2, 3)
        notes.record(
            "reshape_contiguous_is_view",
            lambda: y.reshape(3, 2).data_ptr() == y.data_ptr(),
        )
        z = torch.arange(12).reshape(3, 4)[:, :2]
        notes.record("sliced_view_flat", lambda: z.view(6))
        notes.record("sliced_view_split_dim", lambda: z.view(3, 1, 2).stride())

    with notes.section("slicing"):
        a = torch.arange(20).reshape(4, 5)
        s = a[1:3, ::2]
        notes.record("s", lambda: s)
        notes.record("s_stride", lambda: s.stride())
        notes.record("s_offset", lambda: s.storage_offset())
        notes.record("s_contiguous", lambda: s.is_contiguous())
        s[0, 0] = 99
        notes.record("base_after_slice_write", lambda: a)
        row = a[0]
        notes.record("row_offset", lambda: row.storage_offset())
        row.zero_()
        notes.record("base_after_row_zero", lambda: a)
        e = a[1, 2]  # a 0-dim view
        e.add_(1000)
        notes.record("element_view", lambda: e)
        notes.record("base_after_element_add", lambda: a[1])
        notes.record("ellipsis", lambda: a[..., 1])
        notes.record("none_index_shares", lambda: a[None].data_ptr() == a.data_ptr())
        notes.record("none_index_shape", lambda: a[None].shape)
        notes.record("negative_step", lambda: a[::-1])

    with notes.section("select"):
        a = torch.arange(20).reshape(4, 5)
        sel = a.select(1, 2)
        notes.record("sel", lambda: sel)
        notes.record("sel_stride", lambda: sel.stride())
        notes.record("sel_offset", lambda: sel.storage_offset())
        sel.fill_(-1)
        notes.record("base_after_select_fill", lambda: a)

    with notes.section("narrow"):
        a = torch.arange(20).reshape(4, 5)
        nar = a.narrow(0, 2, 2)
        notes.record("nar_offset", lambda: nar.storage_offset())
        nar.add_(1000)
        notes.record("base_after_narrow_add", lambda: a)
        notes.record("narrow_fn", lambda: torch.narrow(a, 1, 1, 2))
        notes.record("narrow_too_long", lambda: a.narrow(0, 3, 2))

    with notes.section("transpose"):
        a = torch.arange(6.0).reshape(2, 3)
        t = a.t()
        notes.record("t_stride", lambda: t.stride())
        t[0, 1] = 50.0
        notes.record("base_after_t_write", lambda: a)
        notes.record("T_equals_t", lambda: torch.equal(a.T, a.t()))
        p = torch.arange(24).reshape(2, 3, 4).permute(2, 0, 1)
        notes.record("permute_shape", lambda: p.shape)
        notes.record("permute_stride", lambda: p.stride())
        notes.record("permute_contiguous", lambda: p.is_contiguous())
        notes.record("permute_contiguous_stride", lambda: p.contiguous().stride())
        b = torch.arange(24).reshape(2, 3, 4)
        notes.record("mT_shape", lambda: b.mT.shape)
        notes.record("mT_stride", lambda: b.mT.stride())
        b.mT[0, 0, 1] = -5
        notes.record("base_after_mT_write", lambda: b[0, 1])
        c = torch.arange(6).reshape(2, 3)
        c.transpose_(0, 1)
        notes.record("transpose_inplace", lambda: c)
        notes.record("transpose_inplace_stride", lambda: c.stride())
        notes.record("t_on_3d", lambda: b.t())

    with notes.section("expand"):
        x = torch.tensor([[1], [2], [3]])
        e = x.expand(3, 4)
        notes.record("e", lambda: e)
        notes.record("e_stride", lambda: e.stride())
        notes.record("e_contiguous", lambda: e.is_contiguous())
        x[1, 0] = 20
        notes.record("e_sees_base_write", lambda: e)
        notes.record("minus_one", lambda: x.expand(-1, 2))
        notes.record("new_leading_dim", lambda: x.expand(2, 3, 4).shape)
        notes.record(
            "expand_as", lambda: torch.tensor([7]).expand_as(torch.zeros(2, 2))
        )
        notes.record("bad_expand", lambda: x.expand(2, 4))
        notes.record("write_into_expanded", lambda: e.add_(1))
        notes.record("contiguous_stride", lambda: e.contiguous().stride())

    with notes.section("squeeze"):
        x = torch.zeros(2, 1, 3, 1)
        notes.record("squeeze", lambda: x.squeeze().shape)
        notes.record("squeeze_1", lambda: x.squeeze(1).shape)
        notes.record("squeeze_0_noop", lambda: x.squeeze(0).shape)
        notes.record("squeeze_tuple", lambda: x.squeeze((1, 3)).shape)
        u = x.unsqueeze(0)
        notes.record("unsqueeze_stride", lambda: u.stride())
        notes.record("unsqueeze_shares", lambda: u.data_ptr() == x.data_ptr())
        notes.record("unsqueeze_neg", lambda: x.unsqueeze(-1).shape)
        s = x.squeeze()
        s[1, 2] = 5.0
        notes.record("base_after_squeezed_write", lambda: x[1, 0, :, 0])
        notes.record("unsqueeze_out_of_range", lambda: x.unsqueeze(6))
        x.unsqueeze_(1)
        notes.record("unsqueeze_inplace", lambda: x.shape)

    with notes.section("flatten"):
        x = torch.arange(24).reshape(2, 3, 4)
        f = x.flatten()
        notes.record("flatten_shares", lambda: f.data_ptr() == x.data_ptr())
        f[5] = -1
        notes.record("base_after_flat_write", lambda: x[0, 1])
        notes.record("flatten_1", lambda: x.flatten(1).shape)
        notes.record("flatten_0_1", lambda: x.flatten(0, 1).shape)
        xt = x.transpose(0, 1)
        notes.record(
            "flatten_noncontiguous_copies",
            lambda: torch.flatten(xt).data_ptr() != xt.data_ptr(),
        )
        notes.record("flatten_noncontiguous", lambda: torch.flatten(xt)[:8])
        u = f.unflatten(0, (4, 6))
        notes.record("unflatten", lambda: u.shape)
        notes.record("unflatten_minus_one", lambda: u.unflatten(1, (2, -1)).shape)

    with notes.section("split"):
        x = torch.arange(10)
        parts = x.split(3)
        notes.record("split_shapes", lambda: [p.shape for p in parts])
        notes.record("split_offsets", lambda: [p.storage_offset() for p in parts])
        parts[1][0] = 100
        notes.record("base_after_part_write", lambda: x)
        notes.record(
            "split_sizes", lambda: [p.tolist() for p in torch.split(x, [2, 8])]
        )

    with notes.section("chunk"):
        notes.record(
            "chunk_11_by_6", lambda: [len(c) for c in torch.arange(11).chunk(6)]
        )
        notes.record("chunk_6_by_4", lambda: [len(c) for c in torch.arange(6).chunk(4)])

    with notes.section("unbind"):
        m = torch.arange(6).reshape(2, 3)
        cols = m.unbind(1)
        notes.record("unbind", lambda: cols)
        notes.record("unbind_stride", lambda: cols[0].stride())
        cols[2].mul_(10)
        notes.record("base_after_unbind_mul", lambda: m)

    with notes.section("diagonal"):
        m = torch.arange(9.0).reshape(3, 3)
        d = m.diagonal()
        notes.record("d", lambda: d)
        notes.record("d_stride", lambda: d.stride())
        notes.record("upper_offset", lambda: m.diagonal(1).storage_offset())
        notes.record("lower", lambda: m.diagonal(-1))
        notes.record("lower_offset", lambda: m.diagonal(-1).storage_offset())
        d.fill_(0.0)
        notes.record("base_after_diagonal_fill", lambda: m)
        notes.record(
            "dims_1_2",
            lambda: torch.diagonal(torch.arange(24).reshape(2, 3, 4), 0, 1, 2),
        )
        notes.record("diag_copies", lambda: torch.diag(m).data_ptr() != m.data_ptr())

    with notes.section("data_detach"):
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        d = a.data
        notes.record("data_requires_grad", lambda: d.requires_grad)
        notes.record("data_shares", lambda: d.data_ptr() == a.data_ptr())
        d[0] = 10.0
        notes.record("a_after_data_write", lambda: a)
        notes.record("version_after_data_write", lambda: a._version)
        det = a.detach()
        notes.record("detach_requires_grad", lambda: det.requires_grad)
        notes.record("detach_is_leaf", lambda: det.is_leaf)
        notes.record("detach_shares", lambda: det.data_ptr() == a.data_ptr())
        det[1] = 20.0
        notes.record("a_after_detach_write", lambda: a)
        notes.record("version_after_detach_write", lambda: a._version)
        notes.record("detach_version", lambda: det._version)

    with notes.section("numpy"):
        t = torch.arange(4.0)
        n = t.numpy()
        n[0] = 9.0
        notes.record("tensor_sees_numpy_write", lambda: t)
        t.add_(1)
        notes.record("numpy_sees_add_", lambda: n)
        v = t[1:]
        v.numpy()[0] = -1.0
        notes.record("view_numpy_write", lambda: t)
        arr = np.arange(3, dtype=np.float32)
        s = torch.from_numpy(arr)
        arr[1] = 5.0
        notes.record("from_numpy_sees_write", lambda: s)
        s.mul_(2)
        notes.record("numpy_sees_mul_", lambda: arr)
        arr2 = np.arange(6.0).reshape(2, 3).T
        t2 = torch.from_numpy(arr2)
        notes.record("from_numpy_transposed_stride", lambda: t2.stride())
        notes.record("from_numpy_transposed_contiguous", lambda: t2.is_contiguous())
        notes.record("from_numpy_transposed", lambda: t2)
        notes.record("negative_strides", lambda: torch.from_numpy(np.arange(3)[::-1]))
        shared = torch.as_tensor(arr)
        copied = torch.tensor(arr)
        arr[0] = -3.0
        notes.record("as_tensor_shares", lambda: shared)
        notes.record("tensor_copies", lambda: copied)
        g = torch.ones(2, requires_grad=True)
        notes.record("requires_grad_numpy", lambda: g.numpy())
        notes.record("detach_numpy", lambda: g.detach().numpy())

    with notes.section("copies"):
        a = torch.arange(6).reshape(2, 3)
        c = a.clone()
        c[0, 0] = 100
        notes.record("base_after_clone_write", lambda: a)
        notes.record("clone_shares", lambda: c.data_ptr() == a.data_ptr())
        notes.record("clone_keeps_strides", lambda: a.t().clone().stride())
        notes.record("contiguous_strides", lambda: a.t().contiguous().stride())
        idx = a[[0, 1]]
        idx[0, 0] = -1
        notes.record("base_after_index_copy_write", lambda: a)
        notes.record("index_copy_shares", lambda: idx.data_ptr() == a.data_ptr())
        m = a[a > 2]
        m[0] = -1
        notes.record("mask_copy", lambda: m)
        notes.record("base_after_mask_copy_write", lambda: a)
        notes.record("column_list", lambda: a[:, [0, 2]])
        notes.record("tensor_index", lambda: a[torch.tensor([1])])
        a[[0, 1], [1, 2]] = 0
        notes.record("index_put", lambda: a)
        a[a > 3] = -7
        notes.record("mask_put", lambda: a)
        v = a[0]
        v[[0, 2]] = 55
        notes.record("index_put_through_view", lambda: a)

    return notes
