"""The VAE example's shape: argparse flags, torchvision MNIST through
ToTensor, a Linear/ReLU/Sigmoid encoder-decoder with the reparameterisation
(torch.exp, torch.randn_like), binary_cross_entropy(reduction='sum') plus the
KL term, Adam, and torch.cat'ed comparisons and samples written with
save_image."""

import argparse
import os

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image

parser = argparse.ArgumentParser(description="VAE MNIST Example")
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--log-interval", type=int, default=2)
args = parser.parse_args()
torch.manual_seed(args.seed)
device = torch.device("cpu")
os.makedirs("results", exist_ok=True)
train_loader = torch.utils.data.DataLoader(
    datasets.MNIST("../data", train=True, download=True,
                   transform=transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=True)  # fmt: skip
test_loader = torch.utils.data.DataLoader(
    datasets.MNIST("../data", train=False, transform=transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=False)  # fmt: skip


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/"
                  f"{len(train_loader.dataset)}]\tLoss: "
                  f"{loss.item() / len(data):.6f}")  # fmt: skip
    print(f"====> Epoch: {epoch} Average loss: "
          f"{train_loss / len(train_loader.dataset):.4f}")  # fmt: skip


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                recon = recon_batch.view(args.batch_size, 1, 28, 28)
                comparison = torch.cat([data[:n], recon[:n]])
                save_image(comparison.cpu(), f"results/reconstruction_{epoch}.png",
                           nrow=n)  # fmt: skip
    test_loss /= len(test_loader.dataset)
    print(f"====> Test set loss: {test_loss:.4f}")


for epoch in range(1, args.epochs + 1):
    train(epoch)
    test(epoch)
    with torch.no_grad():
        sample = torch.randn(16, 8).to(device)
        sample = model.decode(sample).cpu()
        save_image(sample.view(16, 1, 28, 28), f"results/sample_{epoch}.png")
print("results:", sorted(os.listdir("results")))
