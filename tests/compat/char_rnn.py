"""The tutorials' character-level RNN, with the compat imports, for the tests: the
one definition in ``benchmarks/bench_small.py``, shared with the benchmarks."""

import numpy as np

import jaxblitz.compat as torch
from benchmarks.bench_small import N_CATEGORIES, N_HIDDEN, N_LETTERS, NAME, rnn_class

RNN = rnn_class(torch)


def make_rnn() -> "torch.nn.Module":
    """The tutorial's RNN (57 letters, 128 hidden, 18 categories), seeded."""
    torch.manual_seed(0)
    return RNN(N_LETTERS, N_HIDDEN, N_CATEGORIES)


def names(count: int, seed: int = 0) -> list:
    """``count`` one-hot names of 6 letters, ``(line, category)`` each."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        line = np.zeros((NAME, 1, N_LETTERS), np.float32)
        line[np.arange(NAME), 0, rng.integers(0, N_LETTERS, NAME)] = 1
        out.append((torch.tensor(line), torch.tensor([int(rng.integers(18))])))
    return out


def name_loss(rnn, line, category):
    """The tutorial's loss for one name: the RNN over its letters, then NLLLoss."""
    hidden = rnn.init_hidden()
    for i in range(line.size()[0]):
        output, hidden = rnn(line[i], hidden)
    return torch.nn.NLLLoss()(output, category)
