"""Blitz 1, "Tensors", in jaxblitz's functional API.

Run: python experiments/01_tensors.py

Create arrays (from data, from NumPy, from other arrays, random with an explicit
key), read their attributes, index, join, multiply, and cross the NumPy bridge --
which, unlike torch's, never shares memory.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz import tensors as T

key = jax.random.key(0)
rand_key, like_key, attr_key = jax.random.split(key, 3)

# -- Initializing a tensor ----------------------------------------------------------
data = [[1, 2], [3, 4]]
x_data = jnp.array(data)  # torch: torch.tensor(data)
print("from data:\n", x_data)

np_array = np.array(data, dtype=np.int32)
x_np = T.from_numpy(np_array)  # torch: torch.from_numpy(np_array)
print("from numpy:\n", x_np)

x_ones = jnp.ones_like(x_data)  # keeps the properties of x_data
print(f"Ones Tensor:\n {x_ones}")
x_rand = T.rand_like(like_key, x_data, dtype="float")  # overrides the int dtype
print(f"Random Tensor:\n {x_rand}")

shape = (2, 3)
print(f"Random Tensor with shape {shape}:\n {T.rand(rand_key, shape)}")
print(f"Ones Tensor:\n {jnp.ones(shape)}\nZeros Tensor:\n {jnp.zeros(shape)}")

# -- Attributes of a tensor ---------------------------------------------------------
tensor = T.rand(attr_key, 3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

# -- Operations on tensors ----------------------------------------------------------
# torch: if torch.cuda.is_available(): tensor = tensor.to("cuda")
if T.is_available("gpu"):
    tensor = T.device_put(tensor, "gpu")
print("devices:", T.devices(), "| gpu available:", T.is_available("gpu"))

tensor = jnp.ones((4, 4))
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor = tensor.at[:, 1].set(0)  # torch: tensor[:, 1] = 0 -- a new array, rebound
print(tensor)

t1 = jnp.concatenate([tensor, tensor, tensor], axis=1)  # torch.cat(..., dim=1)
print("cat shape:", t1.shape, "\n", t1)

# Matrix multiplication three ways; torch's out=y3 becomes a return value.
y1 = tensor @ tensor.T
y2 = tensor.dot(tensor.T)  # torch: tensor.matmul(tensor.T)
y3 = jnp.matmul(tensor, tensor.T)  # torch: torch.matmul(tensor, tensor.T, out=y3)
print("matmul three ways agree:", bool((y1 == y2).all() and (y2 == y3).all()))

# Element-wise product three ways.
z1 = tensor * tensor
z2 = jnp.multiply(tensor, tensor)  # torch: tensor.mul(tensor)
z3 = tensor**2
print(
    "element-wise product:\n", z1, "\nagree:", bool((z1 == z2).all() & (z2 == z3).all())
)

agg = tensor.sum()
agg_item = agg.item()  # a Python float, as in torch
print(agg_item, type(agg_item))

# In-place: torch's tensor.add_(5) mutates; JAX arrays are immutable, so rebind.
print(f"{tensor}\n")
tensor = tensor + 5
print(tensor)

# -- Bridge with NumPy --------------------------------------------------------------
t = jnp.ones(5)
n = T.to_numpy(t)  # torch: t.numpy() -- here a read-only view (zero-copy on CPU)
print(f"t: {t}\nn: {n}  writeable numpy view: {n.flags.writeable}")
t = t + 1  # torch's t.add_(1) would change n too; here t is a new array
print(f"after t = t + 1 -> t: {t}\n                   n: {n}  (numpy unchanged)")

n = np.ones(5, dtype=np.float32)
t = T.from_numpy(n)  # torch: torch.from_numpy(n) shares memory; this copies
np.add(n, 1, out=n)
print(
    f"after np.add(n, 1, out=n) -> t: {t}  (jax unchanged)\n                   n: {n}"
)
