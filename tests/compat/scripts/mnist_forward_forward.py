"""pytorch/examples mnist_forward_forward/main.py: Hinton's Forward-Forward
algorithm. Each Layer is an nn.Linear subclass with its own Adam optimizer and
its own train(x_pos, x_neg) (overriding nn.Module.train), trained locally on
the goodness h.pow(2).mean(1) of positive data (the true label overlaid on the
first pixels) against negative data (a wrong label overlaid); Net.predict
overlays every label in turn and picks the one with the most goodness. The
MNIST batches here are 14x14 digits drawn in memory, flattened by the
example's Lambda(torch.flatten) after Normalize; the wrong labels of get_y_neg
are chosen with NumPy's generator (the example uses torch.randint), so both
libraries train on the same negatives. Weights come from a fixed formula."""

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(1234)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
SIDE, lr, threshold, epochs, log_interval = 14, 0.03, 2.0, 60, 15
pick = np.random.RandomState(0)


def digits(n, seed):
    """(n, 1, SIDE, SIDE) uint8 images: a bar whose place and angle follow the label."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    images = np.zeros((n, 1, SIDE, SIDE), dtype=np.uint8)
    for i, y in enumerate(labels):
        angle = y * np.pi / 10
        d = np.abs((xx - 6.5) * np.sin(angle) - (yy - 6.5) * np.cos(angle) - y % 3)
        images[i, 0] = (255 * np.clip(1.5 - d, 0, 1)).astype(np.uint8)
    return images, labels


class Digits(Dataset):
    """MNIST's (image, label) pairs with the example's transform chain:
    ToTensor, Normalize((0.1307,), (0.3081,)), Lambda(torch.flatten)."""

    def __init__(self, n, seed):
        self.images, self.labels = digits(n, seed)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        x = torch.from_numpy(self.images[i]).float().div(255)
        x = (x - 0.1307) / 0.3081
        return torch.flatten(x), int(self.labels[i])


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(y_samp.item())
        # the example: torch.randint(len(allowed_indices), size=(1,))
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.tensor([pick.randint(len(allowed_indices))])
        ].item()
    return y_neg.to(device)


def overlay_y_on_x(x, y, classes=10):
    """Replace the first 10 pixels of data [x] with one-hot-encoded label [y]."""
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        with torch.no_grad():
            n = self.weight.numel()
            w = torch.arange(n, dtype=torch.float32).mul(0.731 + out_features)
            self.weight.copy_(w.sin().mul(in_features**-0.5).view(self.weight.shape))
            self.bias.copy_(torch.linspace(-0.05, 0.05, out_features))
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=lr)
        self.threshold = threshold
        self.num_epochs = epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to
            # values larger (smaller) than the self.threshold.
            loss = torch.log(
                1
                + torch.exp(
                    torch.cat([-g_pos + self.threshold, g_neg - self.threshold])
                )
            ).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence
            # is not considered backpropagation.
            loss.backward()
            self.opt.step()
            if i % log_interval == 0:
                print("Loss: ", round(loss.item(), 4))
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


train_loader = DataLoader(Digits(64, 1), batch_size=64)
test_loader = DataLoader(Digits(32, 2), batch_size=32)

net = Net([SIDE * SIDE, 40, 40])
print("layers", len(net.layers), [type(m).__name__ for m in net.layers],
      "registered", len(list(net.parameters())))  # fmt: skip
x, y = next(iter(train_loader))
x, y = x.to(device), y.to(device)
print("batch", tuple(x.shape), x.dtype, y.dtype, f"max {x.max().item():.4f}")
x_pos = overlay_y_on_x(x, y)
y_neg = get_y_neg(y)
x_neg = overlay_y_on_x(x, y_neg)
print("overlay head", [round(v, 4) for v in x_pos[0, :12].tolist()])
print("negatives differ", bool((y_neg != y).all()), y_neg.dtype)

net.train(x_pos, x_neg)

print("train error:", round(1.0 - net.predict(x).eq(y).float().mean().item(), 4))

x_te, y_te = next(iter(test_loader))
x_te, y_te = x_te.to(device), y_te.to(device)
print("test error:", round(1.0 - net.predict(x_te).eq(y_te).float().mean().item(), 4))
print("layer modes", net.training, net.layers[0].training)
