"""Every declared op whose torch node saves an input or its result for backward
has that node's saved-tensor rule in compat's table, so an in-place change of
the saved tensor makes backward raise, as torch's does (PyTorch's OpInfo
samples are the spec: the first float32 sample of each op)."""

import functools

import pytest

import jaxblitz.compat as compat
from jaxblitz.compat.autograd.graph import _SAVES
from jaxblitz.compat.ops._declare import declared

torch = pytest.importorskip("torch")

from tests.compat.differential import to_compat  # noqa: E402 -- needs torch

_INDICES = (
    "saves its indices output (output 1), which the rule format cannot name: it "
    "names the recorded node's arguments and its output 0"
)
# Declared ops whose torch node saves a tensor compat has no rule for yet.
KNOWN_MISSING: dict[str, str] = {
    "aminmax": "saves its min and max outputs; the rule format names output 0 only",
    "bmm": "compat records UnsafeViewBackward0 (bmm through matmul's batched path), "
    "torch BmmBackward0",
    "frexp": "saves its exponent output (output 1)",
    "index_put": "saves its indices, a tuple argument the rule format cannot name",
    "kthvalue": _INDICES,
    "max": _INDICES,
    "min": _INDICES,
    "mode": _INDICES,
    "sort": _INDICES,
    "topk": _INDICES,
    "qr": "saves its Q and R outputs; the rule format names output 0 only",
    "native_batch_norm": "saves its mean and invstd outputs (outputs 1 and 2); "
    "the rule format names output 0 only",
    "native_layer_norm": "saves its mean and rstd outputs (outputs 1 and 2); the "
    "rule format names output 0 only",
    "native_group_norm": "compat records SplitWithSizesBackward0 (its three "
    "outputs split from one recorded call), torch NativeGroupNormBackward0",
    "std_mean": "saves its std output, output 0 of a tuple compat builds after "
    "the recorded node",
}


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def _grad_fn(out):
    return next((t.grad_fn for t in _tensors(out) if t.grad_fn is not None), None)


def _key(t):
    return (t.data_ptr(), tuple(t.shape), t.stride())


def _saves_input_or_result(node, inputs, outputs) -> list[str]:
    """The ``_saved_`` attributes of torch's ``node`` that are one of the op's
    inputs or outputs (not an intermediate such as ``max``'s indices)."""
    known = {_key(t) for t in (*inputs, *outputs) if t.numel()}
    found = []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(node, attr)
        except RuntimeError:  # freed, or not saved for this input
            continue
        if any(_key(t) in known for t in _tensors(value) if t.numel()):
            found.append(attr)
    return found


@functools.cache
def _opinfos() -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    by_name: dict = {}
    for op in op_db:
        for name in (op.name, *(a.name for a in op.aliases)):
            if op.variant_test_name == "" or name not in by_name:
                by_name.setdefault(name, op)
    return by_name


def _compat_grad_fn_name(name, sample):
    memo: dict = {}
    args = to_compat((sample.input, *sample.args), memo)
    kwargs = to_compat(dict(sample.kwargs), memo)
    out = getattr(compat, name)(*args, **kwargs)
    nodes = [t.grad_fn for t in _compat_tensors(out) if t.grad_fn is not None]
    return nodes[0].name() if nodes else None


def _compat_tensors(obj):
    if isinstance(obj, compat.Tensor):
        yield obj
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from _compat_tensors(item)


def _miss(name, op) -> str | None:
    """Why ``name``'s saved tensors are not checked as torch's are, or None."""
    if not op.supports_autograd or torch.float32 not in op.supported_dtypes("cpu"):
        return None
    torch.manual_seed(0)
    sample = next(iter(op.sample_inputs_func(op, "cpu", torch.float32, True)), None)
    if sample is None:
        return None
    try:
        out = getattr(torch, name)(sample.input, *sample.args, **sample.kwargs)
    except (TypeError, RuntimeError):  # the sample is for a lambda (polygamma)
        return None
    node = _grad_fn(out)
    if node is None:
        return None
    inputs = list(_tensors((sample.input, sample.args, sample.kwargs)))
    saved = _saves_input_or_result(node, inputs, list(_tensors(out)))
    if not saved:
        return None
    want = type(node).__name__
    try:
        got = _compat_grad_fn_name(name, sample)
    except Exception:  # noqa: BLE001 -- compat refuses the sample: not this test's
        return None
    if got != want:
        return f"compat records {got}, torch {want} (saves {', '.join(saved)})"
    if want not in _SAVES:
        return f"no rule for {want} (torch saves {', '.join(saved)})"
    return None


def test_every_declared_op_has_torchs_saved_tensor_rule():
    misses = {}
    for name in declared():
        op = _opinfos().get(name)
        if op is None or name in KNOWN_MISSING:
            continue
        why = _miss(name, op)
        if why is not None:
            misses[name] = why
    report = "\n".join(f"{name}: {why}" for name, why in sorted(misses.items()))
    assert not misses, f"declared ops without torch's saved-tensor rule:\n{report}"


def test_known_missing_rules_are_still_missing():
    """An entry of KNOWN_MISSING whose rule was added is taken off the list."""
    fixed = [n for n in KNOWN_MISSING if _miss(n, _opinfos()[n]) is None]
    assert not fixed, f"rules now present, drop from KNOWN_MISSING: {fixed}"


def _bumped_backward_raises(lib, out, saved) -> bool | None:
    """Whether backward raises torch's in-place error once ``saved`` changed
    (None: the change itself is refused, as for a view of a split's output)."""
    try:
        with lib.no_grad():
            saved.add_(0)  # a new version, the same values
    except RuntimeError:
        return None
    try:
        first = next((t for t in _any_tensors(out) if t.grad_fn is not None), None)
        if first is None:  # nothing recorded: no backward to refuse
            return False
        first.sum().backward()
    except RuntimeError as e:
        return "modified by an inplace operation" in str(e)
    return False


def _any_tensors(obj):
    if isinstance(obj, torch.Tensor | compat.Tensor):
        yield obj
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from _any_tensors(item)


def test_changing_a_saved_input_raises_as_torch():
    """Each declared op's first sample: every input torch saves is changed in
    place before backward; compat raises the same RuntimeError as torch."""
    differ = {}
    for name in declared():
        op = _opinfos().get(name)
        if op is None or name in KNOWN_MISSING:
            continue
        if _miss(name, op) is not None:
            continue
        torch.manual_seed(0)
        sample = next(iter(op.sample_inputs_func(op, "cpu", torch.float32, True)))
        args = [sample.input, *sample.args]
        for i, arg in enumerate(args):
            if not (isinstance(arg, torch.Tensor) and arg.requires_grad):
                continue
            copy = arg.detach().clone().requires_grad_()
            fresh = [copy if a is arg else a for a in args]
            try:
                out = getattr(torch, name)(*fresh, **sample.kwargs)
            except (TypeError, RuntimeError):
                break
            if _grad_fn(out) is None:
                break
            want = _bumped_backward_raises(torch, out, fresh[i])
            memo: dict = {}
            c_args = to_compat(fresh, memo)
            c_kwargs = to_compat(dict(sample.kwargs), memo)
            try:
                c_out = getattr(compat, name)(*c_args, **c_kwargs)
            except Exception:  # noqa: BLE001 -- compat refuses the sample
                break
            got = _bumped_backward_raises(compat, c_out, c_args[i])
            if want is not None and got != want:
                differ[f"{name} arg {i}"] = f"torch raises: {want}, compat: {got}"
    report = "\n".join(f"{k}: {v}" for k, v in sorted(differ.items()))
    assert not differ, f"in-place change of a saved input:\n{report}"
