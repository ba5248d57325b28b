"""Pooling's bool arguments (``ceil_mode``, ``count_include_pad``): torch's binding
takes a bool and nothing else (not 1, 0.0 or None), functions and modules alike;
compat refuses the same, with torch's words."""

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

CASES = {}
for _nd in (1, 2, 3):
    for _fn in ("max_pool", "avg_pool"):
        _args = [("ceil_mode", 1), ("ceil_mode", None), ("ceil_mode", 0.0)]
        if _fn == "avg_pool":
            _args += [("count_include_pad", 1)]
        for _arg, _value in _args:
            CASES[f"{_fn}{_nd}d {_arg}={_value!r}"] = (
                lambda m, f=f"{_fn}{_nd}d", a=_arg, v=_value: getattr(
                    m.nn.functional, f
                )(_input(m, f), 2, **{a: v})
            )
    for _module in ("MaxPool", "AvgPool"):
        for _kw in ({"ceil_mode": 1}, {"count_include_pad": 0}, {"ceil_mode": True}):
            if _module == "MaxPool" and "count_include_pad" in _kw:
                continue
            CASES[f"{_module}{_nd}d({_kw})"] = lambda m, c=f"{_module}{_nd}d", kw=_kw: (
                getattr(m.nn, c)(2, **kw)(_input(m, c))
            )


def _input(m, name):
    nd = int(name[-2])
    x = np.arange(5**nd, dtype=np.float32).reshape((1, 1) + (5,) * nd)
    return m.tensor(x)


def _outcome(m, case):
    try:
        out = CASES[case](m)
    except Exception as e:  # noqa: BLE001 -- what is raised is what is compared
        return type(e).__name__, str(e)
    return "value", np.asarray(out.numpy()).tolist()


@pytest.mark.parametrize("case", CASES)
def test_pooling_bool_arguments_as_torch(case):
    assert _outcome(compat, case) == _outcome(torch, case)
