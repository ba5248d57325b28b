"""Blitz 3, "Neural Networks", with the Net as a Flax NNX module.

Run: python experiments/03_neural_networks_nnx.py

The same steps as ``03_neural_networks.py``, written the way Flax NNX code is:
the network is an object holding its parameters (``jaxblitz.nnx.Net``, over the
core's kernels), ``nnx.grad`` differentiates it, ``nnx.Optimizer`` updates it.
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from jaxblitz import models
from jaxblitz import nnx as jnnx

input_key, grad_key, target_key = jax.random.split(jax.random.key(0), 3)

# -- Define the network ------------------------------------------------------------
net = jnnx.Net(in_channels=1, rngs=nnx.Rngs(0))  # torch: net = Net()
params = jnnx.to_params(net)  # torch: net.state_dict() (the core's params dict)
print("Net parameters, named like torch's state_dict:")
for name, shape in models.named_shapes(params).items():
    print(f"  {name:13s} {shape}")
print("conv1's .weight shape:", net.conv1.weight.shape)  # torch: net.conv1.weight
print("total parameters:", models.count_params(params))

# -- A random 32x32 input --------------------------------------------------------
x = jax.random.normal(input_key, (1, 1, 32, 32))  # (B, C, H, W)
out = net(x)  # torch: out = net(input)
print("\nout =", out)
print("same as the functional lenet:", bool(jnp.all(out == models.lenet(params, x))))

# torch: net.zero_grad(); out.backward(torch.randn(1, 10)) -- here a vjp of the net
v = jax.random.normal(grad_key, (1, 10))
grads = nnx.grad(lambda net: jnp.sum(net(x) * v))(net)  # an nnx.State like net's
print("grad of conv1.bias from out.backward(v):", grads["conv1"]["bias"][...])

# -- Loss function ------------------------------------------------------------------
target = jax.random.normal(target_key, (10,)).reshape(1, -1)  # torch: .view(1, -1)


def loss_fn(net):
    return models.mse_loss(net(x), target)  # torch: criterion(output, target)


loss = loss_fn(net)
print("\nMSE loss:", loss)

# -- Backprop -----------------------------------------------------------------------
grads = nnx.grad(loss_fn)(net)  # torch: loss.backward(); net.conv1.bias.grad
print("conv1.bias.grad after backward:", grads["conv1"]["bias"][...])

# -- Update the weights: torch.optim.SGD(net.parameters(), lr=0.01) --------------------
optimizer = nnx.Optimizer(net, optax.sgd(0.01), wrt=nnx.Param)
loss, grads = nnx.value_and_grad(loss_fn)(net)
optimizer.update(net, grads)  # torch: optimizer.step() -- net changes in place
print(
    f"\nnnx.Optimizer SGD step: loss before {loss:.6f}, loss after {loss_fn(net):.6f}"
)

# The functional core's step from the same weights lands on the same ones.
by_hand = jax.tree.map(lambda p, g: p - 0.01 * g, params, nnx.to_pure_dict(grads))
same = jax.tree.map(jnp.allclose, by_hand, jnnx.to_params(net))
print("NNX step == functional step:", all(jax.tree.leaves(same)))
