"""Model ensembling in the shape of the torch.func tutorial
(pytorch/tutorials intermediate_source/ensembling.py): a few small MLPs, their
predictions by a loop, then stack_module_state, a base model on the 'meta'
device (copy.deepcopy(...).to('meta')) and vmap over functional_call, with a
different minibatch per model (in_dims=0) and the same one for all
(in_dims=(0, 0, None)). Sizes are small; data and weights from fixed formulas."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# Here's a simple MLP
class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(144, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


def fill(model, k, scale=0.3):
    """Weights from a fixed formula (one per model), so both libraries agree."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(1.37 + 0.29 * i + 0.11 * k)
                    .sin().mul(scale).view(p.shape))  # fmt: skip


# Let's generate a batch of dummy data and pretend that we're working with an
# MNIST dataset. Thus, the dummy images are 12 by 12, and we have a minibatch
# of size 16. Furthermore, let's say we want to combine the predictions from 4
# different models.
device = "cpu"
num_models = 4

data = torch.arange(10 * 16 * 144, dtype=torch.float32).mul(0.37).cos()
data = data.view(10, 16, 1, 12, 12).to(device)

# we'd generate 160 targets, one per image
targets = (torch.arange(160) * 3 % 10).to(device)

models = [SimpleMLP().to(device) for _ in range(num_models)]
for k, m in enumerate(models):
    fill(m, k)

# Option 1: different minibatches for each model
minibatches = data[:num_models]
predictions_diff_minibatch_loop = [
    model(minibatch) for model, minibatch in zip(models, minibatches, strict=True)
]

# Option 2: Same minibatch
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

# Using vmap to vectorize the ensemble
from torch.func import stack_module_state  # noqa: E402

params, buffers = stack_module_state(models)
print("stacked", {k: tuple(v.shape) for k, v in params.items()}, buffers)
print("stacked leaves require grad", all(
    p.requires_grad and p.is_leaf for p in params.values()))  # fmt: skip

from torch.func import functional_call  # noqa: E402

# Construct a "stateless" version of one of the models. It is "stateless" in
# the sense that the parameters are meta Tensors and do not have storage.
base_model = copy.deepcopy(models[0])
base_model = base_model.to("meta")
print("base on", base_model.fc1.weight.device, base_model.fc1.weight.shape)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


# Option 1: get predictions using a different minibatch for each model.
print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension

# verify minibatch has leading dimension of size 'num_models'
assert minibatches.shape == (num_models, 16, 1, 12, 12)

from torch import vmap  # noqa: E402

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)

# verify the ``vmap`` predictions match the
assert torch.allclose(
    predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3,
    rtol=1e-5)  # fmt: skip
print("option 1", tuple(predictions1_vmap.shape), torch.allclose(
    predictions1_vmap, torch.stack(predictions_diff_minibatch_loop),
    atol=1e-3, rtol=1e-5))  # fmt: skip

# Option 2: get predictions using the same minibatch of data.
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3,
                      rtol=1e-5)  # fmt: skip
print("option 2", tuple(predictions2_vmap.shape), torch.allclose(
    predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5))  # fmt: skip
votes = predictions2_vmap.argmax(-1).mode(0).values
print("ensemble votes", votes.tolist())
print("ensemble loss", round(
    F.cross_entropy(predictions2_vmap.mean(0), targets[:16]).item(), 4))  # fmt: skip
