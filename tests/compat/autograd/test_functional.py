"""``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``,
``hvp`` and ``vhp`` -- each case run on compat in both modes and on real PyTorch,
and compared: values, dtypes, shapes, whether results keep their history, the
gradients reached by a backward through them; errors by type and first line."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat
from tests.compat.notes.record import plain

pt = pytest.importorskip("torch")

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def outcome(torch, fn):
    try:
        return plain(fn(torch, torch.autograd.functional))
    except Exception as error:  # noqa: BLE001 -- the error is the result
        return plain(error)


def agree(ours, theirs) -> bool:
    if isinstance(theirs, tuple) and theirs[:1] == ("tensor",):
        if not (isinstance(ours, tuple) and ours[:3] == theirs[:3]):
            return False
        return np.allclose(np.asarray(ours[3]), np.asarray(theirs[3]), 1e-5, 1e-6)
    if isinstance(theirs, list | tuple):
        return (
            type(ours) is type(theirs)
            and len(ours) == len(theirs)
            and all(map(agree, ours, theirs))
        )
    return type(ours) is type(theirs) and ours == theirs


def seq(torch, *shape, a=1.37):
    n = int(np.prod(shape))
    return torch.arange(n, dtype=torch.float32).mul(a).sin().view(*shape)


def two_outputs(x, w):
    return (x @ w).tanh(), (x.exp() * 2).sum()


def energy(x, y):
    return (x.sin() * y.pow(2)).sum() + (x * x).sum() * y[0]


@case
def jacobian_of_one_input_and_one_output(torch, F):
    j = F.jacobian(lambda x: x.sin() * x.sum(), seq(torch, 3))
    return j, j.requires_grad


@case
def jacobian_of_two_inputs_and_two_outputs(torch, F):
    return F.jacobian(two_outputs, (seq(torch, 2, 3), seq(torch, 3, 4, a=0.3)))


@case
def jacobian_vectorized_and_forward_mode(torch, F):
    inputs = (seq(torch, 2, 3), seq(torch, 3, 4, a=0.3))
    return (
        F.jacobian(two_outputs, inputs, vectorize=True),
        F.jacobian(two_outputs, inputs, vectorize=True, strategy="forward-mode"),
    )


@case
def jacobian_is_zero_for_an_unused_input(torch, F):
    return F.jacobian(lambda x, y: x * 2, (seq(torch, 2), seq(torch, 3)))


@case
def jacobian_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    j = F.jacobian(lambda t: t.pow(3) * t.sum(), x, create_graph=True)
    j.pow(2).sum().backward()
    return j, j.requires_grad, x.grad


@case
def jacobian_vectorized_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    j = F.jacobian(lambda t: t.pow(3) * t.sum(), x, create_graph=True, vectorize=True)
    j.pow(2).sum().backward()
    return j, j.requires_grad, x.grad


@case
def jacobian_leaves_an_input_that_requires_grad_alone(torch, F):
    x = seq(torch, 3).requires_grad_()
    j = F.jacobian(lambda t: t.exp(), x)
    return j, j.requires_grad, x.grad


@case
def jacobian_strict_output_independent_of_an_input(torch, F):
    return F.jacobian(lambda x, y: x * 2, (seq(torch, 2), seq(torch, 3)), strict=True)


@case
def jacobian_strict_output_that_does_not_require_grad(torch, F):
    return F.jacobian(lambda x: torch.ones(2), seq(torch, 2), strict=True)


@case
def jacobian_strict_and_vectorize_are_refused_together(torch, F):
    return F.jacobian(lambda x: x * 2, seq(torch, 2), strict=True, vectorize=True)


@case
def jacobian_strict_with_create_graph_of_a_linear_function(torch, F):
    return F.jacobian(lambda x: x * 2, seq(torch, 2), strict=True, create_graph=True)


@case
def jacobian_forward_mode_wants_vectorize(torch, F):
    return F.jacobian(lambda x: x * 2, seq(torch, 2), strategy="forward-mode")


@case
def jacobian_forward_mode_refuses_create_graph(torch, F):
    f = F.jacobian
    return f(lambda x: x, seq(torch, 2), create_graph=True, strategy="forward-mode")


@case
def jacobian_forward_mode_refuses_strict(torch, F):
    f = F.jacobian
    return f(lambda x: x, seq(torch, 2), strict=True, strategy="forward-mode")


@case
def jacobian_names_a_strategy_it_does_not_know(torch, F):
    return F.jacobian(lambda x: x, seq(torch, 2), strategy="sideways")


@case
def jacobian_refuses_inputs_that_are_not_tensors(torch, F):
    return F.jacobian(lambda x, y: x, (seq(torch, 2), 3.0))


@case
def jacobian_refuses_outputs_that_are_not_tensors(torch, F):
    return F.jacobian(lambda x: 3.0, seq(torch, 2))


@case
def hessian_of_two_inputs(torch, F):
    return F.hessian(energy, (seq(torch, 3), seq(torch, 2, a=0.4)))


@case
def hessian_vectorized_and_forward_over_reverse(torch, F):
    inputs = (seq(torch, 3), seq(torch, 2, a=0.4))
    return (
        F.hessian(energy, inputs, vectorize=True),
        F.hessian(
            energy, inputs, vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
    )


@case
def hessian_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    h = F.hessian(lambda t: t.pow(4).sum(), x, create_graph=True)
    h.sum().backward()
    return h, h.requires_grad, x.grad


@case
def hessian_wants_a_single_element(torch, F):
    return F.hessian(lambda x: x.pow(2), seq(torch, 3))


@case
def hessian_wants_a_single_tensor(torch, F):
    return F.hessian(lambda x: (x.sum(), x.sum()), seq(torch, 3))


@case
def hessian_strict_of_a_linear_function(torch, F):
    return F.hessian(lambda x: x.sum() * 3, seq(torch, 3), strict=True)


@case
def vjp_of_one_and_of_two_outputs(torch, F):
    x, w = seq(torch, 2, 3), seq(torch, 3, 4, a=0.3)
    v = (seq(torch, 2, 4, a=0.6), torch.tensor(1.5))
    return F.vjp(lambda t: t.exp().sum(), x), F.vjp(two_outputs, (x, w), v)


@case
def vjp_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    out, g = F.vjp(lambda t: t.pow(3), x, seq(torch, 3, a=0.5), create_graph=True)
    (g.sum() + out.sum()).backward()
    return out, g, g.requires_grad, x.grad


@case
def vjp_wants_v_for_a_vector_output(torch, F):
    return F.vjp(lambda x: x * 2, seq(torch, 3))


@case
def vjp_names_a_v_of_the_wrong_size(torch, F):
    return F.vjp(lambda x: x * 2, seq(torch, 3), seq(torch, 4))


@case
def vjp_names_a_v_tuple_of_the_wrong_length(torch, F):
    return F.vjp(two_outputs, (seq(torch, 2, 3), seq(torch, 3, 4)), seq(torch, 2, 4))


@case
def vjp_strict_output_independent_of_an_input(torch, F):
    f = F.vjp
    return f(lambda x, y: x.sum(), (seq(torch, 2), seq(torch, 3)), strict=True)


@case
def jvp_of_two_inputs_and_two_outputs(torch, F):
    x, w = seq(torch, 2, 3), seq(torch, 3, 4, a=0.3)
    return F.jvp(two_outputs, (x, w), (seq(torch, 2, 3, a=0.2), seq(torch, 3, 4)))


@case
def jvp_of_a_scalar_input_needs_no_v(torch, F):
    return F.jvp(lambda x: torch.stack([x.sin(), x * 3]), torch.tensor(0.7))


@case
def jvp_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    out, jv = F.jvp(lambda t: t.pow(3), x, seq(torch, 3, a=0.5), create_graph=True)
    jv.sum().backward()
    return out, jv, jv.requires_grad, x.grad


@case
def jvp_wants_v_for_a_vector_input(torch, F):
    return F.jvp(lambda x: x * 2, seq(torch, 3))


@case
def jvp_strict_output_independent_of_an_input(torch, F):
    f = F.jvp
    return f(lambda x: torch.ones(2) + 0 * x.detach(), seq(torch, 2), strict=True)


@case
def jvp_strict_linear_function(torch, F):
    return F.jvp(lambda x: x * 2, seq(torch, 2), seq(torch, 2), strict=True)


@case
def hvp_and_vhp_of_two_inputs(torch, F):
    inputs = (seq(torch, 3), seq(torch, 2, a=0.4))
    v = (seq(torch, 3, a=0.9), seq(torch, 2, a=0.1))
    return F.hvp(energy, inputs, v), F.vhp(energy, inputs, v)


@case
def hvp_and_vhp_with_create_graph_then_backward(torch, F):
    x = seq(torch, 3).requires_grad_()
    v = seq(torch, 3, a=0.5)
    _, hv = F.hvp(lambda t: t.pow(4).sum(), x, v, create_graph=True)
    _, vh = F.vhp(lambda t: t.pow(4).sum(), x, v, create_graph=True)
    (hv.sum() + vh.pow(2).sum()).backward()
    return hv, vh, hv.requires_grad, x.grad


@case
def hvp_wants_a_single_element(torch, F):
    return F.hvp(lambda x: x.pow(2), seq(torch, 3), seq(torch, 3))


@case
def vhp_wants_a_single_tensor(torch, F):
    return F.vhp(lambda x: (x.sum(),), seq(torch, 3), seq(torch, 3))


@case
def hvp_strict_of_a_linear_function(torch, F):
    return F.hvp(lambda x: x.sum(), seq(torch, 3), seq(torch, 3), strict=True)


@case
def vhp_strict_of_a_quadratic_with_create_graph(torch, F):
    f = F.vhp
    return f(lambda x: x.pow(2).sum(), seq(torch, 3), seq(torch, 3), True, True)


@pytest.mark.parametrize("mode", ["eagerly", "lazily"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_autograd_functional_matches_pytorch(name, mode, request):
    theirs = outcome(pt, CASES[name])
    request.getfixturevalue(mode)
    ours = outcome(jaxblitz.compat, CASES[name])
    assert agree(ours, theirs), f"\ntorch:  {theirs}\ncompat: {ours}"
