"""nn.Buffer: a tensor marked as a buffer registers itself when assigned to a
module attribute, persistent or not, as torch's (2.5 on) does."""

import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def _module(t):
    class Net(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.mean = t.nn.Buffer(t.zeros(2))
            self.scratch = t.nn.Buffer(t.ones(2), persistent=False)
            self.plain = t.ones(1)  # a tensor alone is no buffer

    return Net()


def _kinds(m) -> tuple:
    return (
        list(m.state_dict()),
        [n for n, _ in m.named_buffers()],
        [n for n, _ in m.named_parameters()],
    )


@pytest.mark.parametrize("t", [ct, pt], ids=["compat", "torch"])
def test_buffer_returns_the_data_detached_as_a_plain_tensor_marked_as_buffer(t):
    data = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.nn.Buffer(data)
    assert type(b) is t.Tensor and b is not data and b.grad_fn is None
    assert b.requires_grad and b.persistent is True and b.tolist() == [1.0, 2.0]
    assert isinstance(b, t.nn.Buffer) and isinstance(b, t.Tensor)
    assert not isinstance(data, t.nn.Buffer)
    assert not isinstance(t.nn.Parameter(t.ones(1)), t.nn.Buffer)
    assert t.nn.Buffer(t.ones(1), persistent=False).persistent is False
    empty = t.nn.Buffer()
    assert tuple(empty.shape) == (0,) and isinstance(empty, t.nn.Buffer)
    assert t.nn.parameter.Buffer is t.nn.Buffer


@pytest.mark.parametrize("t", [ct, pt], ids=["compat", "torch"])
def test_buffer_shares_the_datas_values(t):
    data = t.zeros(2)
    b = t.nn.Buffer(data)
    data.add_(3.0)
    assert b.tolist() == [3.0, 3.0]
    b.add_(1.0)  # stays marked through an in-place op
    assert isinstance(b, t.nn.Buffer) and data.tolist() == [4.0, 4.0]
    assert not isinstance(b * 2, t.nn.Buffer)


def test_assigning_a_buffer_registers_it_as_torchs_module_does():
    ours, theirs = _module(ct), _module(pt)
    assert _kinds(ours) == _kinds(theirs) == (["mean"], ["mean", "scratch"], [])
    assert isinstance(ours.mean, ct.nn.Buffer)
    for m, t in ((ours, ct), (theirs, pt)):
        m.mean = t.ones(3)  # a registered buffer takes a plain tensor
        m.scratch = t.nn.Buffer(t.ones(1))  # the new Buffer's persistence
        m.extra = t.nn.Buffer(t.ones(1), persistent=False)
    assert _kinds(ours) == _kinds(theirs)
    assert _kinds(ours)[0] == ["mean", "scratch"]
    assert ours.state_dict()["mean"].tolist() == [1.0, 1.0, 1.0]
    for m, t in ((ours, ct), (theirs, pt)):
        m.mean = t.nn.Parameter(t.ones(1))  # a Parameter takes the name over
    assert _kinds(ours) == _kinds(theirs)
    assert _kinds(ours)[2] == ["mean"]


def test_a_buffer_round_trips_through_state_dict_and_load_state_dict():
    src, dst = _module(ct), _module(ct)
    src.mean.add_(5.0)
    dst.load_state_dict(src.state_dict())
    assert dst.mean.tolist() == [5.0, 5.0]
    assert dst.scratch.tolist() == [1.0, 1.0]  # not persistent: not loaded


def _errors(t, assign) -> tuple[type, str]:
    m = _module(t)
    m.lin = t.nn.Linear(1, 1)
    m.p = t.nn.Parameter(t.ones(1))
    m.x = 5
    with pytest.raises(Exception) as caught:
        assign(m, t)
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize(
    "assign",
    [
        lambda m, t: setattr(m, "lin", t.nn.Buffer(t.ones(1))),
        lambda m, t: setattr(m, "p", t.nn.Buffer(t.ones(1))),
        lambda m, t: setattr(m, "x", t.nn.Buffer(t.ones(1))),
        lambda m, t: setattr(m, "mean", [1.0]),
    ],
    ids=["over-a-module", "over-a-parameter", "over-an-attribute", "not-a-tensor"],
)
def test_a_buffer_that_cannot_be_assigned_fails_as_torchs(assign):
    ours, theirs = _errors(ct, assign), _errors(pt, assign)
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("t", [ct, pt], ids=["compat", "torch"])
def test_a_buffer_before_module_init_fails_with_torchs_words(t):
    class Early(t.nn.Module):
        def __init__(self):
            self.mean = t.nn.Buffer(t.zeros(2))

    with pytest.raises(
        AttributeError, match=r"^cannot assign buffer before Module.__init__\(\) call$"
    ):
        Early()
    with pytest.raises(TypeError, match="takes from 1 to 2 positional arguments"):
        t.nn.Buffer(t.ones(1), False)
