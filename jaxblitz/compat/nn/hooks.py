"""``nn.Module`` hooks: forward pre-hooks, forward hooks and full backward (pre-)
hooks, called as torch's ``Module._call_impl`` calls them.

A full backward hook needs the gradients of all of a module's inputs at once
(and of all its outputs), where compat's autograd moves one gradient per node.
As torch wraps them in ``BackwardHookFunction``, the module's tensor inputs (and
outputs) are passed through identity nodes here: each one files the gradient it
receives with its group and sends a placeholder on to one shared node, which the
engine reaches only after every identity node of the group (the topological
order); that node calls the hooks with the whole tuple and sends the (possibly
replaced) gradients on to the tensors that were wrapped.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict
from typing import Any

import jax.numpy as jnp

from jaxblitz.compat.autograd.grad_mode import is_grad_enabled
from jaxblitz.compat.autograd.graph import Node
from jaxblitz.compat.tensor._tensor_base import TensorBase

# Made on first use (a module with none is called straight), but there to read
# from the start, as torch's are (the pruning tutorial prints
# module._forward_pre_hooks).
HOOK_DICTS = frozenset(
    (
        "_forward_pre_hooks",
        "_forward_pre_hooks_with_kwargs",
        "_forward_hooks",
        "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called",
        "_backward_hooks",
        "_backward_pre_hooks",
    )
)


class RemovableHandle:
    """``torch.utils.hooks.RemovableHandle``: ``remove()`` takes the hook out of
    every dict it was entered in; also a context manager."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        extra = [] if extra_dict is None else extra_dict
        extra = extra if isinstance(extra, list) else [extra]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def hook_dict(module: Any, name: str) -> OrderedDict:
    """The module's ``name`` dict of hooks, made on first use."""
    d = module.__dict__.get(name)
    if d is None:
        d = module.__dict__[name] = OrderedDict()
    return d


def has_hooks(module: Any) -> bool:
    d = module.__dict__
    return bool(
        d.get("_forward_pre_hooks")
        or d.get("_forward_hooks")
        or d.get("_backward_hooks")
        or d.get("_backward_pre_hooks")
    )


def register(
    module: Any, store: str, hook: Any, prepend: bool, flags: dict[str, bool]
) -> RemovableHandle:
    hooks = hook_dict(module, store)
    extras = {name: hook_dict(module, name) for name in flags}
    handle = RemovableHandle(hooks, extra_dict=list(extras.values()))
    hooks[handle.id] = hook
    for name, flag in flags.items():
        if flag:
            extras[name][handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# -- Module.__call__ with hooks -------------------------------------------------------


def call(module: Any, args: tuple, kwargs: dict) -> Any:
    """torch's ``Module._call_impl`` for a module that has hooks."""
    d = module.__dict__
    pre_hooks = d.get("_forward_pre_hooks") or {}
    pre_kwargs = d.get("_forward_pre_hooks_with_kwargs") or {}
    for hook_id, hook in list(pre_hooks.items()):
        if hook_id in pre_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {result}."
                    )
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)

    full_hooks = list((d.get("_backward_hooks") or {}).values())
    backward_pre_hooks = list((d.get("_backward_pre_hooks") or {}).values())
    bw_hook = None
    if full_hooks or backward_pre_hooks:
        bw_hook = _BackwardHook(module, full_hooks, backward_pre_hooks)
        args = bw_hook.setup_input_hook(args)

    hooks = d.get("_forward_hooks") or {}
    with_kwargs = d.get("_forward_hooks_with_kwargs") or {}
    always = d.get("_forward_hooks_always_called") or {}
    called: set[int] = set()
    result = None
    try:
        result = module.forward(*args, **kwargs)
        for hook_id, hook in list(hooks.items()):
            if hook_id in always:
                called.add(hook_id)
            if hook_id in with_kwargs:
                hook_result = hook(module, args, kwargs, result)
            else:
                hook_result = hook(module, args, result)
            if hook_result is not None:
                result = hook_result
    except Exception:
        # torch: hooks registered with always_call=True still run, their own
        # errors silenced, before the forward's error goes on.
        for hook_id, hook in list(hooks.items()):
            if hook_id not in always or hook_id in called:
                continue
            try:
                if hook_id in with_kwargs:
                    hook_result = hook(module, args, kwargs, result)
                else:
                    hook_result = hook(module, args, result)
                if hook_result is not None:
                    result = hook_result
            except Exception as e:  # noqa: BLE001 -- torch warns and goes on
                warnings.warn(
                    "forward hook with ``always_call=True`` raised an exception that "
                    f"was silenced as another error was raised in forward: {e}",
                    stacklevel=3,
                )
        raise

    if bw_hook is not None:
        if not isinstance(result, TensorBase | tuple):
            warnings.warn(
                "For backward hooks to be called, module output should be a Tensor "
                f"or a tuple of Tensors but received {type(result)}",
                stacklevel=3,
            )
        result = bw_hook.setup_output_hook(result)
    return result


# -- full backward hooks --------------------------------------------------------------


class _Gather(Node):
    """The shared node of a wrapped group: calls ``on_grads`` with the group's
    gradients once all have arrived; returns those for the wrapped tensors."""

    __slots__ = ("group",)

    def apply_vjp(self, grad):
        return [None if g is None else g._value() for g in self.group.finish()]

    def apply_vjp_graph(self, grad):  # create_graph: the gradients stay Tensors
        return self.group.finish()

    def release(self) -> None:
        pass


class BackwardHookFunctionBackward(Node):
    """One wrapped tensor: files its gradient with its group (torch's name)."""

    __slots__ = ("group", "position")

    def apply_vjp(self, grad):
        self.group.grads[self.position] = grad
        return [jnp.zeros((), grad.dtype)]

    def apply_vjp_graph(self, grad):  # create_graph: ``grad`` is a Tensor
        self.group.grads[self.position] = grad
        return [TensorBase._wrap(jnp.zeros((), grad.dtype.np))]

    def release(self) -> None:
        pass


class _Group:
    """The tensors one ``BackwardHookFunction`` call wrapped."""

    def __init__(self, tensors: list[TensorBase], on_grads) -> None:
        self.shapes = [(tuple(t.shape), t.dtype.np) for t in tensors]
        self.requires = [t.requires_grad for t in tensors]
        self.grads: list[Any] = [None] * len(tensors)
        self.on_grads = on_grads

    def finish(self) -> list[Any]:
        """The hooks' gradients (Tensors) for the wrapped tensors that need one."""
        # torch materialises a gradient that did not arrive (an unused output, a
        # tensor that does not require grad) as zeros
        grads = [
            g
            if isinstance(g, TensorBase)
            else TensorBase._wrap(g if g is not None else jnp.zeros(shape, dt))
            for g, (shape, dt) in zip(self.grads, self.shapes, strict=True)
        ]
        self.grads = [None] * len(grads)
        out = self.on_grads(tuple(grads))
        return [
            None if g is None or not needs else g
            for g, needs in zip(out, self.requires, strict=True)
        ]


def _wrap_group(tensors: list[TensorBase], on_grads) -> list[TensorBase]:
    group = _Group(tensors, on_grads)
    inputs = tuple(t._node() if t.requires_grad else None for t in tensors)
    gather = _Gather(None, (), (), inputs, tuple(x is not None for x in inputs))
    gather.group = group
    out = []
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            out.append(t)
            continue
        node = BackwardHookFunctionBackward(None, (), (), (gather,), (True,))
        node.group, node.position = group, i
        wrapped = TensorBase._wrap(None, requires_grad=True, grad_fn=node)
        wrapped._share(t)
        out.append(wrapped)
    return out


class _BackwardHook:
    """torch.utils.hooks.BackwardHook over compat's nodes."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks, self.user_pre_hooks = user_hooks, user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_outputs = self.n_inputs = -1
        self.output_tensors_index: list[int] | None = None
        self.input_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices, values, size) -> tuple:
        res: list[Any] = [None] * size
        for idx, val in zip(indices, values, strict=True):
            res[idx] = val
        return tuple(res)

    def _apply_on_tensors(self, on_grads, args: tuple) -> tuple[tuple, list | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        wrapped = _wrap_group(tensors, on_grads)
        out = list(args)
        for i, t in zip(index, wrapped, strict=True):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple) -> tuple:
        def on_grads(grad_input: tuple) -> tuple:
            if self.grad_outputs is None:
                return grad_input
            res = self._pack_with_none(
                self.input_tensors_index, grad_input, self.n_inputs
            )
            for hook in self.user_hooks:
                out = hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, got "
                        f"{len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        res, index = self._apply_on_tensors(on_grads, args)
        self.n_inputs, self.input_tensors_index = len(args), index
        return res

    def setup_output_hook(self, result: Any) -> Any:
        def on_grads(grad_output: tuple) -> tuple:
            self.grad_outputs = self._pack_with_none(
                self.output_tensors_index, grad_output, self.n_outputs
            )
            expected = len(self.grad_outputs)
            for pre_hook in self.user_pre_hooks:
                replaced = pre_hook(self.module, self.grad_outputs)
                if replaced is None:
                    continue
                if len(replaced) != expected:
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, "
                        f"got {len(replaced)}, but expected {expected}"
                    )
                self.grad_outputs = replaced
            local = self.grad_outputs
            if self.input_tensors_index is None:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with "
                    "respect to module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    stacklevel=2,
                )
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for hook in self.user_hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(el is None for el in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires "
                            "gradient should always return None or None for all "
                            "gradients."
                        )
                self.grad_outputs = None
            return tuple(local[i] for i in self.output_tensors_index)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._apply_on_tensors(on_grads, args)
        self.n_outputs, self.output_tensors_index = len(args), index
        return res if is_tuple else res[0]


__all__ = ["RemovableHandle", "call", "has_hooks", "hook_dict", "register"]
