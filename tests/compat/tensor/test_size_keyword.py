"""Factories that take ``*size`` take it as the keyword ``size=`` too, as torch."""

from __future__ import annotations

import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")

FACTORIES = ["empty", "zeros", "ones", "rand", "randn"]
METHODS = ["new_empty", "new_zeros", "new_ones"]


@pytest.mark.parametrize("name", FACTORIES)
def test_a_factory_takes_its_size_by_keyword_as_torch(name):
    ours = getattr(compat, name)(size=(2, 3), dtype=compat.float64)
    theirs = getattr(torch, name)(size=(2, 3), dtype=torch.float64)
    assert tuple(ours.shape) == tuple(theirs.shape) == (2, 3)
    assert str(ours.dtype) == str(theirs.dtype)
    if name in ("zeros", "ones"):
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", METHODS)
def test_a_new_factory_method_takes_its_size_by_keyword_as_torch(name):
    ours = getattr(compat.ones(2, dtype=compat.int64), name)(size=[3, 1])
    theirs = getattr(torch.ones(2, dtype=torch.int64), name)(size=[3, 1])
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 1)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.int64"


def _message(call):
    with pytest.raises(TypeError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize("name", FACTORIES)
def test_a_size_given_twice_is_refused_with_torchs_message(name):
    ours = _message(lambda: getattr(compat, name)(2, size=(2,)))
    assert ours == _message(lambda: getattr(torch, name)(2, size=(2,)))


@pytest.mark.parametrize("name", METHODS)
def test_a_new_factory_method_given_its_size_twice_is_refused_as_torch(name):
    ours = _message(lambda: getattr(compat.ones(1), name)(2, size=(2,)))
    assert ours == _message(lambda: getattr(torch.ones(1), name)(2, size=(2,)))
