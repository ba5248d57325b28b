"""Blitz 4, "Training a classifier": LeNet on CIFAR-10 with a Flax NNX Net.

Run: python experiments/04_cifar10_nnx.py                 # CIFAR-10, 2 epochs
     python experiments/04_cifar10_nnx.py --dataset digits --log-every 100

The Blitz's loop as Flax NNX code writes it: ``nnx.Optimizer``, an ``nnx.jit``
train step (:func:`jaxblitz.nnx.train_step`, the core's step), one batch at a
time. ``jaxblitz.nnx.fit(config, trainset, net)`` trains the same Net with the
core's compiled epochs, checkpoints and resume (``jaxblitz-train --api nnx``).
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from jaxblitz import data, evaluate, train
from jaxblitz import nnx as jnnx

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar10", choices=data.NAMES)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--log-every", type=int, default=2000)
args = parser.parse_args()
try:  # batch 4, lr 0.001 (bad flags stop here, before any data is read)
    config = train.Config(
        dataset=args.dataset, epochs=args.epochs, log_every=args.log_every
    )
except ValueError as e:
    parser.error(str(e))

# -- 1. Load and normalise the data (torchvision.datasets.CIFAR10 + Normalize) ----
try:
    trainset = data.load(args.dataset, "train")  # NCHW float32 in [-1, 1]
    testset = data.load(args.dataset, "test")
except (OSError, ValueError) as e:  # not here, or damaged: the message says what
    parser.exit(1, f"{parser.prog}: error: {e}\n")
classes = trainset.class_names
print(f"{len(trainset.labels)} training images {trainset.images.shape[1:]}")

# -- 2. Define a Convolutional Neural Network -------------------------------------
net = jnnx.Net(in_channels=trainset.images.shape[1], rngs=nnx.Rngs(0))

# -- 3. Loss and optimizer: cross-entropy, SGD(lr=0.001, momentum=0.9) ------------
optimizer = jnnx.make_optimizer(net, config)  # nnx.Optimizer(net, tx, wrt=nnx.Param)
# Flax's performance guide: walk the module graph once, not on every call.
with nnx.set_graph_mode(True), nnx.set_graph_updates(True):
    step = nnx.cached_partial(jnnx.train_step, net, optimizer)

# -- 4. Train the network ----------------------------------------------------------
t0 = time.perf_counter()
for epoch in range(config.epochs):
    running_loss = 0.0
    key = train.data_key(config, epoch)
    for i, (images, labels) in enumerate(data.batches(trainset, 4, key), 1):
        mask = jnp.ones(len(labels))  # every row real (fit pads the last batch)
        running_loss += float(step(images, labels, mask))
        if i % config.log_every == 0:
            print(f"[{epoch + 1}, {i:5d}] loss: {running_loss / config.log_every:.3f}")
            running_loss = 0.0
print(f"Finished Training ({time.perf_counter() - t0:.1f} s)")

# -- 5. Test the network on the test data -----------------------------------------
shown = jnnx.eval_step(net, jnp.asarray(testset.images[:4]))
print("GroundTruth: ", " ".join(f"{classes[j]:5s}" for j in testset.labels[:4]))
print("Predicted:   ", " ".join(f"{classes[j]:5s}" for j in np.asarray(shown)))
result = evaluate.evaluate(jnnx.to_params(net), testset)  # the core's evaluation
print("\n".join(evaluate.report_lines(result)))
print("Trained on:", jax.devices()[0].platform)
