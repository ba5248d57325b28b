"""Blitz 3, "Neural Networks" (a module as a function): ``torch.func``'s
``functional_call`` and ``stack_module_state``.

``functional_call(model, tensors, args)`` runs ``model`` with some of its
parameters and buffers replaced by the given tensors for that one call, as
torch's reparametrisation does: the module's own tensors are put back after,
even when the call raises. Tensors tied to one another (the same Parameter
under two names) are replaced together.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from jaxblitz.compat.nn.module import Module
from jaxblitz.compat.ops.shape_ops import stack


def _merged(tensors: Any) -> dict:
    if isinstance(tensors, dict):
        return dict(tensors)
    merged: dict = {}
    for d in tensors:
        repeated = sorted(set(merged) & set(d))
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of "
                "functional call is ambiguous"
            )
        merged.update(d)
    return merged


def _owner(module: Module, name: str) -> tuple[Any, str]:
    path, _, leaf = name.rpartition(".")
    return (module.get_submodule(path) if path else module), leaf


def _store(owner: Any, leaf: str) -> dict | None:
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__.get(store)
        if d is not None and leaf in d:
            return d
    return None


def _tied(module: Module, given: dict, tie_weights: bool) -> dict:
    """``given``, with every other name of a given tensor that is tied to it."""
    if not tie_weights:
        return given
    names: dict[int, list[str]] = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for store in (m._parameters, m._buffers):
            for leaf, t in store.items():
                if t is not None:
                    key = f"{prefix}.{leaf}" if prefix else leaf
                    names.setdefault(id(t), []).append(key)
    out = dict(given)
    for group in names.values():
        found = [n for n in group if n in given]
        for n in group if found else ():
            out.setdefault(n, given[found[0]])
    return out


def _strict_check(module: Module, given: dict) -> None:
    known = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    known |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    unexpected, missing = sorted(set(given) - known), sorted(known - set(given))
    if unexpected or missing:
        lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
        if unexpected:
            lines.append(
                "\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            )
        if missing:
            lines.append(
                "\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            )
        raise RuntimeError("\n".join(lines))


@contextlib.contextmanager
def _swapped(module: Module, given: dict) -> Iterator[None]:
    undo: list = []
    try:
        for name, value in given.items():
            owner, leaf = _owner(module, name)
            store = _store(owner, leaf)
            if store is not None:  # a parameter or buffer: in its own dict
                undo.append((store.__setitem__, leaf, store[leaf]))
                store[leaf] = value
            else:  # anything else: an attribute for the call (torch's too)
                old = owner.__dict__.get(leaf, _ABSENT)
                undo.append((owner, leaf, old))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for where, leaf, old in reversed(undo):
            if not isinstance(where, Module):
                where(leaf, old)
            elif old is _ABSENT:
                where.__dict__.pop(leaf, None)
            else:
                object.__setattr__(where, leaf, old)


_ABSENT = object()


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``torch.func.functional_call``: ``module(*args, **kwargs)`` with the named
    parameters and buffers replaced by the given tensors for this call."""
    given = _merged(parameter_and_buffer_dicts)
    if strict:
        _strict_check(module, given)
    given = _tied(module, given, tie_weights)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, given):
        return module(*args, **(kwargs or {}))


def _stacked(models: Sequence[Module], name: str, tensors: list, grad: bool) -> Any:
    flags = {t.requires_grad for t in tensors}
    if grad and len(flags) > 1:
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad"
        )
    out = stack(tensors).detach()
    return out.requires_grad_(flags.pop()) if grad else out


def stack_module_state(models: Sequence[Module]) -> tuple[dict, dict]:
    """``torch.func.stack_module_state``: each parameter and buffer of the
    (same-class) ``models`` stacked along a new first dimension, as new leaves."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval "
            "mode."
        )
    if len({type(m) for m in models}) != 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to be of the same class."
        )
    params = {
        name: _stacked(
            models, name, [dict(m.named_parameters())[name] for m in models], True
        )
        for name, _ in models[0].named_parameters()
    }
    buffers = {
        name: _stacked(
            models, name, [dict(m.named_buffers())[name] for m in models], False
        )
        for name, _ in models[0].named_buffers()
    }
    return params, buffers
