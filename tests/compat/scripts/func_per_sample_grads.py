"""Per-sample gradients in the shape of the torch.func tutorial
(pytorch/tutorials intermediate_source/per_sample_grads.py): a small CNN, a
loop of per-sample backward passes with torch.autograd.grad, then the same
gradients at once with functional_call, grad and vmap(in_dims=(None, None, 0, 0)).
Sizes are small; the data and weights come from fixed formulas."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# Here's a simple CNN and loss function:
class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(256, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


def fill(model, scale=0.3):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(1.37 + 0.29 * i).sin()
                    .mul(scale).view(p.shape))  # fmt: skip


# Let's generate a batch of dummy data and pretend that we're working with an
# MNIST dataset. The dummy images are 12 by 12 and we use a minibatch of size 8.
device = "cpu"
batch_size = 8
data = torch.arange(batch_size * 144, dtype=torch.float32).mul(0.61).sin()
data = data.view(batch_size, 1, 12, 12).to(device)
targets = (torch.arange(batch_size) * 7 % 10).to(device)

model = SimpleCNN().to(device=device)
fill(model)

# In regular model training, one would forward the minibatch through the model,
# and then call .backward() to compute gradients.
predictions = model(data)  # move the entire mini-batch through the model
loss = loss_fn(predictions, targets)
loss.backward()  # back propagate the 'average' gradient of this mini-batch
print(f"batch loss {loss.item():.4f}")


# In contrast to the above approach, per-sample-gradient computation is
# equivalent to: for each individual sample of the data, perform a forward and
# a backward pass to get an individual (per-sample) gradient.
def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)

    prediction = model(sample)
    loss = loss_fn(prediction, target)

    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """manually process each sample with per sample gradient"""
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads, strict=True)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
# sample_grads[0] is the per-sample-grad for model.conv1.weight
# model.conv1.weight.shape is [8, 1, 3, 3]; notice how there is one gradient,
# per sample, in the batch for a total of 8.
print("loop", per_sample_grads[1].shape, len(per_sample_grads))

# Per-sample-grads, *the efficient way*, using function transforms
from torch.func import functional_call, grad, vmap  # noqa: E402

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)

    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

# we can double check that the results using torch.func.grad and vmap match the
# results of hand processing each one individually:
for per_sample_grad, ft_per_sample_grad in zip(
    per_sample_grads, ft_per_sample_grads.values(), strict=True
):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print("names", list(ft_per_sample_grads))
print("shapes", [tuple(g.shape) for g in ft_per_sample_grads.values()])
print("vmap agrees with the loop", all(
    torch.allclose(a, b, atol=3e-3, rtol=1e-5)
    for a, b in zip(per_sample_grads, ft_per_sample_grads.values(),
                    strict=True)))  # fmt: skip
# The mean of the per-sample gradients is the minibatch's gradient.
means = [g.mean(0) for g in ft_per_sample_grads.values()]
print("mean is the batch grad", all(
    torch.allclose(m, p.grad, atol=1e-5)
    for m, p in zip(means, model.parameters(), strict=True)))  # fmt: skip
norms = [round(g.flatten(1).norm(dim=1)[0].item(), 4)
         for g in ft_per_sample_grads.values()]  # fmt: skip
print("first sample's grad norms", norms)
print("params untouched", model.fc2.weight is dict(model.named_parameters())[
    "fc2.weight"], model.fc2.weight.requires_grad)  # fmt: skip
