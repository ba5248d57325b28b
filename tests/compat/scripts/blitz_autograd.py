"""Autograd: resnet18 from the weight cache, backward, vector-Jacobian products,
what requires grad, and freezing a network for finetuning."""

import torch
from torch import nn, optim
from torchvision.models import ResNet18_Weights, resnet18

net = resnet18(weights=ResNet18_Weights.DEFAULT)
images = torch.rand(2, 3, 48, 48)
targets = torch.rand(2, 1000)
scores = net(images)
(scores - targets).sum().backward()
sgd = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
sgd.step()
print("fc grad shape:", net.fc.weight.grad.shape)

u = torch.tensor([1.0, 4.0], requires_grad=True)
v = torch.tensor([2.0, 5.0], requires_grad=True)
f = 2 * u**3 - v**2
f.backward(gradient=torch.tensor([1.0, 1.0]))
print(6 * u**2 == u.grad, -2 * v == v.grad)

p, q = torch.rand(3, 3), torch.rand(3, 3)
w = torch.rand((3, 3), requires_grad=True)
print("p + q requires grad:", (p + q).requires_grad)
print("p + w requires grad:", (p + w).requires_grad)

net = resnet18(weights=ResNet18_Weights.DEFAULT)
for weight in net.parameters():
    weight.requires_grad = False
net.fc = nn.Linear(512, 10)
head = optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
net(images).sum().backward()
head.step()
print("trainable:", [n for n, w in net.named_parameters() if w.requires_grad])
print("frozen conv has no grad:", net.conv1.weight.grad is None)
