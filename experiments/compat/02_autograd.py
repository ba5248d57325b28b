"""Blitz 2, "A Gentle Introduction to torch.autograd", as PyTorch code.

Run: python experiments/compat/02_autograd.py

Only the imports differ from the Blitz, except one documented substitution: the
Blitz loads a pretrained ``resnet18`` from torchvision (a network download); here
``resnet18`` is a small CNN with the same head name ``fc`` (512 -> 1000), so the
finetuning part reads the same.
"""

import jaxblitz.compat as torch
from jaxblitz.compat import nn


def resnet18(weights=None):  # stand-in: no pretrained weights offline
    return _TinyNet()


class _TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 5)
        self.pool = nn.MaxPool2d(4, 4)
        self.body = nn.Linear(8 * 15 * 15, 512)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        x = torch.flatten(self.pool(torch.relu(self.conv(x))), 1)
        return self.fc(torch.relu(self.body(x)))


model = resnet18()
data = torch.rand(1, 3, 64, 64)
labels = torch.rand(1, 1000)

prediction = model(data)  # forward pass
loss = (prediction - labels).sum()
loss.backward()  # backward pass
optim = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim.step()  # gradient descent

# Differentiation in Autograd
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a**3 - b**2
external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)
# check if collected gradients are correct
print(9 * a**2 == a.grad)
print(-2 * b == b.grad)

# Exclusion from the DAG
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

from jaxblitz.compat import nn, optim  # noqa: E402

model = resnet18()
# Freeze all the parameters in the network
for param in model.parameters():
    param.requires_grad = False
model.fc = nn.Linear(512, 10)
# Optimize only the classifier
optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
print("trainable:", [n for n, p in model.named_parameters() if p.requires_grad])
