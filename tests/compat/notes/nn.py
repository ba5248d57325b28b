"""The Blitz's "Neural Networks" and the nn docs: the Net's forward and backward
with the same weights on both sides (copied in through numpy), losses, manual and
``optim.SGD`` updates, ``zero_grad``, module printing and hooks."""

from __future__ import annotations

import warnings

import numpy as np

from tests.compat.notes.record import Notes


def _net_class(torch):
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()  # noqa: UP008 -- as the Blitz writes it
            # 1 input image channel, 6 output channels, 5x5 square convolution
            # kernel
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            # an affine operation: y = Wx + b
            self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, input):
            # Convolution layer C1: 1 input image channel, 6 output channels,
            # 5x5 square convolution, it uses RELU activation function, and
            # outputs a Tensor with size (N, 6, 28, 28), N the size of the batch
            c1 = F.relu(self.conv1(input))
            # Subsampling layer S2: 2x2 grid, purely functional,
            # this layer has no parameter, and outputs a (N, 6, 14, 14) Tensor
            s2 = F.max_pool2d(c1, (2, 2))
            # Convolution layer C3: 6 input channels, 16 output channels,
            # 5x5 square convolution, it uses RELU activation function, and
            # outputs a (N, 16, 10, 10) Tensor
            c3 = F.relu(self.conv2(s2))
            # Subsampling layer S4: 2x2 grid, purely functional,
            # this layer does not have any parameter, and outputs a (N, 16, 5, 5) Tensor
            s4 = F.max_pool2d(c3, 2)
            # Flatten operation: purely functional, outputs a (N, 400) Tensor
            s4 = torch.flatten(s4, 1)
            # Fully connected layer F5: (N, 400) Tensor input,
            # and outputs a (N, 120) Tensor, it uses RELU activation function
            f5 = F.relu(self.fc1(s4))
            # Fully connected layer F6: (N, 120) Tensor input,
            # and outputs a (N, 84) Tensor, it uses RELU activation function
            f6 = F.relu(self.fc2(f5))
            # Gaussian layer OUTPUT: (N, 84) Tensor input, and
            # outputs a (N, 10) Tensor
            output = self.fc3(f6)
            return output

    return Net


def _fixed(torch, net, seed: int) -> None:
    """The same weights for torch and compat: numpy draws them, ``copy_`` loads them."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(0.1 * rng.standard_normal(p.shape, np.float32)))


def run(torch) -> dict[str, object]:
    notes = Notes()
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    rng = np.random.default_rng(1)
    input_np = rng.standard_normal((1, 1, 32, 32), np.float32)
    target_np = rng.standard_normal(10, np.float32)
    v_np = rng.standard_normal((1, 10), np.float32)

    with notes.section("blitz_net"):
        net = _net_class(torch)()
        notes.record("print", lambda: str(net))
        params = list(net.parameters())
        notes.record("len_params", lambda: len(params))
        notes.record("conv1_weight_size", lambda: params[0].size())
        notes.record("sizes", lambda: [p.size() for p in params])
        notes.record("names", lambda: [n for n, _ in net.named_parameters()])
        _fixed(torch, net, 0)

        input = torch.from_numpy(input_np)
        out = net(input)
        notes.record("out", lambda: out)
        net.zero_grad()
        out.backward(torch.from_numpy(v_np))
        notes.record("conv1_bias_grad_v", lambda: net.conv1.bias.grad)

        output = net(input)
        target = torch.from_numpy(target_np)  # a dummy target, for example
        target = target.view(1, -1)  # make it the same shape as output
        criterion = nn.MSELoss()
        loss = criterion(output, target)
        notes.record("loss", lambda: loss)
        # print(loss.grad_fn) shows the node's class
        notes.record("loss_grad_fn", lambda: type(loss.grad_fn).__name__)  # MSELoss
        linear = loss.grad_fn.next_functions[0][0]  # Linear
        notes.record("next", lambda: type(linear).__name__)
        notes.record(
            "next_next", lambda: type(linear.next_functions[0][0]).__name__
        )  # ReLU

        net.zero_grad()  # zeroes the gradient buffers of all parameters
        notes.record("conv1_bias_grad_before", lambda: net.conv1.bias.grad)
        loss.backward()
        notes.record("conv1_bias_grad_after", lambda: net.conv1.bias.grad)
        notes.record("fc3_weight_grad", lambda: net.fc3.weight.grad)

        learning_rate = 0.01
        for f in net.parameters():
            f.data.sub_(f.grad.data * learning_rate)
        notes.record("manual_sgd_fc3_bias", lambda: net.fc3.bias)
        notes.record("manual_sgd_loss", lambda: criterion(net(input), target))

        # create your optimizer
        optimizer = optim.SGD(net.parameters(), lr=0.01)
        # in your training loop:
        optimizer.zero_grad()  # zero the gradient buffers
        output = net(input)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()  # Does the update
        notes.record("optim_sgd_loss", lambda: loss)
        notes.record("optim_sgd_conv1_bias", lambda: net.conv1.bias)
        notes.record("after_step_loss", lambda: criterion(net(input), target))

    with notes.section("momentum"):
        net = _net_class(torch)()
        _fixed(torch, net, 2)
        input = torch.from_numpy(np.concatenate([input_np, -input_np]))
        labels = torch.tensor([3, 7])
        criterion = nn.CrossEntropyLoss()
        optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(4):
            optimizer.zero_grad()
            loss = criterion(net(input), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        notes.record("losses", lambda: losses)
        notes.record("fc3_bias", lambda: net.fc3.bias)
        notes.record("grad_before_zero_grad", lambda: net.fc3.bias.grad is not None)
        optimizer.zero_grad()
        notes.record("after_zero_grad", lambda: net.fc3.bias.grad)
        criterion(net(input), labels).backward()
        optimizer.zero_grad(set_to_none=False)
        notes.record("after_zero_grad_false", lambda: net.fc3.bias.grad)
        state = optimizer.state_dict()
        notes.record("state_keys", lambda: sorted(state))
        notes.record(
            "param_groups_lr", lambda: [g["lr"] for g in state["param_groups"]]
        )

    with notes.section("losses"):
        logits_np = np.array([[1.0, -2.0, 0.5], [0.1, 0.2, 3.0]], np.float32)
        probs_np = np.array([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]], np.float32)

        def loss_and_grad(key, loss_of):
            """Record ``loss_of(logits)`` and the logits' grad, or the error."""

            def thunk():
                x = torch.tensor(logits_np, requires_grad=True)
                loss = loss_of(x)
                loss.sum().backward()
                return loss, x.grad

            notes.record(key, thunk)

        labels = torch.tensor([2, 0])
        probs = torch.tensor(probs_np)
        CE = nn.CrossEntropyLoss
        loss_and_grad("cross_entropy", lambda x: CE()(x, labels))
        loss_and_grad("cross_entropy_probs", lambda x: CE()(x, probs))
        loss_and_grad("cross_entropy_sum", lambda x: CE(reduction="sum")(x, labels))
        loss_and_grad("cross_entropy_none", lambda x: CE(reduction="none")(x, labels))
        loss_and_grad(
            "cross_entropy_smoothing", lambda x: CE(label_smoothing=0.1)(x, labels)
        )
        loss_and_grad(
            "cross_entropy_weight",
            lambda x: CE(weight=torch.tensor([1.0, 2.0, 3.0]))(x, labels),
        )
        loss_and_grad("cross_entropy_float_labels", lambda x: CE()(x, labels.float()))
        loss_and_grad(
            "cross_entropy_bad_class", lambda x: CE()(x, torch.tensor([3, 0]))
        )
        loss_and_grad(
            "nll_log_softmax", lambda x: F.nll_loss(F.log_softmax(x, dim=1), labels)
        )
        loss_and_grad("mse", lambda x: nn.MSELoss()(x, probs))
        loss_and_grad("l1", lambda x: nn.L1Loss()(x, probs))
        loss_and_grad("smooth_l1", lambda x: nn.SmoothL1Loss()(x, probs * 4))
        loss_and_grad("huber", lambda x: nn.HuberLoss(delta=0.5)(x, probs * 4))
        loss_and_grad("bce_with_logits", lambda x: nn.BCEWithLogitsLoss()(x, probs))
        loss_and_grad("bce", lambda x: nn.BCELoss()(torch.sigmoid(x), probs))
        with warnings.catch_warnings():  # "Using a target size ... different"
            warnings.simplefilter("ignore")
            notes.record(
                "mse_broadcast_shape",
                lambda: (
                    nn.MSELoss(reduction="none")(torch.ones(3, 1), torch.zeros(3)).shape
                ),
            )

    with notes.section("modules"):
        torch.manual_seed(0)
        seq = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Linear(8 * 2 * 2, 4),
            nn.Dropout(0.5),
        )
        notes.record("print", lambda: str(seq))
        notes.record("state_dict_keys", lambda: list(seq.state_dict()))
        notes.record("training", lambda: seq.training)
        seq.eval()
        notes.record("eval_children", lambda: [m.training for m in seq])
        notes.record("out_shape", lambda: seq(torch.ones(2, 3, 4, 4)).shape)
        notes.record("wrong_channels", lambda: seq(torch.ones(2, 4, 4, 4)))
        notes.record("linear_mismatch", lambda: nn.Linear(3, 2)(torch.ones(2, 4)))
        shapes = []
        handle = seq[3].register_forward_hook(
            lambda module, args, output: shapes.append((args[0].shape, output.shape))
        )
        seq(torch.ones(2, 3, 4, 4))
        notes.record("hook_shapes", lambda: shapes)
        handle.remove()
        seq(torch.ones(2, 3, 4, 4))
        notes.record("hook_removed", lambda: len(shapes))

    return notes
