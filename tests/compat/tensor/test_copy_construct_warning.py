"""torch.tensor(a_tensor) and new_tensor(a_tensor) copy, with torch's
UserWarning recommending detach().clone(); as_tensor, asarray and a list of
tensors do not warn."""

import warnings

import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def _warnings(t, make) -> list[tuple[type, str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(t)
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.tensor(t.ones(2)),
        lambda t: t.tensor(t.ones(2, requires_grad=True), dtype=t.float64),
        lambda t: t.zeros(1).new_tensor(t.ones(2)),
    ],
    ids=["plain", "requiring grad", "new_tensor"],
)
def test_a_tensor_given_to_torch_tensor_warns_as_torchs(make):
    ours = _warnings(ct, make)
    assert ours == _warnings(pt, make)
    assert ours[0][0] is UserWarning
    assert ours[0][1].startswith("To copy construct from a tensor, it is recommended")


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.as_tensor(t.ones(2)),
        lambda t: t.as_tensor(t.ones(2), dtype=t.int64),
        lambda t: t.tensor([t.ones(()), t.zeros(())]),
        lambda t: t.tensor(t.ones(2).numpy()),
        lambda t: t.asarray(t.ones(2)),
    ],
    ids=["as_tensor", "as_tensor to int64", "list of tensors", "array", "asarray"],
)
def test_other_data_makes_no_warning_as_in_torch(make):
    assert _warnings(ct, make) == _warnings(pt, make) == []


def test_the_copy_keeps_values_and_leaves_the_graph():
    source = ct.ones(2, requires_grad=True) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copy = ct.tensor(source)
    assert copy.tolist() == [3.0, 3.0]
    assert copy.grad_fn is None and not copy.requires_grad


def test_the_warning_names_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ct.tensor(ct.ones(2))
        ct.ones(1).new_tensor(ct.ones(2))
    assert [w.filename for w in caught] == [__file__, __file__]
