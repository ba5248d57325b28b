"""pytorch/examples time_sequence_prediction: sine waves generated as in its
generate_sine_wave.py (NumPy, seeded), a Sequence of two nn.LSTMCells and a
Linear stepped over the time axis with input.split(1, dim=1), the model made
double with seq.double(), optim.LBFGS driven by a closure that prints the loss,
and the future prediction loop fed its own outputs under torch.no_grad()."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

HIDDEN = 12

# generate_sine_wave.py, smaller: N waves of length L, each shifted at random
np.random.seed(2)  # noqa: NPY002 -- upstream seeds NumPy's legacy generator
T, L, N = 20, 30, 8
x = np.empty((N, L), "int64")
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)  # noqa: NPY002
data = np.sin(x / 1.0 / T).astype("float64")


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # noqa: B007 -- upstream's loop
            # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


np.random.seed(0)  # noqa: NPY002
torch.manual_seed(0)
input = torch.from_numpy(data[3:, :-1])
target = torch.from_numpy(data[3:, 1:])
test_input = torch.from_numpy(data[:3, :-1])
test_target = torch.from_numpy(data[:3, 1:])
print("input", input.dtype, tuple(input.shape), "test", tuple(test_input.shape))

seq = Sequence()
seq.double()
# the random initialisation replaced by a fixed formula (the streams differ)
with torch.no_grad():
    for i, p in enumerate(seq.parameters()):
        n = p.numel()
        p.copy_(
            torch.arange(n, dtype=torch.float64)
            .mul(0.7 + 0.3 * i)
            .sin()
            .mul(0.25)
            .view(p.shape)
        )
print("params", [p.dtype for p in seq.parameters()][0], len(list(seq.parameters())))
criterion = nn.MSELoss()
# use LBFGS as optimizer since we can load the whole data to train
optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
calls = []
for i in range(2):
    print("STEP: ", i)

    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        print(f"closure loss: {loss.item():.6f}")
        calls.append(loss.item())
        loss.backward()
        return loss

    first = len(calls)
    returned = optimizer.step(closure)
    # LBFGS.step returns the closure's first loss of the step
    print(
        "step returned its first loss",
        returned.item() == calls[first],
        type(returned).__name__,
        returned.requires_grad,
    )
    # begin to predict, no need to track gradient here
    with torch.no_grad():
        future = 10
        pred = seq(test_input, future=future)
        loss = criterion(pred[:, :-future], test_target)
        print(f"test loss: {loss.item():.6f}")
        y = pred.detach().numpy()
    print(
        "prediction",
        y.shape,
        y.dtype,
        "future head",
        [round(float(v), 4) for v in y[0, -future : -future + 3]],
    )

state = optimizer.state[optimizer._params[0]]
print(
    "lbfgs state",
    sorted(k for k in state if not k.startswith("_"))[:6],
    "n_iter",
    state["n_iter"],
    "func_evals",
    state["func_evals"],
)
print("closure calls", len(calls), "loss went down", calls[-1] < calls[0])
