"""Blitz 4, "Training a classifier": LeNet on CIFAR-10 in jaxblitz's functional API.

Run: python experiments/04_cifar10_classifier.py               # CIFAR-10, 2 epochs
     python experiments/04_cifar10_classifier.py --dataset digits --log-every 100

CIFAR-10 needs a local archive or a network (see the README); ``digits`` is bundled.
"""

import argparse

import jax

from jaxblitz import data, evaluate, plots, runs, train
from jaxblitz.checkpoints import load_weights, save_weights

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar10", choices=data.NAMES)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--log-every", type=int, default=2000)
parser.add_argument("--out-dir")
args = parser.parse_args()
try:  # batch 4, lr 0.001, momentum 0.9: the Blitz's settings (bad flags stop here)
    config = train.Config(
        dataset=args.dataset, epochs=args.epochs, log_every=args.log_every
    )
    out = runs.writable_dir(args.out_dir, "runs/experiment04")  # before training
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

# Show some training images (torch: imshow(torchvision.utils.make_grid(images))).
images, labels = next(data.batches(trainset, 4, jax.random.key(0)))
plots.save_image_grid(images, labels, classes, out / "train_images.png")
print(" ".join(f"{classes[j]:5s}" for j in labels), f"-> {out}/train_images.png")

# -- 2. Define a Convolutional Neural Network (3 input channels for CIFAR-10) ------
# -- 3. Define a loss function and optimizer: cross-entropy, SGD with momentum ----
state = train.init_state(config, in_channels=trainset.images.shape[1])
print("optimizer:", config.optimizer, f"lr={config.lr} momentum={config.momentum}")

# -- 4. Train the network: each epoch is one compiled lax.scan over the batches ----
state, history = train.fit(config, trainset, state, progress=True)
print("Finished Training")

# Save and load the weights (torch: torch.save(net.state_dict(), PATH)).
path = save_weights(state.params, out / "cifar_net.safetensors")
params = load_weights(path, like=state.params)

# -- 5. Test the network on the test data -----------------------------------------
shown = evaluate.predict(params, testset.images[:4], batch_size=4)
print("GroundTruth: ", " ".join(f"{classes[j]:5s}" for j in testset.labels[:4]))
print("Predicted:   ", " ".join(f"{classes[j]:5s}" for j in shown))
result = evaluate.evaluate(params, testset)
print("\n".join(evaluate.report_lines(result)))

# -- Training on GPU: nothing to move; jit compiles for the default device --------
print("Trained on:", jax.devices()[0].platform, "| devices:", jax.devices())
