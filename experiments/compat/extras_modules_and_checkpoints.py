"""Notes' extras as PyTorch code: a custom Module with a Parameter and a buffer,
finetuning with frozen parameters, and state_dict save/load.

Run: python experiments/compat/extras_modules_and_checkpoints.py
"""

import os
import tempfile

import jaxblitz.compat as torch
import jaxblitz.compat.nn as nn
import jaxblitz.compat.nn.functional as F
import jaxblitz.compat.optim as optim


class Scaled(nn.Module):
    """y = scale * x + shift, with a running mean of inputs kept as a buffer."""

    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(features))
        self.register_buffer("running_mean", torch.zeros(features))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(0.9).add_(0.1 * x.mean(0))
        return x * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), Scaled(16))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
net = Net()
print(net)
print("state_dict keys:", list(net.state_dict().keys()))

# Finetuning: freeze the body, train only the head.
for param in net.body.parameters():
    param.requires_grad = False
optimizer = optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
frozen_before = net.body[0].weight.clone()

x = torch.randn(64, 8)
y = torch.randint(0, 3, (64,))
for step in range(50):
    optimizer.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step:2d} loss {loss.item():.4f}")
print("body frozen:", torch.equal(frozen_before, net.body[0].weight))
print("running_mean:", net.body[2].running_mean[:4])

# state_dict save/load (safetensors: no pickle)
path = os.path.join(tempfile.mkdtemp(), "net.pth")
torch.save(net.state_dict(), path)
net2 = Net()
print(net2.load_state_dict(torch.load(path, weights_only=True)))
net.eval()
net2.eval()
print("reloaded equal:", torch.equal(net(x), net2(x)))
