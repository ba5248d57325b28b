# ruff: noqa: UP008, UP032, B905 -- upstream's idioms, kept
"""pytorch/examples fast_neural_style (transformer_net.py, vgg.py, utils.py,
neural_style.py's train and stylize) on in-memory pictures: the TransformerNet
of reflection-padded convolutions, InstanceNorm2d(affine=True), residual
blocks and nearest upsampling by F.interpolate; a VGG-like feature net frozen
with requires_grad_(False) that returns a namedtuple; Gram matrices by bmm;
content and style losses under Adam; the state_dict saved, and loaded with
the InstanceNorm running-stat keys deleted as stylize() does. Upstream's
ImageFolder, PIL and pretrained vgg16 become pictures from a formula and a
small net with weights from a formula; channels are fewer, the picture 32x32."""

import os
import re
import tempfile
from collections import namedtuple

import numpy as np
import torch
from torch.optim import Adam
from torch.utils.data import DataLoader, TensorDataset


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(
                x_in, mode="nearest", scale_factor=self.upsample
            )
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 12, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(12, affine=True)
        self.conv3 = ConvLayer(12, 16, kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(16, affine=True)
        self.res1 = ResidualBlock(16)
        self.res2 = ResidualBlock(16)
        self.res3 = ResidualBlock(16)
        self.deconv1 = UpsampleConvLayer(16, 12, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(12, affine=True)
        self.deconv2 = UpsampleConvLayer(12, 8, kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv3 = ConvLayer(8, 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.res3(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


def vgg_features():
    """vgg16().features' pattern, smaller: conv-relu pairs and max-pools."""
    cfg = [8, 8, "M", 12, 12, "M", 16, 16, 16, "M", 16, 16, 16]
    layers, c = [], 3
    for v in cfg:
        if v == "M":
            layers.append(torch.nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [torch.nn.Conv2d(c, v, 3, padding=1), torch.nn.ReLU(inplace=True)]
            c = v
    features = torch.nn.Sequential(*layers)
    with torch.no_grad():
        for i, p in enumerate(features.parameters()):
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float32)
                .mul(0.37 + 0.11 * i)
                .sin()
                .mul(0.25 if p.dim() > 1 else 0.02)
                .view(p.shape)
            )
    return features


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        vgg_pretrained_features = vgg_features()
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        self.slice4 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 16):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        for x in range(16, 23):
            self.slice4.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        h = self.slice4(h)
        h_relu4_3 = h
        vgg_outputs = namedtuple(
            "VggOutputs", ["relu1_2", "relu2_2", "relu3_3", "relu4_3"]
        )
        out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
        return out


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def pictures(n, size, seed):
    """n RGB pictures in [0, 255] (what ToTensor and mul(255) give)."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    out = []
    for k in range(n):
        chans = [
            0.5
            + 0.4
            * np.sin((3 + (k + seed + c) % 4) * 3.1 * (xx + c * yy))
            * np.cos((2 + c) * 2.3 * yy)
            for c in range(3)
        ]
        out.append(np.stack(chans))
    return torch.tensor(np.stack(out) * 255.0, dtype=torch.float32)


torch.manual_seed(42)
device = torch.device("cpu")
train_dataset = TensorDataset(pictures(8, 32, 0), torch.zeros(8, dtype=torch.int64))
train_loader = DataLoader(train_dataset, batch_size=4)

transformer = TransformerNet().to(device)
with torch.no_grad():
    for i, p in enumerate(transformer.parameters()):
        n = p.numel()
        scale = 0.05 if p.dim() > 1 else 0.02
        base = 1.0 if p.dim() == 1 and i % 4 == 2 else 0.0  # InstanceNorm weights
        p.copy_(
            torch.arange(n, dtype=torch.float32)
            .mul(0.53 + 0.07 * i)
            .sin()
            .mul(scale)
            .add(base)
            .view(p.shape)
        )
print(transformer.res1)
print("in1", transformer.in1, "buffers", [k for k, _ in transformer.named_buffers()])
optimizer = Adam(transformer.parameters(), 1e-3)
mse_loss = torch.nn.MSELoss()

vgg = Vgg16(requires_grad=False).to(device)
print(
    "vgg trainable",
    sum(p.requires_grad for p in vgg.parameters()),
    "of",
    len(list(vgg.parameters())),
)
style = pictures(1, 32, 7)
style = style.repeat(4, 1, 1, 1).to(device)
features_style = vgg(normalize_batch(style))
print(
    "features",
    type(features_style).__name__,
    features_style._fields,
    [tuple(f.shape) for f in features_style],
)
gram_style = [gram_matrix(y) for y in features_style]
print(
    "gram",
    [tuple(g.shape) for g in gram_style],
    "symmetric",
    all(torch.allclose(g, g.transpose(1, 2)) for g in gram_style),
)
print("style was scaled in place", style.max().item() <= 1.0)

content_weight, style_weight = 1e0, 1e3
for e in range(2):
    transformer.train()
    agg_content_loss = 0.0
    agg_style_loss = 0.0
    count = 0
    for batch_id, (x, _) in enumerate(train_loader):
        n_batch = len(x)
        count += n_batch
        optimizer.zero_grad()

        x = x.to(device)
        y = transformer(x)

        y = normalize_batch(y)
        x = normalize_batch(x)

        features_y = vgg(y)
        features_x = vgg(x)

        content_loss = content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= style_weight

        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()

        agg_content_loss += content_loss.item()
        agg_style_loss += style_loss.item()

        mesg = (
            "Epoch {}:\t[{}/{}]\tcontent: {:.4f}\tstyle: {:.4f}\ttotal: {:.4f}".format(
                e + 1,
                count,
                len(train_dataset),
                agg_content_loss / (batch_id + 1),
                agg_style_loss / (batch_id + 1),
                (agg_content_loss + agg_style_loss) / (batch_id + 1),
            )
        )
        print(mesg)
print("vgg grads", {p.grad for p in vgg.parameters()})

# save model
folder = tempfile.mkdtemp()
transformer.eval().cpu()
save_model_path = os.path.join(folder, "epoch_2.model")
torch.save(transformer.state_dict(), save_model_path)
print(
    "saved keys",
    len(transformer.state_dict()),
    "in1 running",
    [k for k in transformer.state_dict() if k.startswith("in1.")],
)

# stylize
content_image = pictures(1, 32, 3)[0]
content_image = content_image.unsqueeze(0).to(device)
with torch.no_grad():
    style_model = TransformerNet()
    state_dict = torch.load(save_model_path)
    # as a checkpoint from before InstanceNorm stopped tracking running stats:
    # a plain dict (no versions) with the running stats in it
    state_dict = dict(state_dict)
    state_dict["in1.running_mean"] = torch.zeros(8)
    state_dict["res1.in2.running_var"] = torch.ones(16)
    try:
        style_model.load_state_dict(state_dict, strict=False)
    except RuntimeError as err:
        print("old checkpoint refused:", str(err).splitlines()[1].strip()[:150])
    # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
    for k in list(state_dict.keys()):
        if re.search(r"in\d+\.running_(mean|var)$", k):
            del state_dict[k]
    print("load", style_model.load_state_dict(state_dict))
    style_model.to(device)
    style_model.eval()
    output = style_model(content_image).cpu()
print(
    "stylized",
    tuple(output.shape),
    output.requires_grad,
    "same as trained",
    torch.allclose(output, transformer(content_image), atol=1e-4),
)
img = output[0].clone().clamp(0, 255).numpy()
img = img.transpose(1, 2, 0).astype("uint8")
print("image", img.shape, img.dtype)
# two decimals: the convolution biases before each InstanceNorm get gradients
# of rounding noise only (the norm removes them), which Adam scales up to
# steps of lr, differently in each library
print("output mean {:.2f}".format(output.mean().item()))
