"""Blitz 3, "Neural Networks", in jaxblitz's functional API.

Run: python experiments/03_neural_networks.py

Define the network, push a random 32x32 input through it, compute a loss,
backpropagate, and update the weights by hand and with Optax.
"""

import jax
import jax.numpy as jnp
import optax

from jaxblitz import models

key = jax.random.key(0)
init_key, input_key, grad_key, target_key = jax.random.split(key, 4)

# -- Define the network ------------------------------------------------------
# torch: net = Net() -- here the network is a params tree plus a pure function.
params = models.init_lenet(init_key, in_channels=1)
print("Net (LeNet) parameters, named like torch's state_dict:")
for name, shape in models.named_shapes(params).items():
    print(f"  {name:13s} {shape}")
print("number of parameter tensors:", len(jax.tree.leaves(params)))
print("conv1's .weight shape:", params["conv1"]["weight"].shape)
print("total parameters:", models.count_params(params))

# -- A random 32x32 input --------------------------------------------------------
x = jax.random.normal(input_key, (1, 1, 32, 32))  # (B, C, H, W): a mini-batch of 1
out = models.lenet(params, x)
print("\nout =", out)

# torch: net.zero_grad(); out.backward(torch.randn(1, 10))
# JAX: nothing to zero; the vector-Jacobian product returns the gradients.
_, vjp_fn = jax.vjp(lambda p: models.lenet(p, x), params)
(grads,) = vjp_fn(jax.random.normal(grad_key, (1, 10)))
print("grad of conv1.bias from out.backward(v):", grads["conv1"]["bias"])

# -- Loss function ------------------------------------------------------------------
target = jax.random.normal(target_key, (10,)).reshape(1, -1)  # torch: .view(1, -1)


def loss_fn(params):
    return models.mse_loss(models.lenet(params, x), target)


loss = loss_fn(params)
print("\nMSE loss:", loss)
# torch prints loss.grad_fn and walks next_functions; JAX records the whole graph
# of operations as a jaxpr. The straight-line (impl="xla") forward reads best:
jaxpr = jax.make_jaxpr(
    lambda p: models.mse_loss(models.lenet(p, x, impl="xla"), target)
)(params)
print("jaxpr of the loss, its operations in order:")
print("  " + " -> ".join(eqn.primitive.name for eqn in jaxpr.eqns))

# -- Backprop -----------------------------------------------------------------------
# torch: conv1.bias.grad before backward is None (or zeros after zero_grad).
grads = jax.grad(loss_fn)(params)
print("\nconv1.bias.grad after backward:", grads["conv1"]["bias"])

# -- Update the weights by hand: weight = weight - learning_rate * gradient ----------
learning_rate = 0.01
sgd_params = jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)
print(
    f"\nmanual SGD step: loss before {loss:.6f}, loss after {loss_fn(sgd_params):.6f}"
)

# -- ... and with an optimizer (torch.optim.SGD(net.parameters(), lr=0.01)) ----------
tx = optax.sgd(learning_rate)
opt_state = tx.init(params)  # torch: optimizer.zero_grad() -- grads are return values
loss, grads = jax.value_and_grad(loss_fn)(params)
updates, opt_state = tx.update(grads, opt_state, params)
new_params = optax.apply_updates(params, updates)  # torch: optimizer.step()
print(f"optax SGD step: loss before {loss:.6f}, loss after {loss_fn(new_params):.6f}")
same = all(jax.tree.leaves(jax.tree.map(jnp.allclose, sgd_params, new_params)))
print("manual step == optax step:", same)
