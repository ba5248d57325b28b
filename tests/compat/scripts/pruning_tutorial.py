"""Pruning in the shape of the pruning tutorial (pytorch/tutorials
intermediate_source/pruning_tutorial.py): LeNet's conv1 pruned with
random_unstructured, l1_unstructured on its bias and ln_structured on top
(a PruningContainer), weight_orig in named_parameters and weight_mask in
named_buffers, the forward pre-hooks, prune.remove, every conv and linear
layer pruned in a loop, global_unstructured with L1Unstructured and the global
sparsity, and a custom BasePruningMethod. Masks drawn at random differ between
PyTorch and compat, so only their counts are printed."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

torch.manual_seed(0)
device = torch.device("cpu")


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        # 1 input image channel, 6 output channels, 5x5 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def fill(model):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(0.71 + 0.29 * i).sin()
                    .mul(0.2).view(p.shape))  # fmt: skip


def zeros(t):
    return int(torch.sum(t == 0))


model = LeNet().to(device=device)
fill(model)
x = torch.linspace(-1, 1, 2 * 32 * 32).view(2, 1, 32, 32)
module = model.conv1
print("params", [name for name, _ in module.named_parameters()])
print("buffers", list(module.named_buffers()))

prune.random_unstructured(module, name="weight", amount=0.3)
print("params", [name for name, _ in module.named_parameters()])
print("buffers", [name for name, _ in module.named_buffers()])
print("mask zeros", zeros(module.weight_mask), module.weight_mask.dtype)
print(
    "weight is orig * mask",
    torch.equal(module.weight, module.weight_orig * module.weight_mask),
)
print("pre hooks", [type(h).__name__ for h in module._forward_pre_hooks.values()])

prune.l1_unstructured(module, name="bias", amount=3)
print("params", [name for name, _ in module.named_parameters()])
print("bias mask", module.bias_mask.tolist())
print("bias", [round(v, 4) for v in module.bias.tolist()])

prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
channel_zero = [bool((module.weight[c] == 0).all()) for c in range(6)]
# the norms are of the weight already pruned at random: only the count is fixed
print("pruned channels", sum(channel_zero))
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":  # select out the correct hook
        break
print("history", [type(m).__name__ for m in hook])
print("state_dict", list(model.state_dict().keys()))
out = model(x)
print("pruned forward", tuple(out.shape), out.requires_grad)

prune.remove(module, "weight")
print("after remove", [name for name, _ in module.named_parameters()],
      [name for name, _ in module.named_buffers()])  # fmt: skip
print("hooks left", len(module._forward_pre_hooks))

new_model = LeNet()
fill(new_model)
for name, module in new_model.named_modules():  # noqa: B007
    # prune 20% of connections in all 2D-conv layers
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    # prune 40% of connections in all linear layers
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
print(dict(new_model.named_buffers()).keys())  # to verify that all masks exist
print("loop zeros", [zeros(m.weight) for m in new_model.children()])

model = LeNet()
fill(model)
parameters_to_prune = (
    (model.conv1, "weight"),
    (model.conv2, "weight"),
    (model.fc1, "weight"),
    (model.fc2, "weight"),
    (model.fc3, "weight"),
)
prune.global_unstructured(
    parameters_to_prune,
    pruning_method=prune.L1Unstructured,
    amount=0.2,
)
for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
    w = getattr(model, name).weight
    print(
        "Sparsity in {}.weight: {:.2f}%".format(  # noqa: UP032
            name, 100.0 * float(torch.sum(w == 0)) / float(w.nelement())
        )
    )
total = sum(float(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
count = sum(float(m.weight.nelement()) for m, _ in parameters_to_prune)
print("Global sparsity: {:.2f}%".format(100.0 * total / count))  # noqa: UP032
print("is pruned", prune.is_pruned(model), prune.is_pruned(LeNet()))

# A pruned model still trains: the gradient reaches weight_orig through the mask.
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss = model(x).pow(2).mean()
loss.backward()
g = model.fc3.weight_orig.grad
print("grad zero where masked", bool((g[model.fc3.weight_mask == 0] == 0).all()))
opt.step()
print("still pruned", zeros(model.fc3.weight) >= zeros(model.fc3.weight_mask))


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor"""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = LeNet()
fill(model)
foobar_unstructured(model.fc3, name="bias")
print(model.fc3.bias_mask)
