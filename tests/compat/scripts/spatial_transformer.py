"""A spatial transformer network in the shape of the STN tutorial
(pytorch/tutorials intermediate_source/spatial_transformer_tutorial.py): a
localization net regresses a 2x3 affine matrix (its last Linear zeroed and its
bias set to the identity transform), F.affine_grid and F.grid_sample warp the
input, and a small classifier with Dropout2d and F.dropout trains on it with
SGD; then affine_grid/grid_sample's options (align_corners, the sampling and
padding modes) on known warps, and their gradients."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2)
        )
        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(
            torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float)
        )

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size())
        x = F.grid_sample(x, grid)
        return x, theta

    def forward(self, x):
        x, _ = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# 28x28 "digits": a blob whose position and size depend on the class.
yy, xx = torch.meshgrid(torch.arange(28.0), torch.arange(28.0), indexing="ij")
images, labels = [], []
for k in range(20):
    c = k % 10
    cy, cx = 6 + 1.6 * c, 20 - 1.2 * c
    r = 2.0 + (k % 3)
    images.append(torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r)))
    labels.append(c)
data = torch.stack(images).unsqueeze(1)  # (20, 1, 28, 28)
target = torch.tensor(labels)

model = Net()
with torch.no_grad():
    warped, theta = model.stn(data)
print("identity theta", theta[0].tolist())
print("identity warp reproduces input", torch.allclose(warped, data, atol=1e-5))

optimizer = optim.SGD(model.parameters(), lr=0.05)
model.train()
losses = []
for _step in range(8):
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("loss", [round(v, 4) for v in losses])
print("localization gets gradients",
      model.localization[0].weight.grad.abs().sum().item() > 0)  # fmt: skip
model.eval()
with torch.no_grad():
    _, theta = model.stn(data)
    out = model(data)
print("theta", tuple(theta.shape), "output", tuple(out.shape))
print("eval repeatable", torch.equal(out, model(data).detach()))

# Known warps: a translation by half the width, a zoom, a rotation.
img = torch.arange(2 * 3 * 5 * 6, dtype=torch.float32).view(2, 3, 5, 6).div(10)
shift = torch.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]]).repeat(2, 1, 1)
zoom = torch.tensor([[[0.5, 0.0, 0.0], [0.0, 0.5, 0.0]]]).repeat(2, 1, 1)
angle = torch.tensor(0.3)
rot = torch.stack(
    [
        torch.stack([angle.cos(), -angle.sin(), torch.tensor(0.1)]),
        torch.stack([angle.sin(), angle.cos(), torch.tensor(-0.2)]),
    ]
)
rot = rot.unsqueeze(0).repeat(2, 1, 1)  # fmt: skip
for align in (False, True):
    grid = F.affine_grid(shift, [2, 3, 5, 6], align_corners=align)
    print("grid", align, tuple(grid.shape),
          [round(v, 4) for v in grid[0, 0, :3, 0].tolist()])  # fmt: skip
    for theta_name, th in (("shift", shift), ("zoom", zoom), ("rot", rot)):
        grid = F.affine_grid(th, img.size(), align_corners=align)
        modes = (
            ("bilinear", "nearest", "bicubic") if theta_name == "rot" else ("bilinear",)
        )
        pads = ("zeros", "border", "reflection") if theta_name == "rot" else ("zeros",)
        for mode in modes:
            for pad in pads:
                out = F.grid_sample(img, grid, mode=mode, padding_mode=pad,
                                    align_corners=align)  # fmt: skip
                print("warp", theta_name, align, mode, pad,
                      round(out.mean().item(), 3),
                      [round(v, 3) for v in out[1, 2, 2].tolist()])  # fmt: skip

# Gradients reach both the image and the affine matrix through the sampler.
x = img.clone().requires_grad_()
th = rot.clone().requires_grad_()
out = F.grid_sample(x, F.affine_grid(th, x.size(), align_corners=False),
                    align_corners=False)  # fmt: skip
(out * torch.linspace(-1, 1, 6)).sum().backward()
print("image grad", round(x.grad.sum().item(), 3), round(x.grad.abs().max().item(), 3))
print("theta grad", [[round(v, 3) for v in row] for row in th.grad[0].tolist()])

# The 3-D (volumetric) variant.
vol = torch.arange(2 * 4 * 4 * 4, dtype=torch.float32).view(1, 2, 4, 4, 4)
th3 = torch.tensor([[[0.9, 0.1, 0.0, 0.1], [0.0, 1.0, 0.0, 0.0],
                     [0.0, 0.0, 1.1, -0.1]]])  # fmt: skip
g3 = F.affine_grid(th3, vol.size(), align_corners=False)
v3 = F.grid_sample(vol, g3, align_corners=False)
print("volume", tuple(g3.shape), tuple(v3.shape), round(v3.mean().item(), 3))
