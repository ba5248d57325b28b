"""The DCGAN example's shape at 16x16: argparse flags, torchvision FakeData
(or CIFAR10) through Resize/ToTensor/Normalize, a ConvTranspose2d generator and
a Conv2d discriminator with BatchNorm2d, LeakyReLU(0.2, inplace=True), Tanh and
Sigmoid, weights_init applied by class name, BCELoss, Adam(betas=(0.5, 0.999)),
labels from torch.full, samples written with vutils.save_image(normalize=True),
checkpoints of both nets' state_dicts."""

import argparse
import os
import random

import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
import torchvision.datasets as dset
import torchvision.transforms as transforms
import torchvision.utils as vutils

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="fake", help="cifar10 | fake")
parser.add_argument("--dataroot", default="data")
parser.add_argument("--batchSize", type=int, default=8)
parser.add_argument("--imageSize", type=int, default=16)
parser.add_argument("--nz", type=int, default=8)
parser.add_argument("--ngf", type=int, default=8)
parser.add_argument("--ndf", type=int, default=8)
parser.add_argument("--niter", type=int, default=1)
parser.add_argument("--lr", type=float, default=0.0002)
parser.add_argument("--beta1", type=float, default=0.5)
parser.add_argument("--outf", default="out")
parser.add_argument("--manualSeed", type=int, default=999)
opt = parser.parse_args()
os.makedirs(opt.outf, exist_ok=True)
random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)

pipeline = transforms.Compose([
    transforms.Resize(opt.imageSize),
    transforms.ToTensor(),
    transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
])  # fmt: skip
if opt.dataset == "cifar10":
    dataset = dset.CIFAR10(root=opt.dataroot, download=True, transform=pipeline)
else:
    dataset = dset.FakeData(size=24, image_size=(3, opt.imageSize, opt.imageSize),
                            transform=transforms.ToTensor())  # fmt: skip
nc = 3
dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize,
                                         shuffle=True)  # fmt: skip
device = torch.device("cpu")
nz, ngf, ndf = opt.nz, opt.ngf, opt.ndf


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
        torch.nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


netG = Generator().to(device)
netG.apply(weights_init)
print(netG)
netD = Discriminator().to(device)
netD.apply(weights_init)
print(netD)
criterion = nn.BCELoss()
fixed_noise = torch.randn(opt.batchSize, nz, 1, 1, device=device)
real_label, fake_label = 1, 0
optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

for epoch in range(opt.niter):
    for i, data in enumerate(dataloader, 0):
        netD.zero_grad()
        real_cpu = data[0].to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype,
                           device=device)  # fmt: skip
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.randn(batch_size, nz, 1, 1, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        print(f"[{epoch}/{opt.niter}][{i}/{len(dataloader)}] Loss_D: {errD.item():.4f} "
              f"Loss_G: {errG.item():.4f} D(x): {D_x:.4f} "
              f"D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}")  # fmt: skip
        if i % 2 == 0:
            vutils.save_image(real_cpu, f"{opt.outf}/real_samples.png", normalize=True)
            fake = netG(fixed_noise)
            vutils.save_image(fake.detach(),
                              f"{opt.outf}/fake_samples_epoch_{epoch:03d}.png",
                              normalize=True)  # fmt: skip
    torch.save(netG.state_dict(), f"{opt.outf}/netG_epoch_{epoch}.pth")
    torch.save(netD.state_dict(), f"{opt.outf}/netD_epoch_{epoch}.pth")
print("fake samples:", sorted(os.listdir(opt.outf)))
print("fake batch:", fake.shape, "in [-1, 1]:", bool(fake.abs().max() <= 1))
