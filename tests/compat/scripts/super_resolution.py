"""pytorch/examples super_resolution (model.py, main.py, super_resolve.py) on
in-memory pictures: the efficient sub-pixel network (four convolutions and
nn.PixelShuffle), its weights initialised with init.orthogonal_ scaled by
init.calculate_gain('relu'), MSELoss and Adam, PSNR as 10 * log10(1 / mse),
and super-resolving one picture to uint8. Upstream's pictures (BSDS300, PIL,
torchvision's CenterCrop, Resize and ToTensor) become tensors from a formula,
shrunk by F.interpolate (bicubic, antialiased: what Resize does to tensors);
the checkpoint saves the state_dict where upstream pickles the whole model,
and weights are set from a formula where values are printed."""

import os
import tempfile
from math import log10

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(123)
UPSCALE, CROP = 3, 12


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor**2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv4.weight)


def pictures(n, size, seed):
    """n one-channel pictures (the Y of YCbCr) in [0, 1]: soft rings and
    stripes, different for each."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    out = []
    for k in range(n):
        a, b = 3 + (k + seed) % 5, 2 + (k * 7 + seed) % 3
        img = 0.5 + 0.25 * np.sin(a * 6.28 * ((xx - 0.5) ** 2 + (yy - 0.4) ** 2))
        img += 0.2 * np.cos(b * 6.28 * (xx + 0.3 * yy))
        out.append(np.clip(img, 0, 1))
    return torch.tensor(np.stack(out)[:, None], dtype=torch.float32)


def dataset(n, seed):
    target = pictures(n, CROP + 4, seed)[:, :, 2:-2, 2:-2]  # CenterCrop
    input = F.interpolate(
        target,
        size=(CROP // UPSCALE, CROP // UPSCALE),
        mode="bicubic",
        align_corners=False,
        antialias=True,
    ).clamp(0, 1)  # Resize, ToTensor
    return TensorDataset(input, target)


print(
    "gains",
    init.calculate_gain("relu"),
    init.calculate_gain("tanh"),
    init.calculate_gain("leaky_relu", 0.2),
    init.calculate_gain("linear"),
)
train_set, test_set = dataset(12, 0), dataset(4, 5)
training_data_loader = DataLoader(dataset=train_set, batch_size=4, shuffle=False)
testing_data_loader = DataLoader(dataset=test_set, batch_size=2, shuffle=False)
lo, hi = train_set[0]
print(
    "pair",
    tuple(lo.shape),
    tuple(hi.shape),
    "in [0, 1]",
    bool(lo.min() >= 0 and lo.max() <= 1),
)

device = torch.device("cpu")
model = Net(upscale_factor=UPSCALE).to(device)
print(model)
for name in ("conv1", "conv2", "conv3", "conv4"):
    w = getattr(model, name).weight.detach()
    flat = w.view(w.size(0), -1)
    gram = flat @ flat.t() if flat.size(0) <= flat.size(1) else flat.t() @ flat
    print(
        name,
        "orthogonal, scale",
        round(gram.diagonal().mean().item(), 4),
        torch.allclose(gram, gram.diagonal().mean() * torch.eye(len(gram)), atol=1e-4),
    )
shuffled = nn.PixelShuffle(2)(torch.arange(16.0).view(1, 4, 2, 2))
print(
    "pixel shuffle",
    shuffled[0, 0].tolist(),
    nn.PixelUnshuffle(2)(shuffled).equal(torch.arange(16.0).view(1, 4, 2, 2)),
)

with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        n = p.numel()
        p.copy_(
            torch.arange(n, dtype=torch.float32)
            .mul(0.31 + 0.17 * i)
            .sin()
            .mul(0.3 if p.dim() > 1 else 0.05)
            .view(p.shape)
        )
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print(
            f"===> Epoch[{epoch}]({iteration}/{len(training_data_loader)}): "
            f"Loss: {loss.item():.4f}"
        )
    print(
        f"===> Epoch {epoch} Complete: "
        f"Avg. Loss: {epoch_loss / len(training_data_loader):.4f}"
    )


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print(f"===> Avg. PSNR: {avg_psnr / len(testing_data_loader):.4f} dB")
    return avg_psnr / len(testing_data_loader)


folder = tempfile.mkdtemp()


def checkpoint(epoch):
    model_out_path = os.path.join(folder, f"model_epoch_{epoch}.pth")
    torch.save(model.state_dict(), model_out_path)
    print(f"Checkpoint saved to model_epoch_{epoch}.pth")


psnrs = []
for epoch in range(1, 4):
    train(epoch)
    psnrs.append(test())
    checkpoint(epoch)
print("psnr rose", psnrs[-1] > psnrs[0])

# super_resolve.py: one picture through the reloaded model, to uint8
net = Net(upscale_factor=UPSCALE)
net.load_state_dict(torch.load(os.path.join(folder, "model_epoch_3.pth")))
img_y = test_set[1][0]  # (1, 4, 4)
input = img_y.view(1, -1, img_y.size(1), img_y.size(2))
out = net(input)
out_img_y = out[0].detach().numpy()
out_img_y *= 255.0
out_img_y = out_img_y.clip(0, 255)
out_img_y = np.uint8(out_img_y[0])
# .numpy() shares memory: scaling the array in place scaled out too
print(
    "super-resolved",
    out_img_y.shape,
    out_img_y.dtype,
    out.requires_grad,
    "out scaled with its array",
    torch.allclose(out / 255.0, model(input), atol=1e-6),
)
