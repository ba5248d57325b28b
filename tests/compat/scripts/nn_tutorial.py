"""What is torch.nn really? (pytorch/tutorials beginner_source/nn_tutorial.py) on
MNIST-shaped data drawn with NumPy: logistic regression with hand-made weights,
log_softmax and nll (input[range(n), target]), then F.cross_entropy, nn.Module,
nn.Linear, optim, TensorDataset/DataLoader, fit with model.eval(), and a CNN
built from nn.Sequential and a Lambda module behind a wrapped DataLoader."""

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rs = np.random.RandomState(0)
n_train, n_valid = 256, 128
proto = rs.rand(10, 784).astype(np.float32)
y_np = rs.randint(0, 10, n_train + n_valid)
x_np = (0.7 * proto[y_np] + 0.3 * rs.rand(n_train + n_valid, 784)).astype(np.float32)
x_train, y_train, x_valid, y_valid = map(
    torch.tensor, (x_np[:n_train], y_np[:n_train], x_np[n_train:], y_np[n_train:])
)
n, c = x_train.shape
print(x_train.shape, y_train.dtype, y_train.min(), y_train.max())

w0 = torch.from_numpy((rs.randn(784, 10) / math.sqrt(784)).astype(np.float32))
weights = w0.clone()
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 64
xb = x_train[0:bs]
preds = model(xb)
print(preds[0].shape, preds.shape, preds.grad_fn is not None)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
yb = y_train[0:bs]
print("first loss", round(loss_func(preds, yb).item(), 4))


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print("first acc", round(accuracy(preds, yb).item(), 4))

lr = 0.1
epochs = 2
for epoch in range(epochs):  # noqa: B007
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(
    "manual",
    round(loss_func(model(xb), yb).item(), 4),
    round(accuracy(model(xb), yb).item(), 4),
)

loss_func = F.cross_entropy


def model(xb):
    return xb @ weights + bias


print(
    "cross_entropy",
    round(loss_func(model(xb), yb).item(), 4),
    round(accuracy(model(xb), yb).item(), 4),
)


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(w0.clone())
        self.bias = nn.Parameter(torch.zeros(10))

    def forward(self, xb):
        return xb @ self.weights + self.bias


model = Mnist_Logistic()
print("module loss", round(loss_func(model(xb), yb).item(), 4))


def fit():
    for epoch in range(epochs):  # noqa: B007
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()


fit()
print("fit", round(loss_func(model(xb), yb).item(), 4))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)
        with torch.no_grad():
            self.lin.weight.copy_(w0.t())
            self.lin.bias.zero_()

    def forward(self, xb):
        return self.lin(xb)


def get_model():
    model = Mnist_Logistic()
    return model, optim.SGD(model.parameters(), lr=lr)


model, opt = get_model()
print("linear loss", round(loss_func(model(xb), yb).item(), 4))
train_ds = TensorDataset(x_train, y_train)
train_dl = DataLoader(train_ds, batch_size=bs)
for epoch in range(epochs):  # noqa: B007
    for xb, yb in train_dl:
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
print("dataloader", round(loss_func(model(xb), yb).item(), 4))
print(len(train_ds), len(train_dl), train_ds[3][1])

valid_ds = TensorDataset(x_valid, y_valid)


def get_data(train_ds, valid_ds, bs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=False),
        DataLoader(valid_ds, batch_size=bs * 2),
    )


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(  # noqa: B905
                *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
            )
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
        print(epoch, f"{val_loss:.4f}")


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
model, opt = get_model()
fit(epochs, model, loss_func, opt, train_dl, valid_dl)


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


def preprocess(x, y):
    return x.view(-1, 1, 28, 28), y


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield (self.func(*b))


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
train_dl = WrappedDataLoader(train_dl, preprocess)
valid_dl = WrappedDataLoader(valid_dl, preprocess)
model = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    Lambda(lambda x: x.view(x.size(0), -1)),
)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):  # noqa: B007
        p.copy_(torch.from_numpy((rs.randn(*p.shape) * 0.2).astype(np.float32)))
print(model)
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
fit(epochs, model, loss_func, opt, train_dl, valid_dl)
xb, yb = next(iter(valid_dl))
print("cnn acc", round(accuracy(model(xb), yb).item(), 4), xb.shape)
