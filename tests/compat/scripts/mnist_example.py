"""The MNIST example's shape: argparse flags, torchvision MNIST in its raw/
layout, Adadelta with StepLR, log_softmax + nll_loss, argmax accuracy, save."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms


class DigitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.drop1, self.drop2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(2304, 32), nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = torch.flatten(self.drop1(x), 1)
        x = self.drop2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def fit_epoch(args, model, device, loader, opt, epoch):
    model.train()
    for step, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        if step % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{step * len(data)}/{len(loader.dataset)}]"
                  f"\tLoss: {loss.item():.6f}")  # fmt: skip


def evaluate(model, device, loader):
    model.eval()
    total, right = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            out = model(data)
            total += F.nll_loss(out, target, reduction="sum").item()
            guess = out.argmax(dim=1, keepdim=True)
            right += guess.eq(target.view_as(guess)).sum().item()
    print(
        f"Test: loss {total / len(loader.dataset):.4f}, {right}/{len(loader.dataset)}"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--log-interval", type=int, default=2)
    parser.add_argument("--save-model", action="store_true")
    args = parser.parse_args()
    accel = torch.accelerator.is_available()
    torch.manual_seed(1)
    device = torch.accelerator.current_accelerator() if accel else torch.device("cpu")
    pipeline = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
    )
    train_set = datasets.MNIST("../data", train=True, download=True, transform=pipeline)
    test_set = datasets.MNIST("../data", train=False, transform=pipeline)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=1000)
    model = DigitNet().to(device)
    opt = optim.Adadelta(model.parameters(), lr=1.0)
    schedule = StepLR(opt, step_size=1, gamma=0.7)
    for epoch in range(1, args.epochs + 1):
        fit_epoch(args, model, device, train_loader, opt, epoch)
        evaluate(model, device, test_loader)
        schedule.step()
        print("lr now", schedule.get_last_lr())
    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")


if __name__ == "__main__":
    main()
