"""compat's ``nn.Module`` API and containers against real PyTorch: ModuleList,
ModuleDict, Sequential, traversal, modes, hooks, state_dicts with buffers, and
real scripts' networks (pytorch/examples' MNIST Net, torchvision's resnet18 built
from ``nn``) printed, loaded from torch's weights and run.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.compat.nn.test_nn_parity import check

pt = pytest.importorskip("torch")

RNG = np.random.default_rng(2)


def layers(nn):
    return [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.Tanh()]


# -- containers --------------------------------------------------------------------


def test_module_list_edits_match_torch():
    def fn(torch):
        nn = torch.nn
        ml = nn.ModuleList(layers(nn))
        seen = [len(ml), type(ml[-1]).__name__, [type(m).__name__ for m in ml[1:3]]]
        ml.append(nn.Sigmoid())
        ml.extend([nn.ReLU(), nn.ReLU()])
        ml.insert(1, nn.GELU())
        del ml[0]
        popped = ml.pop(-1)
        ml[0] = nn.ELU()
        ml += [nn.Identity()]
        both = ml + nn.ModuleList([nn.SiLU()])
        seen += [repr(popped), list(dict(ml.named_children())), repr(ml), len(both)]
        seen.append(type(both).__name__)
        seen.append(list(ml.state_dict()))
        return seen

    check(fn)


@pytest.mark.parametrize(
    "case",
    [
        lambda nn: nn.ModuleList(layers(nn))[4],
        lambda nn: nn.ModuleList(layers(nn))[-5],
        lambda nn: nn.ModuleList().extend(3),
        lambda nn: nn.ModuleList(layers(nn))(np.ones(2)),
        lambda nn: nn.Sequential(*layers(nn))[7],
        lambda nn: nn.Sequential() + nn.ModuleList(),
        lambda nn: nn.ModuleDict({"a": nn.ReLU()})["b"],
        lambda nn: nn.ModuleDict([("a", nn.ReLU(), 3)]),
        lambda nn: nn.ModuleDict({"a.b": nn.ReLU()}),
        lambda nn: repr(nn.ModuleList()),
    ],
)
def test_container_errors_match_torch(case):
    check(lambda torch: case(torch.nn))


def test_module_dict_behaves_as_torch():
    def fn(torch):
        nn = torch.nn
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Linear(2, 2)})
        md["c"] = nn.Tanh()
        md.update([("d", nn.Sigmoid())])
        popped = md.pop("b")
        return [
            list(md),
            list(md.keys()),
            [type(v).__name__ for v in md.values()],
            "a" in md,
            len(md),
            repr(popped),
            repr(md),
            list(md.state_dict()),
        ]

    check(fn)


def test_sequential_indexing_keeps_names_as_torch():
    def fn(torch):
        nn = torch.nn
        from collections import OrderedDict

        seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
        seq.append(nn.Linear(3, 1))
        tail = seq[1:]
        seq.insert(0, nn.Identity())
        seq2 = nn.Sequential(*layers(nn))
        del seq2[1]
        seq2[0] = nn.Linear(2, 3, bias=False)
        added = seq2 + nn.Sequential(nn.ReLU())
        x = torch.ones(4, 2)
        return [
            repr(tail),
            repr(seq),
            list(dict(seq2.named_children())),
            repr(added),
            len(added),
            type(seq[-1]).__name__,
            seq2.pop(0).in_features,
            repr(seq2),
            (x @ x.t()).shape,
        ]

    check(fn)


def test_identity_ignores_its_arguments_and_returns_the_input():
    def fn(torch):
        x = torch.ones(2)
        ident = torch.nn.Identity(54, unused="argumentless")
        return ident(x) is x, repr(ident), list(ident.state_dict())

    check(fn)


# -- Module API --------------------------------------------------------------------


class _Names:
    """A small nested net, built with either library."""

    @staticmethod
    def build(torch):
        nn = torch.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 2, 3)
                self.bn = nn.BatchNorm2d(2)
                self.register_buffer("scale", torch.ones(2), persistent=False)

            def forward(self, x):
                return self.bn(self.conv(x)) * self.scale.view(1, 2, 1, 1)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.head = nn.Sequential(nn.Flatten(), nn.Linear(8, 3))
                self.shared = self.head[1]

            def forward(self, x):
                return self.head(self.block(x))

        return Net()


def test_traversal_names_match_torch():
    def fn(torch):
        net = _Names.build(torch)
        return [
            [n for n, _ in net.named_modules()],
            [n for n, _ in net.named_modules(remove_duplicate=False)],
            [type(m).__name__ for m in net.modules()],
            [n for n, _ in net.named_children()],
            [type(m).__name__ for m in net.children()],
            [n for n, _ in net.named_parameters()],
            [n for n, _ in net.named_parameters(recurse=False)],
            [n for n, _ in net.named_buffers()],
            [tuple(b.shape) for b in net.buffers()],
            list(net.state_dict()),
            {k: v.dtype for k, v in net.state_dict().items()},
            repr(net),
        ]

    check(fn)


def test_apply_train_eval_and_requires_grad_propagate_as_torch():
    def fn(torch):
        net = _Names.build(torch)
        visited = []
        net.apply(lambda m: visited.append(type(m).__name__))
        net.eval()
        modes = [m.training for m in net.modules()]
        net.block.train()
        modes2 = [m.training for m in net.modules()]
        net.train(False)
        net.requires_grad_(False)
        flags = [p.requires_grad for p in net.parameters()]
        return visited, modes, modes2, flags, net.training

    check(fn)


def test_submodules_are_added_and_looked_up_as_torch():
    def fn(torch):
        net = _Names.build(torch)
        net.add_module("extra", torch.nn.ReLU())
        net.register_module("other", torch.nn.Tanh())
        found = [
            type(net.get_submodule("block.bn")).__name__,
            type(net.get_submodule("")).__name__,
            type(net.get_submodule("head.1")).__name__,
        ]
        errors = []
        for target in ("block.nope", "block.conv.weight", "head.5"):
            try:
                net.get_submodule(target)
            except Exception as e:  # noqa: BLE001 -- compared like a value
                errors.append((type(e).__name__, str(e)))
        return found, errors, [n for n, _ in net.named_children()]

    check(fn)


def test_zero_grad_sets_none_or_zeros_as_torch():
    def fn(torch):
        net = torch.nn.Linear(2, 1)
        net(torch.ones(1, 2)).sum().backward()
        net.zero_grad(set_to_none=False)
        zeroed = net.weight.grad
        net(torch.ones(1, 2)).sum().backward()
        net.zero_grad()
        return zeroed, net.weight.grad, net.bias.grad

    check(fn)


def test_forward_hooks_change_inputs_and_outputs_as_torch():
    def fn(torch):
        net = torch.nn.Linear(2, 2)
        with torch.no_grad():
            net.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, -1.0]]))
            net.bias.zero_()
        calls = []
        pre = net.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        post = net.register_forward_hook(
            lambda m, args, out: calls.append(tuple(args[0].shape)) or out + 1
        )
        first = net(torch.ones(1, 2))
        pre.remove()
        second = net(torch.ones(1, 2))
        post.remove()
        return first, second, net(torch.ones(1, 2)), calls

    check(fn)


def test_load_state_dict_with_buffers_and_strict_false_as_torch():
    def fn(torch):
        src, dst = _Names.build(torch), _Names.build(torch)
        with torch.no_grad():
            for p in src.parameters():
                p.fill_(0.5)
        src.block.bn.running_mean.fill_(2.0)
        src.block.bn.num_batches_tracked.fill_(7)
        state = src.state_dict()
        result = dst.load_state_dict(state)
        loaded = dst.state_dict()
        del state["block.bn.running_var"]
        state["surplus"] = torch.ones(1)
        loose = dst.load_state_dict(state, strict=False)
        try:
            dst.load_state_dict(state)
        except RuntimeError as e:
            strict = str(e)
        return repr(result), loaded, loose.missing_keys, loose.unexpected_keys, strict

    check(fn)


def test_load_state_dict_with_assign_takes_the_tensors_themselves_as_torch():
    def fn(torch):
        src, dst = _Names.build(torch), _Names.build(torch)
        for p in dst.parameters():
            p.requires_grad_(False)
        state = src.state_dict()
        dst.load_state_dict(state, assign=True)
        loaded = dst.state_dict()
        return (
            [loaded[k].data_ptr() == v.data_ptr() for k, v in state.items()],
            [type(p).__name__ for p in dst.parameters()],
            [p.requires_grad for p in dst.parameters()],
            [torch.equal(loaded[k], v) for k, v in state.items()],
        )

    check(fn)


def test_reset_parameters_after_manual_seed_draws_a_new_layers_values_as_torch():
    def fn(torch):
        torch.manual_seed(0)
        fresh = [torch.nn.Linear(4, 3), torch.nn.Conv2d(2, 3, 3)]
        reset = [torch.nn.Linear(4, 3), torch.nn.Conv2d(2, 3, 3)]
        torch.manual_seed(0)
        for layer in reset:
            layer.reset_parameters()
        same = [
            torch.equal(a, b)
            for x, y in zip(fresh, reset, strict=True)
            for a, b in zip(x.parameters(), y.parameters(), strict=True)
        ]
        return same, [p.requires_grad for layer in reset for p in layer.parameters()]

    check(fn)


def test_to_dtype_converts_floats_and_keeps_integer_buffers():
    def fn(torch):
        net = _Names.build(torch).to(torch.float64)
        net2 = _Names.build(torch).double().float()
        return (
            {k: v.dtype for k, v in net.state_dict().items()},
            {k: v.dtype for k, v in net2.state_dict().items()},
            net.block.scale.dtype,
        )

    check(fn)


# -- real scripts' networks --------------------------------------------------------


def mnist_net(torch):
    """pytorch/examples mnist/main.py's Net, as written there."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    return Net()


def resnet18(torch, num_classes=10):
    """torchvision's resnet18 (BasicBlock, [2, 2, 2, 2]), its modules and init."""
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(64, 2)
            self.layer2 = self._make_layer(128, 2, stride=2)
            self.layer3 = self._make_layer(256, 2, stride=2)
            self.layer4 = self._make_layer(512, 2, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(
                        m.weight, mode="fan_out", nonlinearity="relu"
                    )
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                    nn.BatchNorm2d(planes),
                )
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return ResNet()


_WEIGHTS: dict = {}


def torch_weights(name, build):
    """One torch model's state_dict as NumPy arrays (shared by both runs)."""
    if name not in _WEIGHTS:
        pt.manual_seed(0)
        model = build(pt)
        _WEIGHTS[name] = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    return _WEIGHTS[name]


@pytest.mark.parametrize("build", [mnist_net, resnet18])
def test_script_networks_print_as_torch(build):
    check(lambda torch: (repr(build(torch)), list(build(torch).state_dict())))


def test_mnist_net_with_torch_weights_gives_torch_log_probabilities():
    x = RNG.standard_normal((2, 1, 28, 28)).astype(np.float32)
    weights = torch_weights("mnist", mnist_net)

    def fn(torch):
        net = mnist_net(torch)
        net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        net.eval()
        out = net(torch.tensor(x))
        out.sum().backward()
        return out, net.fc1.bias.grad

    check(fn)


def test_resnet18_with_torch_weights_trains_and_evaluates_as_torch():
    # float64: layer4's batch statistics over 2 values per channel amplify
    # float32's rounding differences to 1e-3 (float64 agrees to 1e-11)
    x = RNG.standard_normal((2, 3, 32, 32))
    weights = torch_weights("resnet18", resnet18)

    def fn(torch):
        net = resnet18(torch)
        net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        net.double()
        out = net(torch.tensor(x))  # train mode: batch statistics
        torch.nn.functional.cross_entropy(out, torch.tensor([1, 7])).backward()
        grads = [net.conv1.weight.grad, net.layer4[0].bn2.weight.grad, net.fc.bias.grad]
        state = net.state_dict()
        net.eval()
        return (
            out,
            grads,
            state["layer1.0.bn1.running_var"],
            state["layer4.1.bn2.num_batches_tracked"],
            net(torch.tensor(x)),
        )

    check(fn)


def test_named_parameters_and_buffers_keep_duplicates_when_asked_as_torch():
    def fn(torch):
        class Tied(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = torch.nn.Linear(2, 2)
                self.b = torch.nn.Linear(2, 2)
                self.b.weight = self.a.weight
                self.c = self.a
                self.register_buffer("s", torch.ones(1))
                self.register_buffer("t", self.s)

        m = Tied()
        return [
            [n for n, _ in m.named_parameters(remove_duplicate=flag)]
            + [n for n, _ in m.named_buffers(remove_duplicate=flag)]
            for flag in (True, False)
        ]

    check(fn)
