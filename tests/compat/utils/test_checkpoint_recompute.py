"""torch.utils.checkpoint's recomputation, against torch: the piece runs again
in backward (both variants), torch's early stop, the random state replayed, the
recomputed values feeding the gradient, and torch's errors and refusals."""

import contextlib

import numpy as np
import pytest

import jaxblitz.compat as compat
from jaxblitz.compat.utils import checkpoint as compat_checkpoint

torch = pytest.importorskip("torch")
torch_checkpoint = pytest.importorskip("torch.utils.checkpoint")

LIBS = [(torch, torch_checkpoint), (compat, compat_checkpoint)]


def _both(scenario, *args, **kwargs):
    return [scenario(lib, ck, *args, **kwargs) for lib, ck in LIBS]


def _events(lib, ck, use_reentrant, body, **kwargs):
    log = []

    def piece(a):
        log.append("call")
        out = body(lib, a)
        log.append("end")
        return out

    x = lib.ones(4, requires_grad=True)
    out = ck.checkpoint(piece, x, use_reentrant=use_reentrant, **kwargs)
    log.append("forward done")
    out.sum().backward()
    return log


BODIES = {
    "sin": lambda T, a: a.sin() * 2,
    "add": lambda T, a: a + 1,
    "exp_then_add": lambda T, a: a.exp() + 1,
    "linear_relu": lambda T, a: T.nn.functional.relu(a.view(2, 2) @ a.view(2, 2)),
}


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_the_piece_runs_again_in_backward_as_torchs(body, use_reentrant):
    got, want = _both(_events, use_reentrant, BODIES[body])[::-1]
    assert got == want


@pytest.mark.parametrize("early_stop", [True, False])
def test_recomputation_stops_after_the_last_saving_op_as_torchs(early_stop):
    def body(T, a):
        return a.sin() + 1  # the last op saves nothing: "end" is not reached again

    got, want = _both(_events, False, body, early_stop=early_stop)[::-1]
    assert got == want


def _with_dropout(lib, ck, use_reentrant, preserve):
    lib.manual_seed(0)
    x = lib.ones(64, requires_grad=True)
    out = ck.checkpoint(
        lambda a: lib.nn.functional.dropout(a, 0.5),
        x,
        use_reentrant=use_reentrant,
        preserve_rng_state=preserve,
    )
    lib.rand(1)  # draws between forward and backward
    out.sum().backward()
    return out.detach().numpy() != 0, x.grad.numpy() != 0, lib.rand(3).numpy()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_recomputed_dropout_draws_the_forwards_mask(use_reentrant):
    kept, flowed, _ = _with_dropout(compat, compat_checkpoint, use_reentrant, True)
    assert 0 < kept.sum() < 64
    np.testing.assert_array_equal(flowed, kept)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_recomputation_leaves_the_generator_where_it_was(use_reentrant):
    after = _with_dropout(compat, compat_checkpoint, use_reentrant, True)[2]
    compat.manual_seed(0)
    compat.ones(64).bernoulli_(0.5)
    compat.rand(1)
    np.testing.assert_array_equal(after, compat.rand(3).numpy())


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_without_preserving_the_state_recomputation_draws_anew(use_reentrant):
    kept, flowed, _ = _with_dropout(compat, compat_checkpoint, use_reentrant, False)
    assert (kept != flowed).any()


def _varying(lib, ck, use_reentrant):
    calls = [0]

    def piece(a):
        calls[0] += 1
        return a * lib.tensor([float(calls[0])])

    x = lib.ones(1, requires_grad=True)
    ck.checkpoint(piece, x, use_reentrant=use_reentrant).sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_the_recomputed_values_feed_the_gradient_as_torchs(use_reentrant):
    got, want = _both(_varying, use_reentrant)[::-1]
    assert got == want == [2.0]


def _twice(lib, ck):
    calls = []
    x = lib.ones(2, requires_grad=True)
    out = ck.checkpoint(
        lambda a: calls.append(1) or a.sin(), x, use_reentrant=False
    ).sum()
    out.backward(retain_graph=True)
    out.backward()
    return len(calls), x.grad.numpy()


def test_each_backward_through_a_retained_graph_recomputes_as_torchs():
    (got_n, got), (want_n, want) = _both(_twice)[::-1]
    assert got_n == want_n == 3
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _contexts(lib, ck):
    log = []

    @contextlib.contextmanager
    def say(what):
        log.append(f"enter {what}")
        yield
        log.append(f"exit {what}")

    x = lib.ones(2, requires_grad=True)
    out = ck.checkpoint(
        lambda a: log.append("call") or a.sin(),
        x,
        use_reentrant=False,
        context_fn=lambda: (say("forward"), say("recompute")),
    )
    out.sum().backward()
    return log


def test_context_fn_wraps_the_forward_and_the_recomputation_as_torchs():
    got, want = _both(_contexts)[::-1]
    assert got == want


def _shifting(lib, ck, check):
    calls = [0]

    def piece(a):
        calls[0] += 1
        return a[: calls[0]].sin()

    x = lib.ones(3, requires_grad=True)
    out = ck.checkpoint(piece, x, use_reentrant=False, determinism_check=check)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return type(e).__name__, str(e).splitlines()[0]
    return "no error"


def test_a_recomputation_of_other_shapes_raises_torchs_checkpoint_error():
    got, want = _both(_shifting, "default")[::-1]
    assert got == want
    assert got[0] == "CheckpointError"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"determinism_check": "x"}, ValueError, r"one of \['default', 'none'\]"),
        (
            {"debug": True, "context_fn": lambda: (None, None)},
            ValueError,
            "debug=True is incompatible with non-default context_fn",
        ),
    ],
)
def test_checkpoints_arguments_are_refused_as_torchs(kwargs, error, match):
    for _, ck in LIBS:
        with pytest.raises(error, match=match):
            ck.checkpoint(lambda a: a, compat.ones(1), use_reentrant=False, **kwargs)


def test_debug_logs_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="debug=True"):
        compat_checkpoint.checkpoint(
            lambda a: a, compat.ones(1), use_reentrant=False, debug=True
        )


def test_non_reentrant_checkpoint_takes_keyword_arguments_as_torchs():
    got = [
        ck.checkpoint(
            lambda a, k=1: a * k,
            lib.ones(2, requires_grad=True),
            use_reentrant=False,
            k=3,
        ).tolist()
        for lib, ck in LIBS
    ]
    assert got[1] == got[0] == [3.0, 3.0]
