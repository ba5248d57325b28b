"""Blitz 2 (extending autograd): ``torch.autograd.gradcheck``.

Compares the Jacobian that ``backward`` computes (through the tape, including
user ``Function``s) with central finite differences, with torch's defaults
(``eps=1e-6, atol=1e-5, rtol=1e-3``); use float64 inputs, as with torch.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from jaxblitz.compat.autograd.graph import no_grad


class GradcheckError(RuntimeError):
    pass


def _outputs(func, args) -> tuple:
    out = func(*args)
    return out if isinstance(out, tuple) else (out,)


def gradcheck(
    func,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_: Any,
) -> bool:
    """True if analytical and numerical Jacobians agree; else raise (or False)."""
    from jaxblitz.compat import autograd
    from jaxblitz.compat.creation import tensor
    from jaxblitz.compat.tensor import Tensor

    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    diff = [
        i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad
    ]
    for i in diff:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point. The check will likely fail if all the inputs are not of "
                "double precision floating point. ",
                stacklevel=2,
            )
    outputs = _outputs(func, inputs)
    for o_index, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.dtype.is_floating_point:
            continue
        n_out = out.numel()
        for i in diff:
            x = np.asarray(inputs[i].detach())
            numerical = np.zeros((x.size, n_out))
            with no_grad():
                for k in range(x.size):
                    cols = []
                    for sign in (1, -1):
                        moved = x.copy().reshape(-1)
                        moved[k] += sign * eps
                        args = list(inputs)
                        args[i] = tensor(moved.reshape(x.shape))
                        cols.append(
                            np.asarray(
                                _outputs(func, args)[o_index]._data, np.float64
                            ).reshape(-1)
                        )
                    numerical[k] = (cols[0] - cols[1]) / (2 * eps)
            analytical = np.zeros((x.size, n_out))
            out = _outputs(func, inputs)[o_index]
            for j in range(n_out):
                onehot = np.zeros(n_out, out.dtype.np)
                onehot[j] = 1
                (g,) = autograd.grad(
                    out,
                    inputs[i],
                    onehot.reshape(out.shape),
                    retain_graph=True,
                    allow_unused=True,
                )
                if g is not None:
                    analytical[:, j] = np.asarray(g._data, np.float64).reshape(-1)
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                message = (
                    f"Jacobian mismatch for output {o_index} with respect to input "
                    f"{i},\nnumerical:{numerical}\nanalytical:{analytical}\n"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True
