"""torch's ``out=`` against real PyTorch, on PyTorch's own inputs: every op
whose OpInfo ``supports_out``, called with an empty ``out`` of the result's
shape and dtype, writes torch's values into it and returns it; then the rules
around it (the resize warning, the cast and grad refusals, tuple outs, an
``out`` that is a view)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal imports it

from tests.compat import differential  # noqa: E402 -- needs torch

# ops whose values are draws or undefined: compared by shape and dtype only
UNDEFINED = {"bernoulli", "empty", "multinomial", "normal", "randn"}
# ops compat offers without out= (torch's own batch norm kernel)
WITHOUT_OUT = {"native_batch_norm"}


@functools.cache
def _ops() -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    found = {}
    for op in op_db:
        if op.name in WITHOUT_OUT or not op.supports_out:
            continue
        fn = differential._compat_function(op.name, op.op)
        if differential._offered(op) and fn is not None:
            found.setdefault(differential.row_name(op), op)
    return found


def _samples(op, n: int | None) -> list:
    samples = list(op.sample_inputs("cpu", torch.float32))
    if n == 1:
        return samples[:1]
    return [s for _, s in differential.spread(samples, n)]


def _empty_like(value, lib):
    if isinstance(value, torch.Tensor):
        dtype = getattr(lib, str(value.dtype).removeprefix("torch."))
        return lib.empty(tuple(value.shape), dtype=dtype)
    return tuple(_empty_like(v, lib) for v in value)


def _check_sample(op, sample) -> None:
    fn = differential._compat_function(op.name, op.op)
    args = (sample.input, *sample.args)
    try:
        expected = op.op(*args, **sample.kwargs)
    except Exception:
        pytest.skip("torch refuses the sample")
    if not isinstance(expected, torch.Tensor | tuple) or (
        isinstance(expected, tuple)
        and not all(isinstance(t, torch.Tensor) for t in expected)
    ):
        pytest.skip("not a tensor result")
    try:
        c_args, c_kwargs = differential.to_compat((args, sample.kwargs), {})
        c_out = _empty_like(expected, compat)
    except (
        differential.Unsupported,
        differential.NotConvertible,
        compat._not_offered.NotOffered,
    ) as e:
        pytest.skip(str(e))
    try:
        plain = fn(*c_args, **c_kwargs)
    except NotImplementedError as e:
        pytest.skip(f"compat does not offer the sample: {e}")
    t_out = _empty_like(expected, torch)
    try:
        ref = op.op(*args, **sample.kwargs, out=t_out)
    except Exception as e:  # noqa: BLE001 -- then compat refuses it alike
        with pytest.raises(type(e)) as refused:
            fn(*c_args, **c_kwargs, out=c_out)
        assert str(refused.value) == str(e)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fn(*c_args, **c_kwargs, out=c_out)
    assert not [w for w in caught if "was resized" in str(w.message)]
    assert (got is None) == (ref is None)  # torch's list outs: nothing returned
    if ref is None:
        ref, got = t_out, c_out
    elif isinstance(c_out, tuple):
        if type(plain).__name__ == type(expected).__name__:  # torch's named tuple
            assert type(got).__name__ == type(ref).__name__
        assert all(g is o for g, o in zip(got, c_out, strict=True))
    else:
        assert got is c_out
    for r, g in zip(
        ref if isinstance(ref, tuple) else (ref,),
        got if isinstance(got, tuple) else (got,),
        strict=True,
    ):
        assert tuple(g.shape) == tuple(r.shape)
        assert str(g.dtype) == str(r.dtype)
        if op.name not in UNDEFINED and op.name not in differential.GAUGE:
            np.testing.assert_allclose(
                np.asarray(g.numpy()), r.numpy(), rtol=1e-4, atol=1e-5
            )


@pytest.mark.parametrize("name", sorted(_ops()))
def test_an_out_of_the_result_shape_gets_torch_values(name):
    op = _ops()[name]
    samples = _samples(op, 1)
    if not samples:
        pytest.skip("no float32 sample")
    _check_sample(op, samples[0])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_ops()))
def test_every_sample_with_an_out_gets_torch_values(name):
    op = _ops()[name]
    for sample in _samples(op, 8):
        _check_sample(op, sample)
