"""pytorch/examples mnist_rnn/main.py: an nn.LSTM (batch_first) reads an
image row by row, its last output goes through BatchNorm1d, Dropout2d, two
Linear layers and log_softmax; trained with F.nll_loss under Adadelta and
StepLR(step_size=1, gamma=0.7), tested with nll_loss(reduction="sum") and
argmax(dim=1, keepdim=True).eq(target.view_as(pred)), and the state_dict
saved. The digits are 14x14 images drawn in memory (the example reads MNIST's
28x28 through torchvision), weights come from a fixed formula and the two
Dropout2d layers are kept at p=0 where losses are printed (the random streams
differ); dropout2d on the 2-D input the example gives it is checked apart."""

import os
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
SIDE = 14


class Net(nn.Module):
    def __init__(self, p1=0.25, p2=0.5):
        super().__init__()
        self.rnn = nn.LSTM(input_size=SIDE, hidden_size=24, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(24)
        self.dropout1 = nn.Dropout2d(p1)
        self.dropout2 = nn.Dropout2d(p2)
        self.fc1 = nn.Linear(24, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, input):
        # Shape of input is (batch_size,1, 28, 28)
        # converting shape of input to (batch_size, 28, 28)
        # as required by RNN when batch_first is set True
        input = input.reshape(-1, SIDE, SIDE)
        output, hidden = self.rnn(input)

        # RNN output shape is (seq_len, batch, input_size)
        # Get last output of RNN
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def digits(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    images = np.zeros((n, 1, SIDE, SIDE), dtype=np.float32)
    for i, y in enumerate(labels):
        angle = y * np.pi / 10
        d = np.abs((xx - 6.5) * np.sin(angle) - (yy - 6.5) * np.cos(angle) - y % 3)
        images[i, 0] = np.clip(1.5 - d, 0, 1) + 0.1 * rng.rand(SIDE, SIDE)
    images = (images - 0.1307) / 0.3081
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))


def train(log_interval, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print(
                f"Train Epoch: {epoch} [{batch_idx * len(data)}/"
                f"{len(train_loader.dataset)} "
                f"({100.0 * batch_idx / len(train_loader):.0f}%)]"
                f"\tLoss: {loss.item():.4f}"
            )


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            # sum up batch loss
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            # get the index of the max log-probability
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print(
        f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/"
        f"{len(test_loader.dataset)} "
        f"({100.0 * correct / len(test_loader.dataset):.0f}%)\n"
    )
    return test_loss


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
train_loader = DataLoader(digits(96, 1), batch_size=16, shuffle=False)
test_loader = DataLoader(digits(40, 2), batch_size=20, shuffle=False)

model = Net(0.0, 0.0).to(device)
with torch.no_grad():
    for i, (name, p) in enumerate(model.named_parameters()):
        if name.startswith("batchnorm"):
            continue
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).mul(0.91 + 0.37 * i)
                .sin().mul(0.3).view(p.shape))  # fmt: skip
print(model)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
losses = []
for epoch in range(1, 4):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(2, model, device, train_loader, optimizer, epoch)
    losses.append(test(model, device, test_loader))
    scheduler.step()
    warned = any("dropout2d" in str(w.message) for w in caught)
    print("lr", [round(v, 4) for v in scheduler.get_last_lr()],
          "dropout2d warned", warned)  # fmt: skip
print("test loss went down", losses[-1] < losses[0])
print("bn tracked", model.batchnorm.num_batches_tracked.item(),
      [round(v, 4) for v in model.batchnorm.running_mean[:3].tolist()])  # fmt: skip
print("adadelta state", sorted(optimizer.state[model.fc2.weight]))

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "mnist_rnn.pt")
    torch.save(model.state_dict(), path)
    print("saved keys", list(torch.load(path, weights_only=True))[:6])

# dropout2d on (N, C), as the example's head makes it: PyTorch warns and
# drops single elements (feature_dropout's mask has the input's own shape);
# a 3-D input is taken as (N, C, L) with a second warning, a 4-D one drops
# whole channels.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = nn.Dropout2d(0.5)(torch.ones(64, 6))
    line = F.dropout2d(torch.ones(4, 32, 5), 0.5)
print("dropout2d warnings:", [str(w.message)[:40] for w in caught])
whole = out.eq(0).all(1) | out.eq(2).all(1)
print("dropout2d 2-D rows mixed", not bool(whole.all()), tuple(out.shape),
      "values", sorted(set(out.flatten().tolist())))  # fmt: skip
print("dropout2d 3-D channels whole", bool((line.eq(0).all(2)
      | line.eq(2).all(2)).all()))  # fmt: skip
four = F.dropout2d(torch.ones(2, 32, 3, 3), 0.5, training=True)
print("dropout2d 4-D channels whole", bool((four.eq(0).all((2, 3))
      | four.eq(2).all((2, 3))).all()))  # fmt: skip
