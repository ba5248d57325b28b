"""compat.nn's recurrent layers (RNN, LSTM, GRU and their cells) and
nn.utils.rnn's padding and packing, checked against real PyTorch: outputs, final
states and every gradient, state dicts both ways, PyTorch's own error messages."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")
rnn_utils = compat.nn.utils.rnn
# torch's own note that its oneDNN kernels skip proj_size (its fallback is used)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")


def _values(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pair(shape, seed):
    """The same values as a compat and a torch tensor, both requiring grad."""
    a = _values(shape, seed)
    return compat.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _twins(name, *args, **kwargs):
    """A torch module and a compat one holding the torch one's weights."""
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(compat.nn, name)(*args, **kwargs)
    ours.load_state_dict(
        {k: compat.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    return ours, theirs


def _flat(result):
    """A module's results as a flat list of tensors (output, h_n, c_n ...)."""
    if hasattr(result, "batch_sizes"):  # a PackedSequence: its data
        return [result.data]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [result]


def _close(ours, theirs, atol=2e-5):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-4, atol=atol
    )


def _check_against_torch(ours, theirs, inputs, leaves=None):
    """Same results, and the same gradients of a random weighting of all of them
    with respect to every input (or ``leaves``) and parameter."""
    mine, ref = _flat(ours(*inputs[0])), _flat(theirs(*inputs[1]))
    assert len(mine) == len(ref)
    loss, ref_loss = 0, 0
    for i, (a, b) in enumerate(zip(mine, ref, strict=True)):
        _close(a, b)
        w = _values(tuple(b.shape), 100 + i)
        loss = loss + (a * compat.tensor(w)).sum()
        ref_loss = ref_loss + (b * torch.tensor(w)).sum()
    loss.backward()
    ref_loss.backward()
    leaves = leaves or (_leaves(inputs[0]), _leaves(inputs[1]))
    for a, b in zip(*leaves, strict=True):
        _close(a.grad, b.grad, atol=5e-5)
    for (name, p), (ref_name, q) in zip(
        ours.named_parameters(), theirs.named_parameters(), strict=True
    ):
        assert name == ref_name
        _close(p.grad, q.grad, atol=5e-5)


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, (tuple, list)):
            out += _leaves(a)
        elif hasattr(a, "batch_sizes"):
            continue
        elif a is not None:
            out.append(a)
    return out


# -- RNN, LSTM, GRU ---------------------------------------------------------------

GRID = {
    "rnn_tanh": ("RNN", dict(), False),
    "rnn_relu_2_layers_bidirectional_h0": (
        "RNN",
        dict(nonlinearity="relu", num_layers=2, bidirectional=True),
        True,
    ),
    "lstm_2_layers_bidirectional_proj_h0": (
        "LSTM",
        dict(num_layers=2, bidirectional=True, proj_size=3),
        True,
    ),
    "lstm_no_bias_batch_first_h0": ("LSTM", dict(bias=False, batch_first=True), True),
    "gru_2_layers_bidirectional_batch_first_h0": (
        "GRU",
        dict(num_layers=2, bidirectional=True, batch_first=True),
        True,
    ),
    "gru_no_bias": ("GRU", dict(bias=False), False),
}


def _states(name, kwargs, batch, seed, unbatched=False):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    lead = (layers,) if unbatched else (layers, batch)
    h = _pair((*lead, kwargs.get("proj_size") or 5), seed)
    if name != "LSTM":
        return h
    c = _pair((*lead, 5), seed + 1)
    return (h[0], c[0]), (h[1], c[1])


@pytest.mark.parametrize("case", GRID.values(), ids=GRID.keys())
def test_recurrent_layer_matches_torch_in_outputs_states_and_gradients(case):
    name, kwargs, with_h0 = case
    ours, theirs = _twins(name, 4, 5, **kwargs)
    shape = (3, 6, 4) if kwargs.get("batch_first") else (6, 3, 4)
    x = _pair(shape, 0)
    if with_h0:
        h = _states(name, kwargs, 3, 1)
        inputs = ((x[0], h[0]), (x[1], h[1]))
    else:
        inputs = ((x[0],), (x[1],))
    _check_against_torch(ours, theirs, inputs)


UNBATCHED = {
    "rnn": ("RNN", dict(bias=False)),
    "lstm_bidirectional": ("LSTM", dict(bidirectional=True)),
    "gru_batch_first": ("GRU", dict(batch_first=True)),
}


@pytest.mark.parametrize("case", UNBATCHED.values(), ids=UNBATCHED.keys())
def test_recurrent_layer_takes_an_unbatched_sequence_as_torch(case):
    name, kwargs = case
    ours, theirs = _twins(name, 4, 5, **kwargs)
    x = _pair((6, 4), 0)
    h = _states(name, kwargs, None, 1, unbatched=True)
    _check_against_torch(ours, theirs, ((x[0], h[0]), (x[1], h[1])))
    out, _ = ours(x[0])  # without h0 too
    assert tuple(out.shape) == tuple(theirs(x[1])[0].shape)


def test_dropout_between_layers_in_training_as_torch_and_none_in_eval():
    # p=1 zeroes the first layer's output: the second layer sees zeros, in both
    ours, theirs = _twins("LSTM", 4, 5, num_layers=2, dropout=1.0)
    x = _pair((6, 3, 4), 0)
    _check_against_torch(ours, theirs, ((x[0],), (x[1],)))
    ours.eval()
    theirs.eval()
    _close(ours(x[0])[0], theirs(x[1])[0])


def test_dropout_between_layers_draws_afresh_each_training_forward():
    compat.manual_seed(0)
    net = compat.nn.GRU(4, 8, num_layers=2, dropout=0.5)
    x = compat.tensor(_values((5, 3, 4), 0))
    a, b = net(x)[0], net(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    net.eval()
    np.testing.assert_array_equal(
        net(x)[0].detach().numpy(), net(x)[0].detach().numpy()
    )


def _packed_inputs(lengths, enforce_sorted, seed=0):
    steps = max(lengths)
    padded = _values((steps, len(lengths), 4), seed)
    for b, n in enumerate(lengths):
        padded[n:, b] = 0
    x = compat.tensor(padded, requires_grad=True)
    tx = torch.tensor(padded, requires_grad=True)
    ours = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(
        tx, lengths, enforce_sorted=enforce_sorted
    )
    return (x, ours), (tx, theirs)


PACKED = {
    "lstm_bidirectional_2_layers_unsorted_h0": (
        "LSTM",
        dict(num_layers=2, bidirectional=True),
        [3, 5, 2, 5],
        False,
        True,
    ),
    "gru_sorted": ("GRU", dict(), [5, 3, 1], True, False),
    "rnn_relu_bidirectional_unsorted_h0": (
        "RNN",
        dict(nonlinearity="relu", bidirectional=True),
        [2, 4, 3],
        False,
        True,
    ),
}


@pytest.mark.parametrize("case", PACKED.values(), ids=PACKED.keys())
def test_recurrent_layer_takes_and_returns_a_packed_sequence_as_torch(case):
    name, kwargs, lengths, enforce_sorted, with_h0 = case
    ours, theirs = _twins(name, 4, 5, **kwargs)
    (x, packed), (tx, tpacked) = _packed_inputs(lengths, enforce_sorted)
    args, targs = [packed], [tpacked]
    if with_h0:
        h = _states(name, kwargs, len(lengths), 1)
        args.append(h[0])
        targs.append(h[1])

    leaves = ([x, *_leaves(args[1:])], [tx, *_leaves(targs[1:])])
    _check_against_torch(ours, theirs, (args, targs), leaves)
    output, _ = ours(packed)
    assert isinstance(output, rnn_utils.PackedSequence)
    toutput, _ = theirs(tpacked)
    assert output.batch_sizes.tolist() == toutput.batch_sizes.tolist()
    padded, out_lengths = rnn_utils.pad_packed_sequence(output, batch_first=True)
    tpadded, tlengths = torch.nn.utils.rnn.pad_packed_sequence(
        toutput, batch_first=True
    )
    _close(padded, tpadded)
    assert out_lengths.tolist() == tlengths.tolist()


def test_parameters_are_named_shaped_and_initialised_as_torchs():
    kwargs = dict(num_layers=2, bidirectional=True, proj_size=3)
    ours = compat.nn.LSTM(4, 5, **kwargs)
    theirs = torch.nn.LSTM(4, 5, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    bound = 1 / np.sqrt(5)
    values = np.concatenate([p.detach().numpy().ravel() for p in ours.parameters()])
    assert values.min() >= -bound and values.max() < bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound
    assert len(ours.all_weights) == 4 and len(ours.all_weights[0]) == 5
    assert repr(ours) == repr(theirs)
    for name, kw in (("GRU", dict(bias=False, batch_first=True)), ("RNN", {})):
        assert repr(getattr(compat.nn, name)(4, 5, **kw)) == repr(
            getattr(torch.nn, name)(4, 5, **kw)
        )


def test_a_compat_state_dict_loads_into_torch_with_the_same_outputs():
    compat.manual_seed(3)
    ours = compat.nn.GRU(4, 5, num_layers=2, bidirectional=True)
    theirs = torch.nn.GRU(4, 5, num_layers=2, bidirectional=True)
    theirs.load_state_dict(
        {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}
    )
    x = _values((6, 3, 4), 0)
    out, h = ours(compat.tensor(x))
    tout, th = theirs(torch.tensor(x))
    _close(out, tout)
    _close(h, th)


def test_a_layer_runs_as_one_recorded_node_however_long_the_sequence():
    def graph(steps):
        net = compat.nn.LSTM(4, 5, num_layers=2)
        out, (h, c) = net(compat.tensor(_values((steps, 2, 4), 0)))
        loss = out.sum() + h.sum() + c.sum()
        names, stack, seen = [], [loss.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            names.append(node.name())
            stack += [n for n, _ in node.next_functions]
        return sorted(names)

    short, long = graph(3), graph(40)
    assert short == long
    assert short.count("LstmBackward0") == 1


# -- cells --------------------------------------------------------------------------

CELLS = {
    "rnn_cell": ("RNNCell", dict(), "hx"),
    "rnn_cell_relu_no_bias": ("RNNCell", dict(nonlinearity="relu", bias=False), "hx"),
    "lstm_cell": ("LSTMCell", dict(), "both"),
    "lstm_cell_no_state": ("LSTMCell", dict(bias=False), None),
    "gru_cell": ("GRUCell", dict(), "hx"),
    "gru_cell_no_state": ("GRUCell", dict(), None),
}


@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
@pytest.mark.parametrize("case", CELLS.values(), ids=CELLS.keys())
def test_recurrent_cell_matches_torch_in_outputs_and_gradients(case, unbatched):
    name, kwargs, state = case
    ours, theirs = _twins(name, 4, 5, **kwargs)
    lead = () if unbatched else (3,)
    x = _pair((*lead, 4), 0)
    inputs = ((x[0],), (x[1],))
    if state == "hx":
        h = _pair((*lead, 5), 1)
        inputs = ((x[0], h[0]), (x[1], h[1]))
    elif state == "both":
        h, c = _pair((*lead, 5), 1), _pair((*lead, 5), 2)
        inputs = ((x[0], (h[0], c[0])), (x[1], (h[1], c[1])))
    _check_against_torch(ours, theirs, inputs)


def test_cells_are_named_and_shaped_as_torchs():
    for name, kw in (("LSTMCell", {}), ("GRUCell", dict(bias=False)), ("RNNCell", {})):
        ours = getattr(compat.nn, name)(4, 5, **kw)
        theirs = getattr(torch.nn, name)(4, 5, **kw)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
            (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
        ]
        assert repr(ours) == repr(theirs)
    cell = compat.nn.RNNCell(4, 5, bias=False, nonlinearity="relu")
    assert repr(cell) == repr(torch.nn.RNNCell(4, 5, bias=False, nonlinearity="relu"))


# -- errors -------------------------------------------------------------------------


def _t(lib, *shape, dtype="float32"):
    return lib.zeros(*shape, dtype=getattr(lib, dtype))


BAD_CALLS = {
    "lstm_4d_input": lambda nn, lib: nn.LSTM(3, 4)(_t(lib, 2, 2, 2, 3)),
    "rnn_1d_input": lambda nn, lib: nn.RNN(3, 4)(_t(lib, 3)),
    "input_size": lambda nn, lib: nn.LSTM(3, 4)(_t(lib, 5, 2, 5)),
    "lstm_hidden_0": lambda nn, lib: nn.LSTM(3, 4, 2)(
        _t(lib, 5, 2, 3), (_t(lib, 1, 2, 4), _t(lib, 2, 2, 4))
    ),
    "lstm_hidden_1": lambda nn, lib: nn.LSTM(3, 4, 2)(
        _t(lib, 5, 2, 3), (_t(lib, 2, 2, 4), _t(lib, 1, 2, 4))
    ),
    "lstm_2d_states": lambda nn, lib: nn.LSTM(3, 4)(
        _t(lib, 5, 2, 3), (_t(lib, 2, 4), _t(lib, 2, 4))
    ),
    "lstm_unbatched_3d_states": lambda nn, lib: nn.LSTM(3, 4)(
        _t(lib, 5, 3), (_t(lib, 1, 1, 4), _t(lib, 1, 1, 4))
    ),
    "gru_hidden": lambda nn, lib: nn.GRU(3, 4)(_t(lib, 5, 2, 3), _t(lib, 1, 3, 4)),
    "gru_2d_hidden": lambda nn, lib: nn.GRU(3, 4)(_t(lib, 5, 2, 3), _t(lib, 3, 4)),
    "gru_unbatched_3d_hidden": lambda nn, lib: nn.GRU(3, 4)(
        _t(lib, 5, 3), _t(lib, 1, 3, 4)
    ),
    "input_dtype": lambda nn, lib: nn.GRU(3, 4)(_t(lib, 5, 2, 3, dtype="float64")),
    "hidden_dtype": lambda nn, lib: nn.GRU(3, 4)(
        _t(lib, 5, 2, 3), _t(lib, 1, 2, 4, dtype="float64")
    ),
    "nonlinearity": lambda nn, lib: nn.RNN(3, 4, nonlinearity="foo"),
    "proj_size_gru": lambda nn, lib: nn.GRU(3, 4, proj_size=2),
    "proj_size_too_big": lambda nn, lib: nn.LSTM(3, 4, proj_size=4),
    "proj_size_negative": lambda nn, lib: nn.LSTM(3, 4, proj_size=-1),
    "dropout": lambda nn, lib: nn.LSTM(3, 4, dropout=2),
    "dropout_bool": lambda nn, lib: nn.LSTM(3, 4, dropout=True),
    "hidden_size_zero": lambda nn, lib: nn.LSTM(3, 0),
    "num_layers_zero": lambda nn, lib: nn.LSTM(3, 4, num_layers=0),
    "input_size_float": lambda nn, lib: nn.LSTM(3.0, 4),
    "cell_input_size": lambda nn, lib: nn.LSTMCell(3, 4)(_t(lib, 2, 5)),
    "cell_batch": lambda nn, lib: nn.LSTMCell(3, 4)(
        _t(lib, 2, 3), (_t(lib, 3, 4), _t(lib, 3, 4))
    ),
    "cell_hidden_0": lambda nn, lib: nn.LSTMCell(3, 4)(
        _t(lib, 2, 3), (_t(lib, 2, 5), _t(lib, 2, 4))
    ),
    "cell_hidden_1": lambda nn, lib: nn.LSTMCell(3, 4)(
        _t(lib, 2, 3), (_t(lib, 2, 4), _t(lib, 2, 5))
    ),
    "cell_3d_input": lambda nn, lib: nn.GRUCell(3, 4)(_t(lib, 2, 2, 3)),
    "cell_unbatched_2d_hidden": lambda nn, lib: nn.GRUCell(3, 4)(
        _t(lib, 3), _t(lib, 2, 4)
    ),
    "rnn_cell_hidden": lambda nn, lib: nn.RNNCell(3, 4)(_t(lib, 2, 3), _t(lib, 2, 5)),
    # a cell is two linears: an input or hidden state unlike the weights is refused
    "rnn_cell_input_dtype": lambda nn, lib: nn.RNNCell(3, 4)(
        _t(lib, 2, 3, dtype="float64")
    ),
    "lstm_cell_input_dtype": lambda nn, lib: nn.LSTMCell(3, 4)(
        _t(lib, 3, dtype="bfloat16")
    ),
    "gru_cell_weight_dtype": lambda nn, lib: nn.GRUCell(3, 4).double()(_t(lib, 2, 3)),
    "gru_cell_no_bias_dtype": lambda nn, lib: nn.GRUCell(3, 4, bias=False)(
        _t(lib, 2, 3, dtype="float16")
    ),
    "rnn_cell_hidden_dtype": lambda nn, lib: nn.RNNCell(3, 4)(
        _t(lib, 2, 3), _t(lib, 2, 4, dtype="float64")
    ),
    "lstm_cell_hidden_dtype": lambda nn, lib: nn.LSTMCell(3, 4)(
        _t(lib, 2, 3), (_t(lib, 2, 4, dtype="float64"), _t(lib, 2, 4))
    ),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_input_is_refused_in_torchs_words(call):
    with pytest.raises(Exception) as expected:
        call(torch.nn, torch)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        call(compat.nn, compat)


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="num_layers greater than 1, but got dropout"):
        compat.nn.GRU(3, 4, dropout=0.5)


# -- nn.utils.rnn -------------------------------------------------------------------


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch_with_gradients(batch_first, padding_side):
    seqs = [_pair((n, 2), n) for n in (3, 5, 1)]
    kw = dict(batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    out = rnn_utils.pad_sequence([s[0] for s in seqs], **kw)
    expected = torch.nn.utils.rnn.pad_sequence([s[1] for s in seqs], **kw)
    _close(out, expected)
    w = _values(tuple(expected.shape), 9)
    (out * compat.tensor(w)).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    for ours, theirs in seqs:
        _close(ours.grad, theirs.grad)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip_as_torch(enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    (x, ours), (tx, theirs) = _packed_inputs(lengths, enforce_sorted)
    _close(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert str(ours.batch_sizes.dtype) == "torch.int64"
    for a, b in ((ours.sorted_indices, theirs.sorted_indices),) * 2 + (
        (ours.unsorted_indices, theirs.unsorted_indices),
    ):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    padded, out_lengths = rnn_utils.pad_packed_sequence(ours, total_length=6)
    tpadded, tlengths = torch.nn.utils.rnn.pad_packed_sequence(theirs, total_length=6)
    _close(padded, tpadded)
    assert out_lengths.tolist() == tlengths.tolist()
    w = _values(tuple(tpadded.shape), 9)
    (padded * compat.tensor(w)).sum().backward()
    (tpadded * torch.tensor(w)).sum().backward()
    _close(x.grad, tx.grad)
    seqs = rnn_utils.unpack_sequence(ours)
    assert [tuple(s.shape) for s in seqs] == [(n, 4) for n in lengths]


def test_pack_sequence_matches_torch():
    seqs = [_values((n, 2), n) for n in (2, 4, 3)]
    ours = rnn_utils.pack_sequence([compat.tensor(s) for s in seqs], False)
    theirs = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], False)
    _close(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert ours.unsorted_indices.tolist() == theirs.unsorted_indices.tolist()
    data, batch_sizes, *_ = ours  # a namedtuple, as torch's
    assert data is ours.data and batch_sizes is ours.batch_sizes


BAD_PACKING = {
    "unsorted": lambda u, lib: u.pack_padded_sequence(_t(lib, 4, 3, 2), [1, 3, 2]),
    "zero_length": lambda u, lib: u.pack_padded_sequence(_t(lib, 4, 3, 2), [3, 2, 0]),
    "lengths_count": lambda u, lib: u.pack_padded_sequence(_t(lib, 4, 3, 2), [3, 2]),
    "total_length": lambda u, lib: u.pad_packed_sequence(
        u.pack_padded_sequence(_t(lib, 4, 3, 2), [3, 2, 1]), total_length=2
    ),
    "padding_side": lambda u, lib: u.pad_sequence(
        [_t(lib, 2, 3)], padding_side="middle"
    ),
    "empty": lambda u, lib: u.pad_sequence([]),
    "not_iterable": lambda u, lib: u.pad_sequence(5),
    "trailing_sizes": lambda u, lib: u.pad_sequence([_t(lib, 2, 3), _t(lib, 3, 2)]),
}


@pytest.mark.parametrize("call", BAD_PACKING.values(), ids=BAD_PACKING.keys())
def test_bad_packing_is_refused_in_torchs_words(call):
    with pytest.raises(Exception) as expected:
        call(torch.nn.utils.rnn, torch)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        call(rnn_utils, compat)


def test_lstm_cell_with_a_float64_cell_state_promotes_as_torch():
    # torch: the cell state only meets the gates elementwise, so it promotes
    want_cell = torch.nn.LSTMCell(3, 4)
    cell = compat.nn.LSTMCell(3, 4)
    cell.load_state_dict(
        {k: compat.tensor(v.numpy()) for k, v in want_cell.state_dict().items()}
    )
    x, c = _values((2, 3), 1), _values((2, 4), 2).astype(np.float64)
    want = want_cell(torch.tensor(x), (torch.zeros(2, 4), torch.tensor(c)))
    got = cell(compat.tensor(x), (compat.zeros(2, 4), compat.tensor(c)))
    for w, g in zip(want, got, strict=True):
        assert str(g.dtype) == str(w.dtype) == "torch.float64"
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-6)
