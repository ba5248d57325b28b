"""Blitz 3, "Neural Networks": ``nn.Module`` and ``nn.Parameter``.

Parameters, buffers and submodules are found by attribute assignment, as in torch,
so ``state_dict()`` keys are torch's (``conv1.weight``) and equal the functional
core's params tree flattened with dots.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

from jaxblitz.compat.autograd.grad_mode import no_grad
from jaxblitz.compat.bridge import load_params
from jaxblitz.compat.nn import hooks as _hooks
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import empty, empty_like

_NONE: Any = MappingProxyType({})  # a store a module lacks: nothing in it


class Parameter(Tensor):
    """``nn.Parameter(data, requires_grad=True)``: shares ``data``'s storage."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        data = empty(0) if data is None else data
        p = Tensor._wrap(None, cls=cls)
        p._share(data)
        p.requires_grad = requires_grad
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class _BufferMeta(type):
    # torch: isinstance(t, Buffer) holds for the tensor Buffer(...) marked, which
    # is a plain Tensor (Buffer.__new__ returns it).
    def __instancecheck__(cls, instance: Any) -> bool:
        if (
            cls is Buffer
            and isinstance(instance, Tensor)
            and getattr(instance, "_is_buffer", False)
        ):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``nn.Buffer(data, persistent=True)``: marks a tensor as a buffer, so that
    assigning it to a module attribute registers it (``persistent=False`` keeps it
    out of ``state_dict``). Returns ``data`` detached, a plain Tensor, as torch's
    does; ``isinstance(t, nn.Buffer)`` is true of it."""

    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        data = empty(0) if data is None else data
        t: Any = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class Module:
    """``nn.Module``: subclass, assign layers in ``__init__``, write ``forward``."""

    training: bool
    _version: int = 1  # torch's: state_dict() records it, loading reads it

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())

    # -- registration ------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        # torch's nn.Module.__setattr__: a registered name keeps its kind.
        d = self.__dict__
        if "_parameters" not in d:
            if isinstance(value, Buffer):  # torch's words for a buffer
                raise AttributeError(
                    "cannot assign buffer before Module.__init__() call"
                )
            raise AttributeError(
                "cannot assign module attributes before Module.__init__() call"
            )
        params, modules, buffers = d["_parameters"], d["_modules"], d["_buffers"]

        def remove_from(*stores: Any) -> None:
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        if isinstance(value, Parameter):
            remove_from(d, buffers, modules, d["_non_persistent"])
            self.register_parameter(name, value)
        elif name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            remove_from(d, params, buffers, d["_non_persistent"])
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = value
        elif isinstance(value, Buffer) or name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):  # the Buffer's own persistence
                persistent = value.persistent
            else:
                persistent = name not in d["_non_persistent"]
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # torch's order: parameters, buffers, submodules (unrolled: a hot path)
        d = self.__dict__
        found = d.get("_parameters", _NONE)
        if name in found:
            return found[name]
        found = d.get("_buffers", _NONE)
        if name in found:
            return found[name]
        found = d.get("_modules", _NONE)
        if name in found:
            return found[name]
        if name in _hooks.HOOK_DICTS:
            return _hooks.hook_dict(self, name)
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def _check_name(self, name: Any, kind: str) -> None:
        # torch's checks and words (nn.Module.add_module / register_parameter).
        if not isinstance(name, str):
            raise TypeError(
                f"{kind} name should be a string. Got {type(name).__name__}"
            )
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if kind != "module" and name in self._modules:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call"
            )
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(
        self, name: str, tensor: Tensor | None, persistent: bool = True
    ) -> None:
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        self._modules[name] = module

    register_module = add_module

    # -- traversal -----------------------------------------------------------------
    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                sub = f"{prefix}.{name}" if prefix else name
                yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        # named_modules' order (pre-order, each module once) without building the
        # names: compat.compile walks the modules on every compiled call.
        out, seen, stack = [], set(), [self]
        while stack:
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            out.append(module)
            stack.extend(m for m in reversed(module._modules.values()) if m is not None)
        return iter(out)

    def named_children(self):
        yield from ((n, m) for n, m in self._modules.items() if m is not None)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named(self, store: str, recurse: bool, prefix: str = "", once: bool = True):
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=once)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (once and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        yield from self._named("_parameters", recurse, prefix, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        yield from self._named("_buffers", recurse, prefix, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        # torch's walk and words: each name must be an attribute that is a Module
        module = self
        for part in target.split(".") if target else []:
            if not hasattr(module, part):
                raise AttributeError(
                    f"{type(module).__name__} has no attribute `{part}`"
                )
            module = getattr(module, part)
            if not isinstance(module, Module):
                raise AttributeError(f"`{part}` is not an nn.Module")
        return module

    # -- state ---------------------------------------------------------------------
    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        out: Any = destination
        if out is None:
            out = OrderedDict()
            out._metadata = OrderedDict()
        if hasattr(out, "_metadata"):  # each module's version, as torch's
            out._metadata[prefix[:-1]] = {"version": self._version}
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(out, prefix + name + ".", keep_vars)
        return out

    def _load_upgrade(
        self, state_dict: dict, prefix: str, version: int | None, errors: list[str]
    ) -> None:
        """The version-dependent part of torch's ``_load_from_state_dict``: make
        an older checkpoint's entries for this module current (``version`` is
        None for a dict without torch's ``_metadata``), or add to ``errors``."""

    def _load_pre(self, state_dict: dict, prefix: str) -> None:
        """Before ``load_state_dict`` reads this module's entries (``prefix``
        included): a lazy module sizes its tensors here (torch's load hook)."""

    def load_state_dict(
        self, state_dict: dict, strict: bool = True, assign: bool = False
    ):
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # torch's copy: upgrades edit it
        errors: list[str] = []
        for name, module in self.named_modules():
            prefix = f"{name}." if name else ""
            module._load_pre(state_dict, prefix)
            local = {} if metadata is None else metadata.get(name, {})
            module._load_upgrade(state_dict, prefix, local.get("version"), errors)
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        for key, value in state_dict.items():
            if key in own and tuple(own[key].shape) != tuple(value.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model is "
                    f"{own[key].shape}."
                )
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for key, value in state_dict.items():
                if key not in own:
                    continue
                if assign:
                    self._assign(key, own[key], value)
                    continue
                if own[key].is_meta and not value.is_meta:
                    warnings.warn(
                        f"for {key.rpartition('.')[2]}: copying from a non-meta "
                        "parameter in the checkpoint to a meta parameter in the "
                        "current model, which is a no-op. (Did you mean to pass "
                        "`assign=True` to assign items in the state dictionary to "
                        "their corresponding key in the module instead of copying "
                        "them in place?)",
                        stacklevel=2,
                    )
                own[key].copy_(value)
        return _IncompatibleKeys(missing, unexpected)

    def _assign(self, key: str, own: Tensor, value: Tensor) -> None:
        """``load_state_dict(assign=True)``: ``value`` itself takes ``key``'s place,
        a Parameter where the module held one (keeping its ``requires_grad``)."""
        path, _, name = key.rpartition(".")
        module = self.get_submodule(path) if path else self
        if isinstance(own, Parameter):
            if isinstance(value, Parameter):
                value.requires_grad_(own.requires_grad)
            else:
                value = Parameter(value, requires_grad=own.requires_grad)
        setattr(module, name, value)

    # -- modes, devices, grads --------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = p.grad.detach().zero_()

    def _apply(self, fn, recurse: bool = True) -> Module:
        """torch's ``Module._apply``: a Parameter keeps its identity (``p.data``
        and ``p.grad.data`` are replaced); a buffer is replaced by ``fn(buffer)``."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            grad = param.grad
            param.data = applied
            if grad is not None:
                with no_grad():
                    grad.data = fn(grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={dtype}"
            )

        fmt = kwargs.get("memory_format")

        def convert(t: Tensor) -> Tensor:
            target = [device, dtype if t.is_floating_point() else None]
            if fmt is not None and t.dim() in (4, 5):  # torch converts these only
                return t.to(*[a for a in target if a is not None], memory_format=fmt)
            return t.to(*[a for a in target if a is not None])

        return self._apply(convert)

    def share_memory(self) -> Module:
        """torch's: each parameter's and buffer's ``share_memory_()``, which
        compat refuses (see there); a module without tensors is returned."""
        for t in (*self.parameters(), *self.buffers()):
            t.share_memory_()
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """torch's ``to_empty``: each parameter and buffer replaced by an
        uninitialised tensor of its shape and dtype on ``device`` (a model made
        on the ``meta`` device gets storage, to be filled by its init or
        ``load_state_dict``). torch's values are whatever memory held; compat's
        are zeros, as its ``torch.empty``'s."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def _float_to(self, dt: _dtype.dtype) -> Module:
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._float_to(_dtype.float64)

    def float(self) -> Module:
        return self._float_to(_dtype.float32)

    def half(self) -> Module:
        return self._float_to(_dtype.float16)

    def bfloat16(self) -> Module:
        return self._float_to(_dtype.bfloat16)

    def apply(self, fn) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def load_params(self, params: dict) -> Module:
        """The bridge back from the functional core: ``params`` -> this module."""
        load_params(self, params)
        return self

    # -- calling and printing ------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__  # no hook dict made yet: straight to forward (hot path)
        if (
            "_forward_pre_hooks" in d
            or "_forward_hooks" in d
            or "_backward_hooks" in d
            or "_backward_pre_hooks" in d
        ) and _hooks.has_hooks(self):
            return _hooks.call(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # -- hooks (see nn/hooks.py) ------------------------------------------------------
    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> _hooks.RemovableHandle:
        return _hooks.register(
            self,
            "_forward_pre_hooks",
            hook,
            prepend,
            {"_forward_pre_hooks_with_kwargs": with_kwargs},
        )

    def register_forward_hook(
        self,
        hook,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> _hooks.RemovableHandle:
        return _hooks.register(
            self,
            "_forward_hooks",
            hook,
            prepend,
            {
                "_forward_hooks_with_kwargs": with_kwargs,
                "_forward_hooks_always_called": always_call,
            },
        )

    def register_full_backward_hook(
        self, hook, prepend: bool = False
    ) -> _hooks.RemovableHandle:
        return _hooks.register(self, "_backward_hooks", hook, prepend, {})

    def register_full_backward_pre_hook(
        self, hook, prepend: bool = False
    ) -> _hooks.RemovableHandle:
        return _hooks.register(self, "_backward_pre_hooks", hook, prepend, {})

    def register_backward_hook(self, hook) -> Any:
        raise NotImplementedError(
            "Module.register_backward_hook (torch's deprecated non-full backward "
            "hook) is not supported by jaxblitz.compat; use "
            "register_full_backward_hook"
        )

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            text = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                return main + lines[0] + ")"
            return main + "\n  " + "\n  ".join(lines) + "\n)"
        return main + ")"

    def __dir__(self):
        return [*super().__dir__(), *self._parameters, *self._modules, *self._buffers]


def _typename(value: Any) -> str:
    """torch.typename: ``torch.FloatTensor`` for a tensor, else the type's name."""
    if isinstance(value, Tensor):
        return value.type()
    return type(value).__name__


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, _dtype.dtype | None]:
    """torch's ``_parse_to`` for ``Module.to``: (device, dtype); ``non_blocking``
    only chooses torch's kernels (``memory_format`` is read by ``Module.to``)."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, str | _dtype.device):
            device = arg
    return device, None if dtype is None else _dtype.to_dtype(dtype)


class _IncompatibleKeys(tuple):
    def __new__(cls, missing_keys, unexpected_keys):
        return super().__new__(cls, (missing_keys, unexpected_keys))

    missing_keys = property(lambda self: self[0])
    unexpected_keys = property(lambda self: self[1])

    def __repr__(self) -> str:
        if not self[0] and not self[1]:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"
