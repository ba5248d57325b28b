"""Blitz 2, "autograd" (checking forward mode): the Jacobian forward-mode AD
computes, column by column through dual tensors, for
``gradcheck(check_forward_ad=True)`` -- as torch's gradcheck builds it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jaxblitz.compat.autograd import forward_ad


def forward_jacobian(
    func: Callable, inputs: tuple, diff: list[int], checked: list[int]
) -> list[list[np.ndarray]]:
    """Per checked output, per input in ``diff``: d(out)/d(input) as
    (output elements, input elements), from one dual pass per input element
    (a unit tangent there, zeros elsewhere)."""
    with forward_ad.dual_level():
        tangents, args = {}, list(inputs)
        for i in diff:
            x = inputs[i]
            tangents[i] = x.detach().new_zeros(x.shape)
            args[i] = forward_ad.make_dual(x.detach(), tangents[i])
        columns: list[list[list[np.ndarray]]] = [[[] for _ in diff] for _ in checked]
        sizes = [0] * len(checked)
        for k, i in enumerate(diff):
            flat = tangents[i].view(-1)
            for e in range(flat.numel()):
                flat[e] = 1.0
                outs = func(*args)
                outs = outs if isinstance(outs, tuple) else (outs,)
                for o, index in enumerate(checked):
                    out = outs[index]
                    tangent = forward_ad.unpack_dual(out).tangent
                    column = np.zeros(out.numel())
                    if tangent is not None:
                        column = np.asarray(tangent.detach()._data, np.float64)
                    columns[o][k].append(column.reshape(-1))
                    sizes[o] = out.numel()
                flat[e] = 0.0
    return [
        [np.stack(cols, axis=1) if cols else np.zeros((size, 0)) for cols in per_out]
        for per_out, size in zip(columns, sizes, strict=True)
    ]
