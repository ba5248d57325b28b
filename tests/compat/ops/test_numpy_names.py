"""torch's ops take NumPy's names ``axis`` for ``dim`` and ``keepdims`` for
``keepdim`` (its argument parser's aliases); those torch writes in Python
(``norm``, ``split``, ``unique``...) do not."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

CALLS = {
    "sum": lambda t, x: t.sum(x, axis=1, keepdims=True),
    "method sum": lambda t, x: x.sum(axis=0),
    "mean": lambda t, x: t.mean(x, 1, keepdims=True),
    "amax": lambda t, x: x.amax(axis=1),
    "max": lambda t, x: t.max(x, axis=1).values,
    "argmax": lambda t, x: x.argmax(axis=0),
    "std": lambda t, x: t.std(x, axis=0, keepdims=True),
    "softmax": lambda t, x: t.softmax(x, axis=1),
    "cumsum": lambda t, x: x.cumsum(axis=1),
    "cat": lambda t, x: t.cat([x, x], axis=0),
    "stack": lambda t, x: t.stack([x, x], axis=1),
    "squeeze": lambda t, x: x.unsqueeze(axis=0).squeeze(axis=0),
    "gather": lambda t, x: t.gather(x, axis=1, index=t.tensor([[0], [2]])),
    "sort": lambda t, x: x.sort(axis=0, descending=True).values,
    "topk": lambda t, x: x.topk(1, axis=1).indices,
    "chunk": lambda t, x: x.chunk(3, axis=1)[2],
    "size": lambda t, x: t.tensor(x.size(axis=1)),
    "logsumexp": lambda t, x: t.logsumexp(x, axis=1),
    "all": lambda t, x: (x > 0).all(axis=1),
}


@pytest.mark.parametrize("name", CALLS)
def test_an_op_takes_numpys_axis_and_keepdims_as_torch(name):
    ours = CALLS[name](compat, compat.arange(6.0).view(2, 3))
    theirs = CALLS[name](torch, torch.arange(6.0).view(2, 3))
    assert np.allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=0)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize(
    "call",
    [lambda t, x: t.norm(x, axis=0), lambda t, x: x.norm(axis=0),
     lambda t, x: t.split(x, 1, axis=0), lambda t, x: x.unique(axis=0)],
)  # fmt: skip
def test_an_op_torch_writes_in_python_refuses_numpys_names_as_torch(call):
    for t in (compat, torch):
        with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
            call(t, t.ones(2, 3))
