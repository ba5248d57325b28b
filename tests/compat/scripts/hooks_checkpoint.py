"""Module hooks and activation checkpointing, in the shape of the tutorials'
hook examples (forward hooks collecting activations, full backward hooks
seeing grad_input/grad_output, a backward hook that rescales gradients, hooks
removed by their handles) and of torch.utils.checkpoint as the memory recipes
use it: checkpoint(fn, x, use_reentrant=False) around blocks, and
checkpoint_sequential over an nn.Sequential, with the same gradients as
without checkpointing."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.manual_seed(0)


def fill(model, scale=0.3):
    """Weights from a fixed formula, so PyTorch and compat start alike."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.arange(n, dtype=torch.float32).mul(0.83 + 0.41 * i).sin()
                    .mul(scale).view(p.shape))  # fmt: skip


def rounded(t, d=4):
    return [round(v, d) for v in t.flatten().tolist()]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


net = Net()
fill(net)
x = torch.linspace(-1, 1, 2 * 10 * 10).view(2, 1, 10, 10)

activations = {}


def get_activation(name):
    def hook(model, input, output):
        activations[name] = output.detach()

    return hook


handles = [net.conv1.register_forward_hook(get_activation("conv1")),
           net.fc1.register_forward_hook(get_activation("fc1"))]  # fmt: skip


def printnorm(self, input, output):
    # input is a tuple of packed inputs, output is a Tensor
    print("Inside " + self.__class__.__name__ + " forward")
    print("input: ", type(input), "of", len(input), input[0].size())
    print("output:", type(output).__name__, output.data.size())
    print(f"output norm: {output.data.norm():.4f}")


handles.append(net.conv2.register_forward_hook(printnorm))


def printgradnorm(self, grad_input, grad_output):
    print("Inside " + self.__class__.__name__ + " backward")
    print("grad_input: ", type(grad_input), len(grad_input),
          [None if g is None else tuple(g.shape) for g in grad_input])  # fmt: skip
    print("grad_output:", type(grad_output), len(grad_output),
          tuple(grad_output[0].shape))  # fmt: skip
    print(f"grad_input norm: {grad_input[0].norm():.4f}")


handles.append(net.conv2.register_full_backward_hook(printgradnorm))


def pre(module, args):
    print("pre hook on", type(module).__name__, tuple(args[0].shape))
    return (args[0] * 2,)


handles.append(net.fc2.register_forward_pre_hook(pre))
out = net(x)
print("activations", {k: tuple(v.shape) for k, v in activations.items()})
print("fc1 activation", rounded(activations["fc1"][0, :4]))
out.sum().backward()
print("conv1 grad", rounded(net.conv1.weight.grad[0, 0, 0]))


def halve(module, grad_input, grad_output):
    return tuple(None if g is None else g / 2 for g in grad_input)


for h in handles:
    h.remove()
net.zero_grad()
net(x).sum().backward()
plain_grad = net.conv1.weight.grad.clone()
net.zero_grad()
h = net.conv2.register_full_backward_hook(halve)
net(x).sum().backward()
h.remove()
print("halved upstream", torch.allclose(net.conv1.weight.grad, plain_grad / 2))
print("hooks removed", len(net.conv2._forward_hooks), len(net.conv2._backward_hooks))

# Tensor hooks
y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = y * y
z.register_hook(lambda g: g * 10)
z.sum().backward()
print("tensor hook grad", y.grad.tolist())


# Activation checkpointing: the same values and gradients, recomputed.
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin1 = nn.Linear(d, d)
        self.lin2 = nn.Linear(d, d)

    def forward(self, x):
        return x + self.lin2(torch.tanh(self.lin1(x)))


class Deep(nn.Module):
    def __init__(self, d, n, use_checkpoint):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for block in self.blocks:
            if self.use_checkpoint:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return x


inp = torch.linspace(-2, 2, 4 * 6).view(4, 6)
results = []
for use in (False, True):
    model = Deep(6, 3, use)
    fill(model)
    out = model(inp)
    loss = out.pow(2).mean()
    loss.backward()
    results.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    print(f"checkpoint={use} loss {loss.item():.4f}")
same_out = torch.allclose(results[0][0], results[1][0])
pairs = zip(results[0][1], results[1][1], strict=True)
same_grads = all(torch.allclose(a, b, atol=1e-6) for a, b in pairs)
print("checkpoint same output", same_out, "same grads", same_grads)


def fn(a, b):
    return (a * b).sin().sum(dim=1)


a = torch.linspace(0, 1, 6, requires_grad=True).view(2, 3)
b = torch.linspace(1, 2, 6).view(2, 3).requires_grad_()
out = checkpoint(fn, a, b, use_reentrant=False)
out.sum().backward()
print("function checkpoint", rounded(out), rounded(b.grad))

seq = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                    nn.Linear(8, 2))  # fmt: skip
fill(seq)
inp = inp.clone().requires_grad_()
out = checkpoint_sequential(seq, 2, inp, use_reentrant=False)
out.sum().backward()
print("sequential", tuple(out.shape), rounded(out[0]), rounded(inp.grad[0]))
with torch.no_grad():
    print("no_grad checkpoint", checkpoint(fn, a, b, use_reentrant=False).requires_grad)
