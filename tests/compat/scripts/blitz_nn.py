"""Neural networks: the 1-channel LeNet, its graph, a hand-written SGD step and
one with an optimizer."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc3(F.relu(self.fc2(x)))


torch.manual_seed(0)
net = LeNet()
print(net)
weights = list(net.parameters())
print(len(weights), weights[0].size())
image = torch.randn(1, 1, 32, 32)
logits = net(image)
print(logits.shape)
net.zero_grad()
logits.backward(torch.randn(1, 10))
goal = torch.randn(10).view(1, -1)
loss_fn = nn.MSELoss()
loss = loss_fn(net(image), goal)
print(loss.grad_fn.name())
print(loss.grad_fn.next_functions[0][0].name())
print(loss.grad_fn.next_functions[0][0].next_functions[0][0].name())
net.zero_grad()
print("bias grad before:", net.conv1.bias.grad)
loss.backward()
print("bias grad after:", net.conv1.bias.grad.shape)
step = 0.01
for weight in net.parameters():
    weight.data.sub_(weight.grad.data * step)
sgd = optim.SGD(net.parameters(), lr=0.01)
before = loss.item()
for _ in range(3):
    sgd.zero_grad()
    loss = loss_fn(net(image), goal)
    loss.backward()
    sgd.step()
print("loss went down:", loss_fn(net(image), goal).item() < before)
