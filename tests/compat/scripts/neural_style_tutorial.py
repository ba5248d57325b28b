# ruff: noqa: UP008, UP032, SIM101 -- the tutorial's idioms, kept
"""The "Neural Transfer Using PyTorch" tutorial (advanced_source/
neural_style_tutorial.py) on in-memory pictures: ContentLoss and StyleLoss
modules that keep a detached target and store their loss in forward, a
Normalization module, the model built as an nn.Sequential by walking a
feature net's children and inserting the loss modules, trimmed after the last
loss, and the INPUT picture optimised by optim.LBFGS([input_img]) with a
closure that clamps it through ``.data`` under no_grad. Upstream's vgg19
weights, PIL pictures and plots become a small VGG-like net with weights from
a formula, pictures from a formula and printed values; it runs in float64
(set_default_dtype), since LBFGS carries float32's rounding differences from
its first loss into a different path and the printed losses are compared
(to 4 decimals, over 20 evaluations: float64's rounding drifts too)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cpu")
torch.set_default_device(device)
torch.set_default_dtype(torch.float64)
imsize = 24


def image_loader(seed):
    """A picture as the tutorial's loader gives it: (1, 3, imsize, imsize),
    values in [0, 1]."""
    yy, xx = np.mgrid[0:imsize, 0:imsize] / imsize
    chans = [
        0.5
        + 0.45
        * np.sin((2 + (seed + c) % 3) * 3.3 * (xx + 0.5 * c * yy))
        * np.cos((1 + seed % 2) * 4.1 * (yy - 0.2 * c))
        for c in range(3)
    ]
    image = torch.tensor(np.stack(chans), dtype=torch.float32)
    return image.unsqueeze(0).to(device, torch.double)


style_img = image_loader(1)
content_img = image_loader(4)
assert style_img.size() == content_img.size(), (
    "we need to import style and content images of the same size"
)
image = content_img.cpu().clone()
image = image.squeeze(0)
print("content", tuple(image.shape), round(image.min().item(), 4) >= 0)


class ContentLoss(nn.Module):
    def __init__(
        self,
        target,
    ):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used
        # to dynamically compute the gradient: this is a stated value,
        # not a variable.
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size(=1)
    features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL
    G = torch.mm(features, features.t())  # compute the gram product
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


def vgg_like():
    """vgg19().features' pattern, smaller: conv and ReLU(inplace=True) pairs
    with max-pools, in eval mode."""
    layers, c = [], 3
    for v in [8, 8, "M", 12, 12, "M", 16, 16, 16, "M", 16]:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
            c = v
    features = nn.Sequential(*layers)
    with torch.no_grad():
        for i, p in enumerate(features.parameters()):
            n = p.numel()
            p.copy_(
                torch.arange(n, dtype=torch.float64)
                .mul(0.41 + 0.13 * i)
                .sin()
                .mul(0.3 if p.dim() > 1 else 0.02)
                .view(p.shape)
            )
    return features


cnn = vgg_like().eval()
cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406])
cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225])


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can
        # directly work with image Tensor of shape [B x C x H x W].
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


content_layers_default = ["conv_4"]
style_layers_default = ["conv_1", "conv_2", "conv_3", "conv_4", "conv_5"]


def get_style_model_and_losses(
    cnn,
    normalization_mean,
    normalization_std,
    style_img,
    content_img,
    content_layers=content_layers_default,
    style_layers=style_layers_default,
):
    normalization = Normalization(normalization_mean, normalization_std)
    content_losses = []
    style_losses = []
    model = nn.Sequential(normalization)

    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = "conv_{}".format(i)
        elif isinstance(layer, nn.ReLU):
            name = "relu_{}".format(i)
            # The in-place version doesn't play very nicely with the
            # ContentLoss and StyleLoss we insert below.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = "pool_{}".format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = "bn_{}".format(i)
        else:
            raise RuntimeError(
                "Unrecognized layer: {}".format(layer.__class__.__name__)
            )

        model.add_module(name, layer)

        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)

        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)

    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break

    model = model[: (i + 1)]

    return model, style_losses, content_losses


input_img = content_img.clone()


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img])
    return optimizer


def run_style_transfer(
    cnn,
    normalization_mean,
    normalization_std,
    content_img,
    style_img,
    input_img,
    num_steps=300,
    style_weight=1000000,
    content_weight=1,
):
    """Run the style transfer."""
    print("Building the style transfer model..")
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn, normalization_mean, normalization_std, style_img, content_img
    )
    print("model", [name for name, _ in model.named_children()])
    print("trimmed", type(model).__name__, len(model), type(model[-1]).__name__)

    # We want to optimize the input and not the model parameters so we
    # update all the requires_grad fields accordingly
    input_img.requires_grad_(True)
    # We also put the model in evaluation mode, so that specific layers
    # such as dropout or batch normalization layers behave correctly.
    model.eval()
    model.requires_grad_(False)

    optimizer = get_input_optimizer(input_img)

    print("Optimizing..")
    run = [0]
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            with torch.no_grad():
                input_img.data.clamp_(0, 1)

            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0

            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss

            style_score *= style_weight
            content_score *= content_weight

            loss = style_score + content_score
            loss.backward()

            run[0] += 1
            if run[0] % 10 == 0:
                print("run {}:".format(run))
                print(
                    "Style Loss : {:.4f} Content Loss: {:.4f}".format(
                        style_score.item(), content_score.item()
                    )
                )
                print()

            return style_score + content_score

        optimizer.step(closure)

    # a last correction...
    with torch.no_grad():
        input_img.clamp_(0, 1)

    print(
        "losses kept",
        [type(sl.loss).__name__ for sl in style_losses[:2]],
        "targets need no grad",
        style_losses[0].target.requires_grad,
        content_losses[0].target.requires_grad,
    )
    print(
        "model grads",
        {p.grad for p in model.parameters()},
        "input grad",
        tuple(input_img.grad.shape),
    )
    state = optimizer.state[input_img]
    print(
        "lbfgs",
        optimizer.param_groups[0]["max_iter"],
        "state n_iter",
        state["n_iter"],
        "func_evals",
        state["func_evals"],
    )
    return input_img


first = get_style_model_and_losses(
    cnn, cnn_normalization_mean, cnn_normalization_std, style_img, content_img
)[0]
first(content_img)
print("content loss at the content picture", first.content_loss_4.loss.item())
output = run_style_transfer(
    cnn,
    cnn_normalization_mean,
    cnn_normalization_std,
    content_img,
    style_img,
    input_img,
    num_steps=15,
)
print(
    "output",
    tuple(output.shape),
    output.requires_grad,
    output is input_img,
    "in [0, 1]",
    bool(output.min() >= 0 and output.max() <= 1),
)
print("output mean {:.3f}".format(output.mean().item()), output.dtype)
print("content picture untouched", torch.equal(content_img, image.unsqueeze(0)))
