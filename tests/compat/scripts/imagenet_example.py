# ruff: noqa: UP004, UP008, UP031, UP032 -- upstream's idioms, kept
"""pytorch/examples imagenet/main.py's structure on tiny fake data: a small
ResNet of torchvision's BasicBlock, CrossEntropyLoss, SGD with momentum and
weight decay, StepLR, the AverageMeter/ProgressMeter/Summary classes fed the
0-d tensors accuracy() returns (formatted through Tensor.__format__),
accuracy() by topk, validation under model.eval() and torch.no_grad(),
save_checkpoint with shutil.copyfile to model_best.pth.tar, and a resume from
that checkpoint (start_epoch, best_acc1, the optimizer's and scheduler's
state). Upstream's datasets.FakeData draws its pictures at random; here a
Dataset makes them from a formula. The meters of time are kept but not
printed, and the loader does not shuffle (the libraries' draws differ)."""

import os
import shutil
import tempfile
import time
from enum import Enum

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim
import torch.utils.data
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import Dataset

best_acc1 = 0


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(
        in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False
    )


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion: int = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super().__init__()
        self.inplanes = 8
        self.conv1 = nn.Conv2d(
            3, self.inplanes, kernel_size=3, stride=1, padding=1, bias=False
        )
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 8, layers[0])
        self.layer2 = self._make_layer(block, 16, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def resnet_tiny():
    model = ResNet(BasicBlock, [2, 1])
    with torch.no_grad():  # weights from a formula, as the scripts do
        for i, (name, p) in enumerate(model.named_parameters()):
            if "bn" in name or "downsample.1" in name:
                continue
            p.copy_(
                torch.arange(p.numel(), dtype=torch.float32)
                .mul(0.47 + 0.09 * i)
                .sin()
                .mul(0.2)
                .view(p.shape)
            )
    return model


class FakeData(Dataset):
    """datasets.FakeData's shape of data: (image, class) pairs, here from a
    formula with the class written into the picture."""

    def __init__(self, size, image_size, num_classes, offset=0):
        self.size, self.image_size = size, image_size
        self.num_classes, self.offset = num_classes, offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        target = (index * 7 + self.offset) % self.num_classes
        c, h, w = self.image_size
        grid = torch.arange(c * h * w, dtype=torch.float32).view(c, h, w)
        img = torch.sin(grid * (0.05 + 0.03 * target) + index + self.offset) * 0.5
        img[0, : target % h + 1, :] += 0.8
        return img, target


class Summary(Enum):
    NONE = 0
    AVERAGE = 1
    SUM = 2
    COUNT = 3


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f", summary_type=Summary.AVERAGE):
        self.name = name
        self.fmt = fmt
        self.summary_type = summary_type
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)

    def summary(self):
        fmtstr = ""
        if self.summary_type is Summary.NONE:
            fmtstr = ""
        elif self.summary_type is Summary.AVERAGE:
            fmtstr = "{name} {avg:.3f}"
        elif self.summary_type is Summary.SUM:
            fmtstr = "{name} {sum:.3f}"
        elif self.summary_type is Summary.COUNT:
            fmtstr = "{name} {count:.3f}"
        else:
            raise ValueError("invalid summary type %r" % self.summary_type)
        return fmtstr.format(**self.__dict__)


class ProgressMeter(object):
    def __init__(self, num_batches, meters, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print("\t".join(entries))

    def display_summary(self):
        entries = [" *"]
        entries += [meter.summary() for meter in self.meters]
        print(" ".join(entries))

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = "{:" + str(num_digits) + "d}"
        return "[" + fmt + "/" + fmt.format(num_batches) + "]"


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified
    values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def train(train_loader, model, criterion, optimizer, epoch, device, print_freq):
    batch_time = AverageMeter("Time", ":6.3f")
    data_time = AverageMeter("Data", ":6.3f")
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")
    top5 = AverageMeter("Acc@5", ":6.2f")
    progress = ProgressMeter(
        len(train_loader), [losses, top1, top5], prefix="Epoch: [{}]".format(epoch)
    )

    # switch to train mode
    model.train()

    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        data_time.update(time.time() - end)
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        output = model(images)
        loss = criterion(output, target)

        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1[0], images.size(0))
        top5.update(acc5[0], images.size(0))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end)
        end = time.time()

        if i % print_freq == 0:
            progress.display(i + 1)


def validate(val_loader, model, criterion, device, print_freq):
    def run_validate(loader, base_progress=0):
        with torch.no_grad():
            end = time.time()
            for i, (images, target) in enumerate(loader):
                i = base_progress + i
                images = images.to(device, non_blocking=True)
                target = target.to(device, non_blocking=True)

                output = model(images)
                loss = criterion(output, target)

                acc1, acc5 = accuracy(output, target, topk=(1, 5))
                losses.update(loss.item(), images.size(0))
                top1.update(acc1[0], images.size(0))
                top5.update(acc5[0], images.size(0))

                batch_time.update(time.time() - end)
                end = time.time()

                if i % print_freq == 0:
                    progress.display(i + 1)

    batch_time = AverageMeter("Time", ":6.3f", Summary.NONE)
    losses = AverageMeter("Loss", ":.4e", Summary.NONE)
    top1 = AverageMeter("Acc@1", ":6.2f", Summary.AVERAGE)
    top5 = AverageMeter("Acc@5", ":6.2f", Summary.AVERAGE)
    progress = ProgressMeter(len(val_loader), [losses, top1, top5], prefix="Test: ")

    # switch to evaluate mode
    model.eval()
    run_validate(val_loader)
    progress.display_summary()
    return top1.avg


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def main_worker(epochs, resume=""):
    global best_acc1
    start_epoch = 0
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    model = resnet_tiny().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(
        model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4
    )
    scheduler = StepLR(optimizer, step_size=2, gamma=0.1)

    if resume:
        if os.path.isfile(resume):
            print("=> loading checkpoint '{}'".format(resume))
            checkpoint = torch.load(resume, map_location="cpu")
            start_epoch = checkpoint["epoch"]
            best_acc1 = checkpoint["best_acc1"]
            model.load_state_dict(checkpoint["state_dict"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            print(
                "=> loaded checkpoint '{}' (epoch {})".format(
                    resume, checkpoint["epoch"]
                )
            )
            print(
                "resumed",
                type(best_acc1).__name__,
                "lr",
                scheduler.get_last_lr(),
                "momentum buffers",
                len(optimizer.state_dict()["state"]),
            )
        else:
            print("=> no checkpoint found at '{}'".format(resume))

    cudnn.benchmark = True
    train_dataset = FakeData(24, (3, 12, 12), 10)
    val_dataset = FakeData(12, (3, 12, 12), 10, offset=3)
    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=8,
        shuffle=False,
        num_workers=0,
        pin_memory=True,
        sampler=None,
    )
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=6, shuffle=False, num_workers=0, pin_memory=True
    )

    for epoch in range(start_epoch, epochs):
        train(train_loader, model, criterion, optimizer, epoch, device, 2)
        acc1 = validate(val_loader, model, criterion, device, 1)
        scheduler.step()

        # remember best acc@1 and save checkpoint
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)

        save_checkpoint(
            {
                "epoch": epoch + 1,
                "arch": "resnet_tiny",
                "state_dict": model.state_dict(),
                "best_acc1": best_acc1,
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
            },
            is_best,
        )
        print("epoch", epoch, "is_best", bool(is_best), "lr", scheduler.get_last_lr())
    return model


os.chdir(tempfile.mkdtemp())
print("cudnn", cudnn.benchmark, cudnn.deterministic, cudnn.is_available())
img, target = FakeData(4, (3, 12, 12), 10)[1]
print("sample", tuple(img.shape), img.dtype, type(target).__name__, target)
meter = AverageMeter("Acc@1", ":6.2f")
meter.update(torch.tensor([50.0])[0], 4)
meter.update(torch.tensor([75.0])[0], 4)
print("meter", str(meter), "|", meter.summary(), "|", type(meter.avg).__name__)
out = torch.tensor([[0.1, 0.5, 0.2, 0.9, 0.0, 0.3], [0.8, 0.1, 0.3, 0.2, 0.6, 0.0]])
print("accuracy", [a.tolist() for a in accuracy(out, torch.tensor([1, 0]), (1, 3))])

model = main_worker(epochs=3)
print("files", sorted(os.listdir(".")))
best = torch.load("model_best.pth.tar")
print(
    "best",
    best["epoch"],
    best["arch"],
    sorted(best["optimizer"]),
    best["scheduler"]["last_epoch"],
)
model = main_worker(epochs=4, resume="checkpoint.pth.tar")
main_worker(epochs=1, resume="missing.pth.tar")
