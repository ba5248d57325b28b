"""``torch.nn.modules.rnn``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat.nn.rnn import (
    GRU,
    LSTM,
    RNN,
    RNNBase,
)
from jaxblitz.compat.nn.rnn_cell import (
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellBase,
)

__all__ = [
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
]
