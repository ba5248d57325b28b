"""Blitz 4, "Training a classifier", with the loop body compiled by torch.compile.

Run: python experiments/compat/04_cifar10_compiled.py [--epochs N]

The Blitz's training loop on the bundled digits stand-in (32x32 RGB, 10 classes,
offline), its body written as a ``step`` function, plus one added line:
``step = torch.compile(step)``. The first call traces zero_grad, forward, loss,
backward and ``optimizer.step()`` into one XLA program; later calls run it and
write the new weights, grads and momentum back into ``net`` and ``optimizer``.
The test loop is compiled the same way, under ``torch.no_grad()``.
"""

import argparse

import jaxblitz.compat as torch
import jaxblitz.compat.nn as nn
import jaxblitz.compat.nn.functional as F
import jaxblitz.compat.optim as optim
import jaxblitz.compat.vision as torchvision
import jaxblitz.compat.vision.transforms as transforms

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()
if args.epochs < 1:  # the flag's own check; the Blitz's loop would just skip
    parser.error(f"--epochs must be >= 1, got {args.epochs}")

transform = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
)
batch_size = 4
trainset = torchvision.datasets.Digits(root="./data", train=True, transform=transform)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True)
testset = torchvision.datasets.Digits(root="./data", train=False, transform=transform)
testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)


def step(inputs, labels):
    optimizer.zero_grad()  # zero the parameter gradients
    outputs = net(inputs)  # forward + backward + optimize
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    return loss


step = torch.compile(step)  # the one added line

for epoch in range(args.epochs):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        loss = step(inputs, labels)
        running_loss += loss.item()  # outside the step: the loss is a value now
        if i % 100 == 99:  # the Blitz prints every 2000 of CIFAR-10's batches
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 100:.3f}")
            running_loss = 0.0

print("Finished Training")
# 1438 images in batches of 4 end with a batch of 2: one more program, no more.
print(f"compiled programs: {step.compilations}")


@torch.compile
def predict(images):
    _, predicted = torch.max(net(images), 1)
    return predicted


correct = 0
total = 0
with torch.no_grad():
    for images, labels in testloader:
        predicted = predict(images)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print(f"Accuracy of the network on the {total} test images: {100 * correct // total} %")
