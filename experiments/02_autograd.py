"""Blitz 2, "A Gentle Introduction to torch.autograd", in jaxblitz's functional API.

Run: python experiments/02_autograd.py

torch records a graph and ``backward()`` fills ``.grad``; JAX transforms the
function instead: ``jax.grad(f)`` is a new function, gradients are return values,
and the "graph" is a jaxpr you can print.
"""

import jax
import jax.numpy as jnp
import optax

from jaxblitz import grad as G
from jaxblitz.models import init_lenet, lenet

# -- requires_grad and the graph ----------------------------------------------------
x = jnp.ones((2, 2), jnp.float32)  # torch: torch.ones(2, 2, requires_grad=True)
print(x)


def out_fn(x):
    y = x + 2
    z = y * y * 3
    return z.mean()


print("y:", x + 2, "\nz, out:", (x + 2) * (x + 2) * 3, out_fn(x))
# torch: y.grad_fn -> <AddBackward0>; JAX has no grad_fn, the graph is the jaxpr.
print("jaxpr of out:", jax.make_jaxpr(out_fn)(x))
print("jaxpr of its gradient:", jax.make_jaxpr(jax.grad(out_fn))(x))

# -- Gradients: out.backward(); x.grad ----------------------------------------------
print("d(out)/dx:\n", G.grad(out_fn)(x))  # 4.5 everywhere

# -- Differentiation in autograd: Q = 3a^3 - b^2 ------------------------------------
a = jnp.array([2.0, 3.0], jnp.float32)
b = jnp.array([6.0, 4.0], jnp.float32)
external_grad = jnp.array([1.0, 1.0], jnp.float32)
# torch: Q.backward(gradient=external_grad) -- a vjp with respect to both inputs
_, pullback = jax.vjp(lambda a, b: 3 * a**3 - b**2, a, b)
a_grad, b_grad = pullback(external_grad)
print("a.grad:", a_grad, "b.grad:", b_grad)
print(9 * a**2 == a_grad, -2 * b == b_grad)

# -- Vector-Jacobian product: y.backward(v) -----------------------------------------
x = jax.random.normal(jax.random.key(0), (3,), jnp.float32)


def doubling(x):
    y = x * 2
    while jnp.linalg.norm(y) < 1000:  # Python control flow: fine outside jit
        y = y * 2
    return y


print("y:", doubling(x))
v = jnp.array([0.1, 1.0, 0.0001], jnp.float32)
print("x.grad:", G.vjp_backward(doubling, x, v))  # torch: y.backward(v); x.grad

# -- Stop tracking: no_grad / detach / .data -> stop_gradient -----------------------
x = jnp.array([1.0, 2.0, 3.0], jnp.float32)
detached = lambda x: jnp.sum(G.stop_gradient(x**2) + x)  # torch: (x**2).detach()
print("grad of sum(stop_gradient(x**2) + x):", G.grad(detached)(x))
untracked = lambda x: jnp.sum(G.set_data(x * 2, x * 20))  # torch: y.data *= 10
print("grad after an untracked y.data *= 10:", G.grad(untracked)(x))

# -- Exclusion from the DAG: freeze all but the last layer --------------------------
params = init_lenet(jax.random.key(1))  # torch: the Blitz fine-tunes resnet18.fc
images = jax.random.normal(jax.random.key(2), (4, 1, 32, 32), jnp.float32)
labels = jnp.array([0, 1, 2, 3])
mask = G.freeze_mask(params, trainable=("fc3",))
tx = G.frozen(optax.sgd(1e-2, momentum=0.9), mask)  # torch: SGD(model.fc.params)


@jax.jit
def step(params, opt_state):  # torch: loss.backward(); optimizer.step()
    xent = optax.softmax_cross_entropy_with_integer_labels
    grads = jax.grad(lambda p: xent(lenet(p, images), labels).mean())(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


new, _ = step(params, tx.init(params))
moved = jax.tree.map(lambda p, q: bool((p != q).any()), new, params)
for name in params:
    print(f"{name}: trainable={mask[name]['weight']} moved={moved[name]['weight']}")

# -- Extending autograd: the notes' LinearFunction and gradcheck --------------------
kx, kw, kb = jax.random.split(jax.random.key(3), 3)
inputs = (  # torch: double tensors with requires_grad=True; gradcheck casts to f64
    jax.random.normal(kx, (4, 3)),
    jax.random.normal(kw, (2, 3)),
    jax.random.normal(kb, (2,)),
)
print("gradcheck(linear_custom):", G.gradcheck(G.linear_custom, inputs))
print("x64 still off afterwards, ones dtype:", jnp.ones(1).dtype)
