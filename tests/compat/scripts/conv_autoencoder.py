"""A convolutional denoising autoencoder in the shape of the common MNIST
autoencoder tutorials: an encoder of strided Conv2d and ReLU, a decoder of
ConvTranspose2d (output_padding) ending in Sigmoid, noisy inputs clamped to
[0, 1], BCELoss and MSELoss, evaluation under torch.no_grad() in eval mode,
torch.manual_seed reproducibility, and a few reconstructed values printed with
print(f"{loss.item():.4f}") and print(tensor). The noise that training adds is
drawn from NumPy's generator, so that PyTorch and compat, whose random streams
differ, train the same weights."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4)


class Autoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1),  # (B, 4, 6, 6)
            nn.ReLU(True),
            nn.Conv2d(4, 8, 3, stride=2, padding=1),  # (B, 8, 3, 3)
            nn.ReLU(True),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
            nn.ReLU(True),
            nn.ConvTranspose2d(4, 1, 3, stride=2, padding=1, output_padding=1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.arange(p.numel(), dtype=torch.float32)
                    .mul(0.77 + 0.53 * i).sin().mul(0.4).view(p.shape))  # fmt: skip


# 12x12 "digits": rings and crosses of varying size, in [0, 1].
yy, xx = torch.meshgrid(torch.arange(12.0), torch.arange(12.0), indexing="ij")
images = []
for k in range(32):
    cy, cx, r = 5.5 + (k % 3 - 1), 5.5 + (k % 5 - 2) * 0.5, 2.0 + k % 4
    dist = ((yy - cy) ** 2 + (xx - cx) ** 2).sqrt()
    if k % 2:
        img = torch.exp(-((dist - r) ** 2))
    else:
        img = torch.maximum(torch.exp(-((yy - cy) ** 2)), torch.exp(-((xx - cx) ** 2)))
    images.append(img.unsqueeze(0))
images = torch.stack(images)
print("images", tuple(images.shape), images.dtype,
      f"{images.min().item():.4f} {images.max().item():.4f}")  # fmt: skip

model = Autoencoder()
fill(model)
print(model.decoder[0])
out = model(images[:2])
print("output", out.shape[1:], out.size()[-2:], bool(((out > 0) & (out < 1)).all()))

rng = np.random.RandomState(0)
noise_factor = 0.3
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
for epoch in range(5):
    model.train()
    train_loss = 0.0
    for i in range(0, 32, 8):
        img = images[i : i + 8]
        noise = torch.from_numpy(rng.standard_normal(img.shape).astype(np.float32))
        noisy = torch.clamp(img + noise_factor * noise, 0.0, 1.0)
        output = model(noisy)
        loss = criterion(output, img)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * img.size(0)
    train_loss = train_loss / 32
    print(f"epoch [{epoch + 1}/5], train BCE {train_loss:.4f}")

model.eval()
with torch.no_grad():
    noise = torch.from_numpy(rng.standard_normal(images.shape).astype(np.float32))
    noisy = (images + noise_factor * noise).clamp(0, 1)
    recon = model(noisy)
    mse = F.mse_loss(recon, images)
    bce = F.binary_cross_entropy(recon, images, reduction="sum") / images.size(0)
    noisy_mse = nn.MSELoss()(noisy, images)
print(f"{mse.item():.4f}")
print("mse formats as a number", f"{mse}" == str(mse.item()), f"{mse:.3f}")
print(f"eval mse {mse.item():.4f} bce per image {bce.item():.4f} "
      f"noisy input mse {noisy_mse.item():.4f}")  # fmt: skip
print("denoised beats noisy", mse.item() < noisy_mse.item())
print("grad while evaluating", recon.requires_grad, recon.grad_fn)
print(recon[0, 0, 5, :4])
print(recon[:2, 0, 5:7, 5:7])
print(mse)
print(recon[0, 0, 5, :4].tolist() == [round(v, 4) for v in recon[0, 0, 5, :4].tolist()])

# MSELoss training from the same start, with a Sigmoid-free head's logits
# through BCEWithLogitsLoss as a check of the pair.
fill(model)
mse_opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
for step in range(6):
    mse_opt.zero_grad()
    loss = nn.MSELoss()(model(images), images)
    loss.backward()
    mse_opt.step()
    if step % 2 == 1:
        print(f"mse step {step} {loss.item():.4f}")
logits = model.decoder[:-1](model.encoder(images[:4]))
a = nn.BCEWithLogitsLoss()(logits, images[:4])
b = nn.BCELoss()(torch.sigmoid(logits), images[:4])
print("bce pair agree", torch.allclose(a, b, atol=1e-5), f"{a.item():.4f}")

# Reproducibility: the same seed draws the same noise and the same init.
torch.manual_seed(42)
n1, m1 = torch.randn(3), Autoencoder()
torch.manual_seed(42)
n2, m2 = torch.randn(3), Autoencoder()
print("seeded noise repeats", torch.equal(n1, n2))
pairs = zip(m1.parameters(), m2.parameters(), strict=True)
print("seeded init repeats", all(torch.equal(p, q) for p, q in pairs))
print("different seed differs", not torch.equal(torch.randn(3), n1))
