"""compat.vision.models.resnet18 against a real-PyTorch ResNet-18 written here with
torch.nn as torchvision writes it (torchvision itself is not importable here)."""

import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat import nn, optim
from jaxblitz.compat.vision import models

real = pytest.importorskip("torch")
rnn = real.nn


class RealBlock(rnn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = rnn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = rnn.BatchNorm2d(planes)
        self.relu = rnn.ReLU(inplace=True)
        self.conv2 = rnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = rnn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class RealResNet18(rnn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = rnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = rnn.BatchNorm2d(64)
        self.relu = rnn.ReLU(inplace=True)
        self.maxpool = rnn.MaxPool2d(3, 2, 1)
        inplanes = 64
        for i, planes in enumerate([64, 128, 256, 512], 1):
            stride = 1 if i == 1 else 2
            down = None
            if stride != 1 or inplanes != planes:
                down = rnn.Sequential(
                    rnn.Conv2d(inplanes, planes, 1, stride, bias=False),
                    rnn.BatchNorm2d(planes),
                )
            blocks = [
                RealBlock(inplanes, planes, stride, down),
                RealBlock(planes, planes),
            ]
            setattr(self, f"layer{i}", rnn.Sequential(*blocks))
            inplanes = planes
        self.avgpool = rnn.AdaptiveAvgPool2d((1, 1))
        self.fc = rnn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(real.flatten(self.avgpool(x), 1))


@pytest.fixture(scope="module")
def pair():
    """A real ResNet-18 with non-trivial BN statistics; compat's with its weights."""
    real.manual_seed(0)
    reference = RealResNet18()
    with real.no_grad():
        for m in reference.modules():
            if isinstance(m, rnn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 2.0)
    model = models.resnet18()
    state = {k: torch.tensor(v.numpy()) for k, v in reference.state_dict().items()}
    model.load_state_dict(state)
    return reference, model


def test_resnet18_has_torchvisions_modules_keys_and_shapes(pair):
    reference, model = pair
    ours = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert list(ours) == list(theirs) and ours == theirs
    assert [name for name, _ in model.named_children()] == [
        "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4",
        "avgpool", "fc",
    ]  # fmt: skip
    assert isinstance(model.layer1[0], models.BasicBlock)
    assert model.state_dict()["bn1.num_batches_tracked"].dtype == torch.int64
    assert sum(p.numel() for p in model.parameters()) == 11689512


def test_resnet18_initialises_as_torchvision():
    model = models.resnet18(num_classes=10)
    assert tuple(model.fc.weight.shape) == (10, 512)
    w = model.layer4[1].conv2.weight.detach().numpy()  # fan_out 512 * 9
    assert abs(w.mean()) < 1e-3 and abs(w.std() / np.sqrt(2 / (512 * 9)) - 1) < 0.01
    w = model.conv1.weight.detach().numpy()  # fan_out 64 * 49
    assert abs(w.std() / np.sqrt(2 / (64 * 49)) - 1) < 0.05
    assert np.all(model.layer2[0].downsample[1].weight.detach().numpy() == 1)
    assert np.all(model.bn1.bias.detach().numpy() == 0)


def close(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-4 * abs(theirs).max())


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_resnet18_logits_and_gradients_match_torch(pair, train):
    reference, model = pair
    reference.train(train)
    model.train(train)
    x = np.random.default_rng(1).random((2, 3, 64, 64), np.float32)
    rx = real.from_numpy(x).requires_grad_()
    cx = torch.tensor(x, requires_grad=True)
    ry, cy = reference(rx), model(cx)
    np.testing.assert_allclose(cy.detach().numpy(), ry.detach().numpy(), atol=2e-4)
    ry.square().sum().backward()
    cy.square().sum().backward()
    # float32 sums in another order, amplified in train mode by BatchNorm over
    # 2 x 2 x 2 values a channel in layer4: compared relative to the largest
    close(cx.grad.numpy(), rx.grad.numpy())
    for name in ("conv1.weight", "layer3.0.downsample.1.weight", "fc.bias"):
        ours = dict(model.named_parameters())[name].grad.numpy()
        close(ours, reference.get_parameter(name).grad.numpy())
    reference.zero_grad()
    model.zero_grad()
    if train:  # the running statistics moved the same way
        np.testing.assert_allclose(
            model.layer1[0].bn1.running_var.numpy(),
            reference.layer1[0].bn1.running_var.numpy(),
            rtol=1e-5,
        )


def test_pretrained_weights_load_from_torch_home(tmp_path, monkeypatch, pair):
    reference, _ = pair
    folder = tmp_path / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    real.save(reference.state_dict(), folder / "resnet18-f37072fd.pth")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    weights = models.ResNet18_Weights.DEFAULT
    assert weights is models.ResNet18_Weights.IMAGENET1K_V1
    assert weights.url == "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    model = models.resnet18(weights=weights)
    np.testing.assert_array_equal(
        model.layer2[1].conv1.weight.detach().numpy(),
        reference.layer2[1].conv1.weight.detach().numpy(),
    )
    preset = weights.transforms()
    assert tuple(preset(torch.rand(3, 300, 260)).shape) == (3, 224, 224)


def test_missing_weights_are_downloaded_to_the_cache_as_torchvisions(
    tmp_path, monkeypatch
):
    """No network here: the download fails (urlopen replaced, never called for
    real), and the error names the URL and the cache path to put the file at."""
    import urllib.error

    from jaxblitz.compat import hub

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network in the tests")

    monkeypatch.setattr(hub, "urlopen", offline)
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    expected = tmp_path / "torch" / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    with pytest.raises(urllib.error.URLError) as e:
        models.resnet18(weights="IMAGENET1K_V1")
    note = "\n".join(e.value.__notes__)
    assert str(expected) in note
    assert "https://download.pytorch.org/models/resnet18-f37072fd.pth" in note
    assert not expected.exists()
    with pytest.raises(
        ValueError, match="'num_classes' expected value 1000 but got 10"
    ):
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT, num_classes=10)


def test_the_autograd_tutorials_finetuning_steps(pair):
    model = models.resnet18()
    # the tutorial's (1, 3, 64, 64) batch, doubled: the shapes compiled above
    data, labels = torch.rand(2, 3, 64, 64), torch.rand(2, 1000)
    prediction = model(data)
    (prediction - labels).sum().backward()
    assert tuple(model.conv1.weight.grad.shape) == (64, 3, 7, 7)
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(512, 10)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable == ["fc.weight", "fc.bias"]
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    before = model.fc.weight.detach().clone()
    model(data).sum().backward()
    optimizer.step()
    assert model.conv1.weight.grad is not None  # from the first backward only
    assert not np.array_equal(model.fc.weight.detach().numpy(), before.numpy())
