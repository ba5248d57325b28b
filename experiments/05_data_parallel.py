"""Blitz 5, "Optional: Data Parallelism": nn.DataParallel done with JAX sharding.

Run: python experiments/05_data_parallel.py --devices 8   # 8 simulated CPU devices
     python experiments/05_data_parallel.py --devices 3   # the Blitz's 3-GPU split

On a machine with GPUs or TPUs, ``--devices all`` uses the real ones.
"""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--devices", default="2", help="N or 'all'")
args = parser.parse_args()
if args.devices != "all" and not (args.devices.isdigit() and int(args.devices) >= 1):
    parser.error(f"--devices: expected a positive int or 'all', got {args.devices!r}")
# With many more simulated CPU devices, XLA's all-reduce (a thread per device)
# misses its rendezvous deadline and aborts the process, or start-up crashes.
if args.devices != "all" and int(args.devices) > 256:
    parser.error(f"--devices: at most 256 simulated CPU devices, got {args.devices}")

import jax  # noqa: E402

if args.devices != "all":  # on CPU, simulate the devices (before JAX starts)
    jax.config.update("jax_num_cpu_devices", int(args.devices))

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxblitz import data, models, parallel, train  # noqa: E402

# -- Parameters and a random dataset (torch: RandomDataset(5, 100)) ---------------
input_size, output_size, batch_size, data_size = 5, 2, 30, 100
key = jax.random.key(0)
dataset = jax.random.normal(key, (data_size, input_size))  # (100, 5)

# -- Simple model: one Linear(5, 2) layer, a pure function of its params ----------
params = models.init_linear(jax.random.fold_in(key, 1), input_size, output_size)

# -- Create the model and DataParallel: a mesh with a "data" axis -----------------
try:
    mesh = parallel.make_mesh(args.devices)
except ValueError as e:  # more devices than this machine has
    parser.error(str(e))
n = mesh.devices.size
print(f"Let's use {n} {mesh.devices.flat[0].platform.upper()} devices!")

# -- Run the model: each device sees its shard (padded to equal sizes) ------------
for start in range(0, data_size, batch_size):
    batch = np.asarray(dataset[start : start + batch_size])  # 30, 30, 30, then 10
    inside, output = parallel.per_device_view(
        mesh, batch, lambda x: models.linear(params, x)
    )
    for device, (real, in_shape, out_shape) in enumerate(inside):
        if real:  # devices that got only padding are left out, as torch does
            print(
                f"\tIn Model: input size {(real, *in_shape[1:])} output size "
                f"{(real, *out_shape[1:])} (device {device}, shard {in_shape})"
            )
    print(f"Outside: input size {batch.shape} output_size {output.shape}")

# -- Training data-parallel: the same train_step, the batch sharded ---------------
# pmap, for contrast, would need the batch reshaped to (devices, B / devices, ...)
# and an explicit lax.pmean of the gradients; sharding needs neither.
digits = data.load("digits", "train")
subset = data.Dataset(digits.images[:300], digits.labels[:300], digits.class_names)
config = train.Config(dataset="digits", batch_size=batch_size, epochs=1, lr=0.01)
one, _ = train.fit(config, subset)
many, _ = train.fit(config, subset, runner=parallel.Sharded(mesh))
diff = max(
    float(jnp.max(jnp.abs(a - b)))
    for a, b in zip(
        jax.tree.leaves(one.params),
        jax.tree.leaves(parallel.to_host(many.params)),
        strict=True,
    )
)
print(f"Trained 1 epoch of {len(subset.labels)} digits, batch {batch_size} split "
      f"{parallel.shard_sizes(batch_size, n)} over {n} devices")  # fmt: skip
print(f"max |params on {n} devices - params on 1 device| = {diff:.1e}")
print("equal to one device:", diff < 1e-5)
