"""Every function at torch's top level is offered by compat or refused by name:
a script that calls one compat lacks stops with a NotImplementedError naming it
and why (quantized, sparse, complex, a backend's internal kernel...), never a
bare AttributeError; ``hasattr`` still answers False for a refused name."""

import inspect
import math

import pytest

import jaxblitz.compat as ct
from jaxblitz.compat._not_offered import REASONS, NotOffered

pt = pytest.importorskip("torch")


def _functions() -> list[str]:
    return sorted(
        name
        for name in dir(pt)
        if not name.startswith("_")
        and callable(getattr(pt, name))
        and not inspect.isclass(getattr(pt, name))
    )


def test_every_torch_function_is_offered_or_refused_by_name():
    unexplained = []
    for name in _functions():
        try:
            getattr(ct, name)
        except NotOffered as e:
            assert f"torch.{name} is not supported by jaxblitz.compat: " in str(e)
        except AttributeError:
            unexplained.append(name)
    assert not unexplained, f"absent with no reason given: {unexplained}"


def test_a_refused_name_is_one_torch_has_and_compat_does_not_offer():
    refused = REASONS["torch"]
    assert not [name for name in refused if name in vars(ct)]
    assert not [name for name in refused if not hasattr(pt, name)]
    assert not hasattr(ct, "sparse_coo_tensor")
    with pytest.raises(NotImplementedError, match="sparse tensors are not supported"):
        ct.sparse_coo_tensor  # noqa: B018 -- reading the name is the test
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        ct.no_such_name  # noqa: B018 -- a name torch lacks too: the plain error


def test_torchs_constants():
    for name in ("pi", "e", "inf"):
        assert getattr(ct, name) == getattr(pt, name)
    assert math.isnan(ct.nan) and ct.newaxis is pt.newaxis is None


def test_the_small_queries_answer_as_torch_does_on_a_cpu_build():
    x = ct.ones(2)
    assert ct.is_distributed(x) is pt.is_distributed(pt.ones(2)) is False
    assert ct.is_vulkan_available() is False
    ct.set_anomaly_enabled(True)
    try:
        assert ct.is_anomaly_enabled()
    finally:
        ct.set_anomaly_enabled(False)
    assert not ct.is_anomaly_enabled()
