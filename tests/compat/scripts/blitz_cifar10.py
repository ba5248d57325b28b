"""Training a classifier: CIFAR-10 from torchvision's folder, the 3-channel
LeNet, SGD with momentum, save/load, overall and per-class accuracy."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.optim as optim  # noqa: E402
import torchvision  # noqa: E402
import torchvision.transforms as transforms  # noqa: E402

to_input = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
)
train_set = torchvision.datasets.CIFAR10("./data", train=True, download=True,
                                         transform=to_input)  # fmt: skip
test_set = torchvision.datasets.CIFAR10("./data", train=False, download=True,
                                        transform=to_input)  # fmt: skip
train_loader = torch.utils.data.DataLoader(train_set, batch_size=4, shuffle=True,
                                           num_workers=2)  # fmt: skip
test_loader = torch.utils.data.DataLoader(test_set, batch_size=4, shuffle=False)
names = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
         "truck")  # fmt: skip

batches = iter(train_loader)
pictures, labels = next(batches)
grid = torchvision.utils.make_grid(pictures) / 2 + 0.5
plt.imshow(np.transpose(grid.numpy(), (1, 2, 0)))
plt.savefig("batch.png")
print(" ".join(f"{names[labels[k]]:5s}" for k in range(4)))


class CifarNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.pool = nn.Conv2d(3, 6, 5), nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2 = nn.Linear(400, 120), nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = torch.flatten(self.pool(F.relu(self.conv2(x))), 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


net = CifarNet()
loss_fn = nn.CrossEntropyLoss()
sgd = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
for epoch in range(2):
    running = 0.0
    for i, (inputs, targets) in enumerate(train_loader, 0):
        sgd.zero_grad()
        loss = loss_fn(net(inputs), targets)
        loss.backward()
        sgd.step()
        running += loss.item()
        if i % 5 == 4:
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running / 5:.3f}")
            running = 0.0
torch.save(net.state_dict(), "./cifar_net.pth")
net = CifarNet()
net.load_state_dict(torch.load("./cifar_net.pth", weights_only=True))
pictures, labels = next(iter(test_loader))
_, guess = torch.max(net(pictures), 1)
print("Predicted:", " ".join(f"{names[guess[k]]:5s}" for k in range(4)))
right = seen = 0
hits, counts = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
with torch.no_grad():
    for pictures, labels in test_loader:
        _, guess = torch.max(net(pictures).data, 1)
        seen += labels.size(0)
        right += (guess == labels).sum().item()
        for label, g in zip(labels, guess):  # noqa: B905 -- as the tutorial
            hits[names[label]] += int(label == g)
            counts[names[label]] += 1
print(f"Accuracy on {seen} test images: {100 * right // seen} %")
for name, hit in hits.items():
    print(f"Accuracy for class: {name:5s} is {100 * float(hit) / counts[name]:.1f} %")
print(torch.device("cuda:0" if torch.cuda.is_available() else "cpu"))
