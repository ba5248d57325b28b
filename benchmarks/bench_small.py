"""Small-op programs: PyTorch eager, compat eager and compat lazy side by side.

Run: python benchmarks/bench_small.py [--repeats N]

Two programs whose tensors are tiny, so the time is all per-op overhead:
- a scalar write in a loop (``ids[i] = j`` into a 4100-long int64 tensor, a
  corpus reader's loop), microseconds per write;
- a step of the tutorials' character-level RNN classifier: a cell of two
  ``nn.Linear`` layers over ``cat(input, hidden)``, one character a step, a
  name of 6 characters, then ``NLLLoss``, ``backward`` and the tutorial's hand
  SGD update (``p.data.add_(p.grad.data, alpha=-lr)``), milliseconds per name.
and one loop whose tensors are small but that reads a value only now and then:
- the tutorials' polynomial fit (``nn.Linear(3, 1)`` on 2000 points, RMSprop, a
  loss printed every 100 steps), milliseconds per step; its first run, compiles
  included, is printed too (lazily, a loop that reads nothing each step is cut
  at its steps' ends: programs of a few steps, compiled once).
Candidates take turns (round-robin), so a noisy stretch slows all alike; the
ratios against PyTorch are printed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

N_LETTERS, N_HIDDEN, N_CATEGORIES, NAME = 57, 128, 18, 6


def scalar_writes(torch, count: int = 3000):
    ids = torch.zeros(4100, dtype=torch.long)
    values = [int(v) for v in np.random.default_rng(0).integers(0, 5000, count)]

    def run():
        for i, j in enumerate(values):
            ids[i] = j
        return count

    return run


def rnn_class(torch):
    """The tutorials' character-level RNN cell, written once for torch and
    compat alike (and for the tests: ``tests/compat/char_rnn.py``)."""
    nn = torch.nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(input_size + hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = self.i2h(combined)
            output = self.softmax(self.i2o(combined))
            return output, hidden

        def init_hidden(self):
            return torch.zeros(1, self.hidden_size)

    return RNN


def rnn_steps(torch, count: int = 50):
    nn = torch.nn
    RNN = rnn_class(torch)  # noqa: N806 -- a class
    torch.manual_seed(0)
    rnn = RNN(N_LETTERS, N_HIDDEN, N_CATEGORIES)
    criterion = nn.NLLLoss()
    rng = np.random.default_rng(0)
    names = []
    for _ in range(16):
        line = np.zeros((NAME, 1, N_LETTERS), np.float32)
        line[np.arange(NAME), 0, rng.integers(0, N_LETTERS, NAME)] = 1
        names.append((torch.tensor(line), torch.tensor([int(rng.integers(18))])))

    def train(category, line):
        hidden = rnn.init_hidden()
        rnn.zero_grad()
        for i in range(line.size()[0]):
            output, hidden = rnn(line[i], hidden)
        loss = criterion(output, category)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-0.005)
        return loss.item()

    def run():
        for k in range(count):
            line, category = names[k % 16]
            train(category, line)
        return count

    return run


def polynomial_steps(torch, count: int = 200):
    x = torch.linspace(-3.0, 3.0, 2000)
    y = torch.sin(x)
    xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)

    def run():
        for t in range(count):
            loss = loss_fn(model(xx), y)
            if t % 100 == 99:
                loss.item()  # the tutorial prints it
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return count

    return run


def in_mode(run, lazy_on: bool):
    from jaxblitz.compat import lazy

    def wrapped():
        was = lazy.is_lazy()
        lazy.set_lazy(lazy_on)
        try:
            return run()
        finally:
            lazy.set_lazy(was)

    return wrapped


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    import jaxblitz.compat as compat

    libs = {"compat eager": (compat, False), "compat lazy": (compat, True)}
    try:
        import torch

        torch.set_num_threads(1)  # tiny tensors: PyTorch's fastest setting
        libs["torch eager"] = (torch, None)
    except ImportError:
        print("PyTorch is not installed: no ratio")
    for title, make, unit, scale in (
        ("scalar write (ids[i] = j)", scalar_writes, "us/write", 1e6),
        ("char-RNN step (6 characters)", rnn_steps, "ms/name", 1e3),
        ("polynomial fit step (RMSprop, a read every 100)", polynomial_steps,
         "ms/step", 1e3),
    ):  # fmt: skip
        runs, first = {}, {}
        for name, (lib, lazy_on) in libs.items():
            run = make(lib)
            runs[name] = run if lazy_on is None else in_mode(run, lazy_on)
            start = time.perf_counter()
            runs[name]()  # warm: compiles, caches
            first[name] = time.perf_counter() - start
        times = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, run in runs.items():
                start = time.perf_counter()
                count = run()
                times[name].append((time.perf_counter() - start) / count * scale)
        print(f"{title}:")
        for name, t in times.items():
            ratio = ""
            if "torch eager" in times:
                ratio = f"  {min(t) / min(times['torch eager']):.2f}x PyTorch's time"
            print(
                f"  {name:13s}: min {min(t):.3f}  median {statistics.median(t):.3f} "
                f"{unit}{ratio}  (first run {first[name]:.2f} s)"
            )


if __name__ == "__main__":
    main()
