"""Tests for jaxblitz.grad: the Blitz's autograd numbers, freezing, custom_vjp and
gradcheck (against PyTorch where it is installed)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxblitz import grad as G

X_VJP = np.array([0.3, -0.7, 1.1], dtype=np.float32)
V_VJP = np.array([0.1, 1.0, 0.0001], dtype=np.float32)


def blitz_out(x):
    y = x + 2
    z = y * y * 3
    return z.mean()


def blitz_q(a, b):
    return 3 * a**3 - b**2


def doubling(x):
    # The Blitz: y = x * 2; while y.data.norm() < 1000: y = y * 2
    y = x * 2
    while jnp.linalg.norm(y) < 1000:
        y = y * 2
    return y


def lenet_shaped_params(key):
    shapes = {
        "conv1": ((6, 1, 5, 5), (6,)),
        "conv2": ((16, 6, 5, 5), (16,)),
        "fc1": ((120, 400), (120,)),
        "fc2": ((84, 120), (84,)),
        "fc3": ((10, 84), (10,)),
    }
    keys = iter(jax.random.split(key, 2 * len(shapes)))
    return {
        name: {
            "weight": 0.1 * jax.random.normal(next(keys), w, jnp.float32),
            "bias": 0.1 * jax.random.normal(next(keys), b, jnp.float32),
        }
        for name, (w, b) in shapes.items()
    }


def lenet_shaped_loss(params, x):
    # Only the shapes matter here: a linear chain through every layer.
    h = x @ params["conv1"]["weight"].reshape(6, -1).T + params["conv1"]["bias"]
    h = jnp.tanh(h) @ params["conv2"]["weight"][:, :, 0, 0].T + params["conv2"]["bias"]
    h = jnp.tanh(jnp.tile(h, 25)) @ params["fc1"]["weight"].T + params["fc1"]["bias"]
    h = jnp.tanh(h) @ params["fc2"]["weight"].T + params["fc2"]["bias"]
    h = jnp.tanh(h) @ params["fc3"]["weight"].T + params["fc3"]["bias"]
    return jnp.mean(h**2)


@jax.custom_vjp
def linear_wrong(x, weight, bias):
    return x @ weight.T + bias


def _linear_wrong_bwd(residuals, grad_output):
    x, weight = residuals
    # Deliberate bug: grad_weight is twice what it should be.
    return grad_output @ weight, 2 * grad_output.T @ x, grad_output.sum(0)


linear_wrong.defvjp(lambda x, w, b: (linear_wrong(x, w, b), (x, w)), _linear_wrong_bwd)


def linear_args(dtype=np.float64):
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((4, 3)).astype(dtype),
        rng.standard_normal((2, 3)).astype(dtype),
        rng.standard_normal(2).astype(dtype),
    )


# -- The Blitz's numbers ------------------------------------------------------------


def test_mean_of_three_squares_has_gradient_four_point_five_everywhere():
    x = jnp.ones((2, 2), jnp.float32)
    out, x_grad = G.value_and_grad(blitz_out)(x)
    assert float(out) == 27.0
    np.testing.assert_array_equal(x_grad, np.full((2, 2), 4.5, np.float32))


def test_q_gradients_match_nine_a_squared_and_minus_two_b():
    a = jnp.array([2.0, 3.0], jnp.float32)
    b = jnp.array([6.0, 4.0], jnp.float32)
    external_grad = jnp.ones(2, jnp.float32)  # torch: Q.backward(gradient=...)
    a_grad = G.vjp_backward(lambda a: blitz_q(a, b), a, external_grad)
    b_grad = G.vjp_backward(lambda b: blitz_q(a, b), b, external_grad)
    np.testing.assert_array_equal(a_grad, [36.0, 81.0])
    np.testing.assert_array_equal(b_grad, [-12.0, -8.0])
    np.testing.assert_array_equal(a_grad, 9 * a**2)


def test_vjp_of_doubling_loop_is_power_of_two_times_v():
    x = jnp.asarray(X_VJP)
    y = doubling(x)
    scale = float(y[0] / x[0])
    assert scale == 2 ** round(np.log2(scale))
    x_grad = G.vjp_backward(doubling, x, jnp.asarray(V_VJP))
    np.testing.assert_allclose(x_grad, scale * V_VJP, rtol=1e-6)


def test_vjp_of_doubling_loop_matches_torch_backward():
    torch = pytest.importorskip("torch")
    x = torch.tensor(X_VJP, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    y.backward(torch.tensor(V_VJP))
    x_grad = G.vjp_backward(doubling, jnp.asarray(X_VJP), jnp.asarray(V_VJP))
    np.testing.assert_allclose(x_grad, x.grad.numpy(), rtol=1e-6)


def test_vjp_backward_of_non_scalar_without_v_raises_torch_like_error():
    with pytest.raises(ValueError, match="only for scalar outputs"):
        G.vjp_backward(lambda x: x * 2, jnp.ones(3, jnp.float32))


def test_vjp_backward_with_v_of_wrong_shape_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        G.vjp_backward(lambda x: x * 2, jnp.ones(3, jnp.float32), jnp.ones(2))


@pytest.mark.parametrize(
    "x", [jnp.arange(3), {"w": jnp.ones(2), "step": jnp.int32(1)}, 3], ids=str
)
def test_vjp_backward_refuses_integer_inputs_as_torch_does(x):
    # JAX would return float0 zeros; torch refuses requires_grad on an int tensor.
    with pytest.raises(TypeError, match="floating-point x; got dtype int"):
        G.vjp_backward(lambda x: 2.0 * jax.tree.leaves(x)[0], x, jnp.ones(3))


def test_vjp_backward_takes_python_floats_and_pytrees():
    assert G.vjp_backward(lambda x: x**2, 3.0) == 6.0
    grads = G.vjp_backward(lambda p: p["a"] * 2, {"a": jnp.ones(2)}, jnp.ones(2))
    np.testing.assert_array_equal(grads["a"], [2.0, 2.0])


def test_accumulating_the_same_gradient_twice_doubles_it():
    params = {"w": jnp.array([1.0, -2.0], jnp.float32), "b": jnp.float32(0.5)}
    loss = lambda p: jnp.sum((p["w"] * 3.0 + p["b"]) ** 2)
    once = G.grad(loss)(params)
    twice = G.accumulate(once, G.grad(loss)(params))
    for got, want in zip(jax.tree.leaves(twice), jax.tree.leaves(once), strict=True):
        np.testing.assert_array_equal(got, 2 * want)


def test_accumulate_rejects_trees_of_different_structure():
    with pytest.raises(ValueError, match="same structure"):
        G.accumulate({"w": jnp.ones(1)}, {"b": jnp.ones(1)})


def test_stop_gradient_blocks_the_gradient_through_its_argument():
    f = lambda x: jnp.sum(G.stop_gradient(x**2) + x)
    x = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    np.testing.assert_array_equal(G.grad(f)(x), np.ones(3, np.float32))


def test_set_data_changes_the_value_but_not_the_gradient():
    def f(x):
        y = x * 2
        y = G.set_data(y, y * 10)  # torch: y.data *= 10
        return jnp.sum(y), y

    x = jnp.array([1.0, 2.0], jnp.float32)
    (_, y), x_grad = jax.value_and_grad(f, has_aux=True)(x)
    np.testing.assert_array_equal(y, [20.0, 40.0])
    np.testing.assert_array_equal(x_grad, [2.0, 2.0])


# -- Freezing -----------------------------------------------------------------------


def test_freeze_mask_selects_layers_and_dotted_paths():
    params = lenet_shaped_params(jax.random.key(0))
    mask = G.freeze_mask(params, ("fc3", "fc2.bias"))
    assert mask["fc3"] == {"weight": True, "bias": True}
    assert mask["fc2"] == {"weight": False, "bias": True}
    assert mask["conv1"] == {"weight": False, "bias": False}


def test_freeze_mask_with_unknown_name_lists_the_available_layers():
    params = lenet_shaped_params(jax.random.key(0))
    with pytest.raises(ValueError, match=r"fc4.*'conv1', 'conv2', 'fc1', 'fc2', 'fc3'"):
        G.freeze_mask(params, ("fc4",))


def test_frozen_sgd_momentum_moves_only_the_last_layer():
    params = lenet_shaped_params(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (8, 25), jnp.float32)
    tx = G.frozen(optax.sgd(0.1, momentum=0.9), G.freeze_mask(params, ("fc3",)))
    opt_state = tx.init(params)
    new = params
    for _ in range(3):
        grads = jax.grad(lenet_shaped_loss)(new, x)
        updates, opt_state = tx.update(grads, opt_state, new)
        new = optax.apply_updates(new, updates)
    for name in ("conv1", "conv2", "fc1", "fc2"):
        for leaf in ("weight", "bias"):
            np.testing.assert_array_equal(new[name][leaf], params[name][leaf])
    assert not np.array_equal(new["fc3"]["weight"], params["fc3"]["weight"])
    assert not np.array_equal(new["fc3"]["bias"], params["fc3"]["bias"])


def test_optax_masked_alone_passes_frozen_gradients_through():
    # Why frozen() uses multi_transform + set_to_zero rather than optax.masked.
    params = {"a": jnp.ones(2, jnp.float32), "b": jnp.ones(2, jnp.float32)}
    grads = {"a": jnp.full(2, 3.0, jnp.float32), "b": jnp.full(2, 3.0, jnp.float32)}
    tx = optax.masked(optax.sgd(0.1), {"a": True, "b": False})
    updates, _ = tx.update(grads, tx.init(params), params)
    np.testing.assert_array_equal(updates["b"], grads["b"])  # not zero!
    frozen_tx = G.frozen(optax.sgd(0.1), {"a": True, "b": False})
    updates, _ = frozen_tx.update(grads, frozen_tx.init(params), params)
    np.testing.assert_array_equal(updates["b"], np.zeros(2, np.float32))


# -- Extending autograd -------------------------------------------------------------


def test_linear_custom_gradients_equal_automatic_ones():
    x, w, b = map(jnp.asarray, linear_args(np.float32))
    loss = lambda f: lambda *a: jnp.sum(jnp.sin(f(*a)))
    plain = lambda x, w, b: x @ w.T + b
    got = jax.grad(loss(G.linear_custom), argnums=(0, 1, 2))(x, w, b)
    want = jax.grad(loss(plain), argnums=(0, 1, 2))(x, w, b)
    for g, h in zip(got, want, strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-6, atol=1e-6)


def test_gradcheck_passes_on_linear_custom():
    assert G.gradcheck(G.linear_custom, linear_args())


# -- gradcheck ----------------------------------------------------------------------


def test_gradcheck_passes_on_a_function_of_several_inputs_with_tuple_output():
    f = lambda a, b: (jnp.sin(a) * b, jnp.sum(a**2 * jnp.exp(b)))
    a = np.array([0.5, -1.0, 2.0])
    b = np.array([1.5, 0.25, -0.75])
    assert G.gradcheck(f, (a, b))


def test_gradcheck_raises_on_wrong_backward_naming_both_values():
    x = linear_args()[0]
    with pytest.raises(G.GradcheckError) as info:
        G.gradcheck(linear_wrong, linear_args())
    message = str(info.value)
    assert "output 0 with respect to input 1" in message
    # First bad entry: d out[0, 0] / d weight[0, 0] is x[0, 0]; the bug doubles it.
    assert "output element (0, 0), input element (0, 0)" in message
    numerical = float(re.search(r"numerical: (\S+)", message).group(1))
    analytical = float(re.search(r"analytical: (\S+)", message).group(1))
    assert numerical == pytest.approx(x[0, 0], rel=1e-6)
    assert analytical == 2 * x[0, 0]


def test_gradcheck_returns_false_without_raising_when_asked():
    assert G.gradcheck(linear_wrong, linear_args(), raise_exception=False) is False


def test_gradcheck_leaves_the_x64_flag_off_afterwards():
    G.gradcheck(G.linear_custom, linear_args(np.float32))
    with pytest.raises(G.GradcheckError):
        G.gradcheck(linear_wrong, linear_args())
    assert jnp.ones(1).dtype == jnp.float32
    assert not jax.config.jax_enable_x64


def test_gradcheck_rejects_integer_inputs():
    with pytest.raises(TypeError, match="input 1 has dtype int"):
        G.gradcheck(lambda a, b: a * b, (np.ones(2), np.arange(2)))


@pytest.mark.parametrize("wrong", [False, True])
def test_gradcheck_agrees_with_torch_gradcheck(wrong):
    torch = pytest.importorskip("torch")

    class LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return x.mm(weight.t()) + bias

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            grad_weight = grad_output.t().mm(x) * (2 if wrong else 1)
            return grad_output.mm(weight), grad_weight, grad_output.sum(0)

    args = linear_args()
    torch_args = tuple(torch.tensor(a, requires_grad=True) for a in args)
    torch_ok = torch.autograd.gradcheck(
        LinearFunction.apply, torch_args, raise_exception=False
    )
    ours = G.gradcheck(
        linear_wrong if wrong else G.linear_custom, args, raise_exception=False
    )
    assert ours == torch_ok == (not wrong)
