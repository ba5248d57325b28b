"""``torch.cpu.synchronize()`` and the benchmark timer's clock wait for work JAX
has dispatched but not finished: torch's CPU ops have finished when they return,
so a script that times a block between two synchronizes reads the block's time."""

import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import lazy
from jaxblitz.compat.utils import benchmark


@pytest.fixture(params=[False, True], ids=["eager", "lazy"])
def mode(request):
    was = lazy.is_lazy()
    lazy.set_lazy(request.param)
    yield request.param
    lazy.set_lazy(was)


def _slow_product():
    """A product whose computation outlasts its dispatch by far (a tenth of a second
    a product on two cores), so that it is in flight on return."""
    x = torch.full((1000, 1000), 1e-3)
    for _ in range(4):
        x = x @ x
    return x


@pytest.mark.parametrize(
    "wait", [torch.cpu.synchronize, benchmark.timer], ids=["cpu", "timer"]
)
def test_synchronize_returns_once_dispatched_work_is_computed(mode, wait):
    y = _slow_product()
    wait()
    array = y._value()
    assert not lazy.pending(array)  # lazily: the pending work ran
    assert array.is_ready()  # and was waited for, in both modes
