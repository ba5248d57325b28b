# ruff: noqa: UP032, B905 -- upstream's idioms, kept
"""pytorch/examples mnist_hogwild (main.py and train.py): one model shared
by model.share_memory() and trained by several processes at once
(torch.multiprocessing with the spawn start method), each with its own SGD
and DataLoader, then tested. Two processes on small in-memory digits.
compat's tensors live in one process, so compat refuses share_memory()
by name and this script stops there; PyTorch runs it through."""

import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import TensorDataset

SEED, EPOCHS, LR, MOMENTUM, LOG_INTERVAL = 1, 1, 0.01, 0.5, 2
NUM_PROCESSES, BATCH_SIZE = 2, 16


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def digits(n, seed):
    """n 28x28 pictures whose bright row band gives the class."""
    labels = torch.tensor([(k * 3 + seed) % 10 for k in range(n)])
    grid = torch.arange(28 * 28, dtype=torch.float32).view(1, 28, 28)
    images = torch.stack([torch.sin(grid * 0.01 * (k + 1)) * 0.3 for k in range(n)])
    for k, label in enumerate(labels.tolist()):
        images[k, 0, 2 * label + 3 : 2 * label + 7, 4:24] += 1.0
    return TensorDataset(images, labels)


def train(rank, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(SEED + rank)
    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for epoch in range(1, EPOCHS + 1):
        train_epoch(epoch, model, device, train_loader, optimizer)


def test(model, device, dataset, dataloader_kwargs):
    torch.manual_seed(SEED)
    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    test_epoch(model, device, test_loader)


def train_epoch(epoch, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
        if batch_idx % LOG_INTERVAL == 0:
            print(
                "{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    pid,
                    epoch,
                    batch_idx * len(data),
                    len(data_loader.dataset),
                    100.0 * batch_idx / len(data_loader),
                    loss.item(),
                ),
                flush=True,
            )


def test_epoch(model, device, data_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in data_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(
                output, target.to(device), reduction="sum"
            ).item()  # sum up batch loss
            pred = output.max(1)[1]  # get the index of the max log-probability
            correct += pred.eq(target.to(device)).sum().item()

    test_loss /= len(data_loader.dataset)
    print(
        "\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
            test_loss,
            correct,
            len(data_loader.dataset),
            100.0 * correct / len(data_loader.dataset),
        )
    )


if __name__ == "__main__":
    device = torch.device("cpu")
    dataset1, dataset2 = digits(64, 0), digits(32, 5)
    kwargs = {"batch_size": BATCH_SIZE, "shuffle": True}

    torch.manual_seed(SEED)
    mp.set_start_method("spawn", force=True)
    print("start method", mp.get_start_method(), "strategy", mp.get_sharing_strategy())

    model = Net().to(device)
    before = [p.detach().clone() for p in model.parameters()]
    print(
        "params",
        sum(p.numel() for p in model.parameters()),
        "shared",
        model.fc1.weight.is_shared(),
        flush=True,
    )
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    print("shared", all(p.is_shared() for p in model.parameters()), flush=True)

    processes = []
    for rank in range(NUM_PROCESSES):
        p = mp.Process(target=train, args=(rank, model, device, dataset1, kwargs))
        # We first train the model across `num_processes` processes
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    print("exit codes", [p.exitcode for p in processes])
    # the processes trained the one model in shared memory
    print(
        "trained in place",
        any(not torch.equal(a, b) for a, b in zip(before, model.parameters())),
    )

    # Once training is complete, we can test the model
    test(model, device, dataset2, kwargs)
