"""The order in which backward runs the graph's nodes, as hooks see it: torch's
engine runs the ready node made last first, and a leaf's AccumulateGrad as soon
as it is ready. Each case is run on compat in both modes and on real PyTorch."""

from __future__ import annotations

import pytest

import jaxblitz.compat

pt = pytest.importorskip("torch")

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _hooked(tensors: dict, seen: list, post: bool = True) -> None:
    for name, t in tensors.items():
        if post:
            t.register_post_accumulate_grad_hook(lambda _, n=name: seen.append(n))
        else:
            t.register_hook(lambda g, n=name: seen.append(n))


@case
def post_accumulate_hooks_of_a_small_network(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 5), torch.nn.GELU(), torch.nn.LayerNorm(5),
        torch.nn.Linear(5, 3),
    )  # fmt: skip
    seen: list = []
    _hooked(dict(net.named_parameters()), seen)
    net(torch.ones(2, 4)).sum().backward()
    return seen


@case
def post_accumulate_hooks_of_leaves_used_twice(torch):
    a, b, c = (torch.ones(3, requires_grad=True) for _ in range(3))
    seen: list = []
    _hooked({"a": a, "b": b, "c": c}, seen)
    ((a * b).sum() + (c * 2).sum() + a.sum()).backward()
    return seen


@case
def tensor_hooks_of_intermediates(torch):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    z = x.exp()
    w = y * z
    v = y + w
    seen: list = []
    _hooked({"x": x, "y": y, "z": z, "w": w}, seen, post=False)
    v.sum().backward()
    return seen


@case
def leaves_of_one_op_in_argument_order(torch):
    ts = {k: torch.ones(2, requires_grad=True) for k in "pqrst"}
    seen: list = []
    _hooked(ts, seen)
    torch.stack(list(ts.values())).sum().backward()
    return seen


@case
def a_function_with_two_outputs(torch):
    class Split(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    x = torch.ones(2, requires_grad=True)
    k = torch.ones(2, requires_grad=True)
    a, b = Split.apply(x)
    seen: list = []
    _hooked({"x": x, "k": k}, seen)
    _hooked({"a": a, "b": b}, seen, post=False)
    (a * k + b).sum().backward()
    return seen


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_hooks_run_in_torchs_order(name, mode, request):
    theirs = CASES[name](pt)
    request.getfixturevalue(mode)
    assert CASES[name](jaxblitz.compat) == theirs
