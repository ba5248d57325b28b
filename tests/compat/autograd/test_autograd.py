"""compat autograd: the tape, grad modes, errors in torch's wording, Function."""

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.autograd import Function, gradcheck


def test_backward_accumulates_the_blitz_gradient():
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 4.5))


def test_gradients_accumulate_across_backward_calls():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_vector_jacobian_product_with_gradient():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    q = 3 * a**3 - b**2
    q.backward(gradient=torch.tensor([1.0, 1.0]))
    assert (9 * a**2 == a.grad).tolist() == [True, True]
    assert (-2 * b == b.grad).tolist() == [True, True]


def test_grad_fn_names_and_next_functions():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    assert y.grad_fn.name() == "AddBackward0"
    assert type(y.grad_fn).__name__ == "AddBackward0"
    ((acc, _),) = y.grad_fn.next_functions[:1]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
    assert (y * y).mean().grad_fn.name() == "MeanBackward0"
    assert x.is_leaf and not y.is_leaf


def test_no_grad_detach_and_requires_grad_propagation():
    x = torch.ones(2, requires_grad=True)
    assert (x * 2).requires_grad
    with torch.no_grad():
        assert not (x * 2).requires_grad
    assert not x.detach().requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert not (torch.ones(2) + torch.ones(2)).requires_grad


def test_data_edits_are_not_tracked_but_shared():
    x = torch.ones(2, requires_grad=True)
    x.data.mul_(3)
    assert x.tolist() == [3.0, 3.0] and x.requires_grad and x.grad_fn is None


def test_errors_use_torchs_wording():
    x = torch.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require"):
        torch.ones(2).sum().backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_inplace_on_a_non_leaf_is_recorded():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_returns_gradients_without_touching_grad():
    x = torch.tensor([3.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**2).sum(), x)
    assert g.tolist() == [6.0] and x.grad is None


class _Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True,)
        return grad_output * 3 * x**2


def test_custom_function_uses_its_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = _Cube.apply(x)
    assert y.grad_fn.name() == "_CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_gradcheck_passes_a_right_backward_and_fails_a_wrong_one():
    x = torch.randn(4, dtype=torch.double, requires_grad=True)
    assert gradcheck(_Cube.apply, (x,))

    class Wrong(_Cube):
        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * x

    assert not gradcheck(Wrong.apply, (x,), raise_exception=False)


@pytest.mark.parametrize("option", ["check_fwd_over_rev", "check_batched_grad"])
def test_gradgradcheck_refuses_the_checks_that_need_vmap_or_forward_mode(option):
    x = torch.ones(2, dtype=torch.double, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"gradgradcheck\\({option}=True\\)"):
        torch.autograd.gradgradcheck(_Cube.apply, (x,), **{option: True})


@pytest.mark.parametrize(
    "op",
    [
        lambda m, x, w: x * w,
        lambda m, x, w: x @ w.T,
        lambda m, x, w: m.exp(x @ w.T),
    ],
)
def test_grad_with_create_graph_keeps_the_history_of_inputs_not_asked_for(op):
    # autograd.grad(L, w, create_graph=True) runs on the graph cut to what w
    # needs; the gradient it returns must still depend on x (which it reads), so
    # differentiating it again reaches x: d/dx sum(g * g), against JAX's own.
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((2, 3)).astype(np.float32)
    ws = rng.standard_normal((2, 3)).astype(np.float32) * 0.5
    x = torch.tensor(xs, requires_grad=True)
    w = torch.tensor(ws, requires_grad=True)
    (g,) = torch.autograd.grad((op(torch, x, w) ** 2).sum(), w, create_graph=True)
    (g * g).sum().backward()

    def outer(x, w):
        inner = jax.grad(lambda w: jnp.sum(op(jnp, x, w) ** 2), argnums=0)(w)
        return jnp.sum(inner * inner)

    want_x, want_w = jax.grad(outer, argnums=(0, 1))(xs, ws)
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), want_w, rtol=1e-4, atol=1e-5)


def test_a_functions_backward_is_recorded_while_lazy_not_run_at_once():
    """Lazy mode: the gradients a custom Function's backward returns stay pending
    (the step still runs as one program at its read), with eager mode's values."""

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    was = torch.lazy.is_lazy()
    torch.lazy.set_lazy(True)
    try:
        x = torch.arange(4.0, requires_grad=True)
        torch.lazy.metrics(reset=True)
        Square.apply(x * 3).sum().backward()
        assert torch.lazy.metrics().get("syncs", 0) == 0
        assert x.grad.tolist() == [0.0, 18.0, 36.0, 54.0]
    finally:
        torch.lazy.set_lazy(was)


def test_gradients_summed_or_accumulated_while_lazy_stay_pending(monkeypatch):
    """Lazy mode: a second backward into ``.grad`` and two gradients meeting at
    one tensor are recorded sums, not reads (eager mode's values)."""
    monkeypatch.setattr(torch.lazy, "STEP_ENDS", 100)  # no cut at a step's end
    was = torch.lazy.is_lazy()
    torch.lazy.set_lazy(True)
    try:
        x = torch.ones(3, requires_grad=True)
        (x * x).sum().backward()
        torch.lazy.metrics(reset=True)
        (x * x).sum().backward()  # into the .grad the first one made
        (x * 3 + x * x).sum().backward()  # two gradients meet at x
        assert torch.lazy.metrics().get("syncs", 0) == 0
        assert x.grad.tolist() == [9.0, 9.0, 9.0]
    finally:
        torch.lazy.set_lazy(was)
