"""Blitz 3/4 (update the weights): ``torch.optim.Optimizer`` over Optax.

Each optimizer is an Optax transform -- the core's torch -> Optax map
(:mod:`jaxblitz.optimizers`, every stage kept, even at 0) where it has torch's exact
update rule, a small Optax-style transform of compat's own where it has not --
wrapped in ``optax.inject_hyperparams`` so a change to
``optimizer.param_groups[i]["lr"]`` (a scheduler's) takes effect at the next
``step()``. State is per parameter, as in torch, and one jitted call updates a
whole param group.
"""

from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat import lazy
from jaxblitz.compat._eager import _host_eval, _warm
from jaxblitz.compat.autograd.grad_mode import enable_grad, no_grad
from jaxblitz.compat.optim import _optim_state
from jaxblitz.compat.optim._optim_state import _INTERNAL
from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import x64
from jaxblitz.compat.tensor._tensor_base import from_host


def _update(params, grads, states, hyper, *, tx):
    new_params, new_states = [], []
    for p, g, s in zip(params, grads, states, strict=True):
        s = s._replace(
            hyperparams={
                k: jnp.asarray(hyper[k], v.dtype) for k, v in s.hyperparams.items()
            }
        )
        updates, s = tx.update(g.astype(p.dtype), s, p)
        new_params.append(optax.apply_updates(p, updates))
        # step() puts the stored hyperparameters back (it never reads them): an
        # output each would cost the call a buffer apiece (40 of SGD's 80).
        new_states.append(with_hyper(s, None))
    return new_params, new_states


def with_hyper(state: Any, hyper: Any) -> Any:
    """``state._replace(hyperparams=hyper)`` for Optax's injected-hyperparameter
    states, without ``_replace``'s keyword machinery (it runs per parameter)."""
    i = type(state)._fields.index("hyperparams")
    return tuple.__new__(type(state), (*state[:i], hyper, *state[i + 1 :]))


_update_jit = lazy.jit(_update, static_argnames=("tx",))


def _update_shared(params, grads, states, hyper, *, tx):
    """:func:`_update` for states whose scalar leaves (update counts, SGD's
    ``started`` flag) are the same arrays for every parameter, as ``step()``
    keeps them (:func:`_shares_scalars`): they update from themselves and the
    hyperparameters alone (a test checks this of every compat optimizer), so the
    program outputs the first parameter's state whole and only the array leaves
    of the others. Each output costs the call a buffer: 20 fewer of SGD's 40."""
    new_params, new_states = _update(params, grads, states, hyper, tx=tx)
    rest = [[x for x in jax.tree.leaves(s) if x.ndim] for s in new_states[1:]]
    return new_params, new_states[0], rest


_update_shared_jit = lazy.jit(_update_shared, static_argnames=("tx",))


def _warm_update(arrays, grads, states, hyper, tx) -> Any:
    """Call the program ``step()`` will call for these."""
    shared = all(a.ndim for a in arrays) and _shares_scalars(states)
    update = _update_shared_jit if shared else _update_jit
    return update(arrays, grads, states, hyper, tx=tx)


def _scalars(state: Any) -> list:
    """``state``'s scalar leaves, its injected hyperparameters left out (the
    update replaces those with the group's)."""
    return [x for x in jax.tree.leaves(with_hyper(state, None)) if not x.ndim]


def _shares_scalars(states: list) -> bool:
    """Whether every state's scalar leaves are the first one's arrays (never
    where a parameter is a scalar itself: see :func:`share_scalars`)."""
    if len(states) < 2:
        return False
    first = _scalars(states[0])
    return all(
        all(a is b for a, b in zip(_scalars(s), first, strict=True)) for s in states[1:]
    )


def _unshare(first: Any, rest: list) -> list:
    """The states :func:`_update_shared` returned, each whole: the array leaves
    its own, the scalar leaves ``first``'s (the same arrays)."""
    leaves, treedef = jax.tree.flatten(first)
    states = [first]
    for arrays in rest:
        it = iter(arrays)
        states.append(treedef.unflatten([next(it) if x.ndim else x for x in leaves]))
    return states


def share_scalars(states: list, arrays: list) -> list:
    """``states`` of ``arrays`` (fresh from ``init``, equal scalar leaves) with
    every scalar leaf the first state's array, so ``step()`` can update them
    once. Not where a parameter is a scalar: its own scalar buffers (a momentum)
    would look alike."""
    if len(states) < 2 or any(not a.ndim for a in arrays):
        return states
    rest = [[x for x in jax.tree.leaves(s) if x.ndim] for s in states[1:]]
    return _unshare(states[0], rest)


def _init_all(arrays, *, tx):
    return [tx.init(a) for a in arrays]


_init_jit = lazy.jit(_init_all, static_argnames=("tx",))
_INIT_PLANS: dict[tuple, Any] = {}  # (tx, shapes) -> compat._host_eval's plan


def init_states(tx: optax.GradientTransformation, arrays: list) -> list:
    """``[tx.init(a) for a in arrays]``, the scalar leaves shared (see
    :func:`share_scalars`). Computed with NumPy where ``init`` builds its state
    from the shapes alone, as torch's optimizers do (compat._host_eval: zeros,
    counts, the hyperparameters' values; compiled, it was a program on the first
    step's critical path), else one program (made eagerly, each state's zeros
    were a program compiled per parameter shape)."""
    if not arrays:
        return []
    with x64(True):
        if _warm.traced(arrays):
            return share_scalars(_init_jit(arrays, tx=tx), arrays)
        key = (tx, tuple((a.shape, a.dtype) for a in arrays))
        if key not in _INIT_PLANS:
            init = functools.partial(_init_all, tx=tx)
            _INIT_PLANS[key] = _host_eval.plan(init, arrays)
        planned = _INIT_PLANS[key]
        if planned is None:
            return share_scalars(_init_jit(arrays, tx=tx), arrays)
        states = share_scalars(_host_eval.run(planned), arrays)
        placed: dict[int, jax.Array] = {}  # a shared leaf placed once

        def place(n, like):
            if id(n) not in placed:
                placed[id(n)] = from_host(n, like)
            return placed[id(n)]

        return [
            jax.tree.map(functools.partial(place, like=a), s)
            for s, a in zip(states, arrays, strict=True)
        ]


_TXS: dict[tuple, optax.GradientTransformation] = {}  # Optimizer._tx's


def _number(value: Any) -> Any:
    # torch.compile swaps hyperparameters for tracers, so a changed lr needs no
    # recompilation (jaxblitz.compat.compile); eager steps see Python numbers.
    return value if isinstance(value, jax.Array) else float(value)


class Optimizer:
    """``torch.optim.Optimizer``: ``param_groups``, ``zero_grad()``, ``step()``."""

    _factory: Any = None
    _static: tuple[str, ...] = ()  # group keys passed to the factory as they are
    # factory arguments made from the group (SGD: whether momentum != 0), static
    # too: the update program is built for them
    _derived: dict[str, Callable[[dict], Any]] = {}
    _hyper: dict[str, str] = {}  # Optax hyperparameter name -> torch group key
    # (Optax state class, bool field): torch keeps no state for a parameter until
    # this is true (SGD's buffer, made at the first step with momentum != 0)
    _started: tuple[str, str] | None = None

    def __init__(self, params: Any, defaults: dict[str, Any]):
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got {params.type()}"
            )
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, Any] = {}
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)
        self._warming = (
            [self._warm_up(g) for g in self.param_groups] if _warm.active() else ()
        )

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """torch's ``add_param_group``, with its checks and its words."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        named = [p for p in params if isinstance(p, tuple)]  # named_parameters()
        if named and len(named) != len(params):
            raise ValueError(
                "all optimizer params should be with/without names. Some param "
                "names are missing"
            )
        if named:
            group["param_names"] = [name for name, _ in named]
            params = [p for _, p in named]
        group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                kind = type(p).__name__
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{kind}"
                )
            if not p.is_leaf and not (p.grad_fn and p.grad_fn.retained is p):
                raise ValueError("can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more information",
                UserWarning,
                stacklevel=4,  # the optimizer's caller
            )
        seen: set[Tensor] = set()
        for other in self.param_groups:
            seen.update(other["params"])
            if ("param_names" in other) != bool(named):
                which = "with names" if named else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(self._adopt(group))

    def _adopt(self, group: dict[str, Any]) -> dict[str, Any]:
        """The group as ``param_groups`` keeps it (Adam: its betas split too)."""
        return group

    def _buffers(self, group: dict[str, Any]) -> list[tuple[str, str, str]]:
        """``(torch state key, Optax state class, field)`` for each buffer torch
        keeps, in torch's order; ``step`` has class ``""`` (the update count)."""
        raise NotImplementedError(
            f"{type(self).__name__}.state_dict is not supported by jaxblitz.compat"
        )

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:  # torch: zeroed in place, the same tensor
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def _tx(self, group: dict[str, Any]) -> optax.GradientTransformation:
        """The group's Optax transform, shared by every optimizer of this kind
        with these static settings: it is a static argument of the update
        program, so a second optimizer (or param group) reuses that program.
        The injected hyperparameters' initial values are never read (``step()``
        passes the group's), and what an ``init`` reads is static."""
        static = {k: group[k] for k in self._static}
        # inside torch.compile the group holds tracers: the values it had when
        # the call began (compat._functionalize; part of its program's key)
        traced = self.__dict__.get("_traced_derived", {}).get(id(group))
        static.update(traced or self.derived(group))
        key = (type(self)._factory, *static.items())
        tx = _TXS.get(key)
        if tx is None:
            init = {  # never read (see above); traced by torch.compile: any
                name: 0.0 if isinstance(group[k], jax.core.Tracer) else float(group[k])
                for name, k in self._hyper.items()
            }
            factory = optax.inject_hyperparams(
                type(self)._factory, static_args=tuple(static)
            )
            tx = factory(**init, **static)
            _TXS[key] = tx
        return tx

    def derived(self, group: dict[str, Any]) -> dict[str, Any]:
        """The group's derived static settings (``_derived``)."""
        return {name: f(group) for name, f in self._derived.items()}

    def _warm_up(self, group: dict[str, Any]):
        """Compile ``step()``'s program for ``group`` on the spare core while the
        first forward runs (compat._warm), as that step will call it: with every
        trainable param of the group."""
        arrays = [p._data for p in group["params"] if p.requires_grad]
        if not arrays or _warm.traced(arrays):
            return None
        try:
            tx = self._tx(group)
            hyper = self._hyperparams(group)
        except Exception:  # noqa: BLE001 -- step() raises it, where torch would
            return None
        grads = [_warm.zeros(a) for a in arrays]
        return _warm.submit(
            lambda: _warm_update(arrays, grads, init_states(tx, arrays), hyper, tx)
        )

    def _hyperparams(self, group: dict[str, Any]) -> dict[str, Any]:
        """The Optax hyperparameters ``step()`` injects, from ``group``'s values."""
        return {name: _number(group[key]) for name, key in self._hyper.items()}

    def _states(self, group: dict[str, Any], params: list) -> list:
        """``params``' states: the stored ones, and for params without one (torch
        makes it at the first ``step()``) new ones, made in one program."""
        missing = [p._data for p in params if p not in self.state]
        fresh = iter(init_states(self._tx(group), missing))
        return [self.state[p] if p in self.state else next(fresh) for p in params]

    @no_grad()
    def step(self, closure: Any = None) -> Any:
        for future in getattr(self, "_warming", None) or ():
            _warm.wait(future)
        self._warming = ()
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        shared = self.__dict__.setdefault("_shared", {})  # see _update_shared
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            tx = self._tx(group)
            hyper = self._hyperparams(group)
            with x64(True):
                states = self._states(group, params)
                arrays = [p._value() for p in params]
                grads = [p.grad._value() for p in params]
                if group.get("maximize"):  # torch: ascend, the gradient negated first
                    grads = [-g for g in grads]
                # The states the last step stored, untouched since: shared.
                last = shared.get(id(group), ())
                same = len(last) == len(states) and all(
                    a is b for a, b in zip(last, states, strict=True)
                )
                if same or (all(a.ndim for a in arrays) and _shares_scalars(states)):
                    new_arrays, first, rest = _update_shared_jit(
                        arrays, grads, states, hyper, tx=tx
                    )
                    new_states, same = _unshare(first, rest), True
                else:
                    new_arrays, new_states = _update_jit(
                        arrays, grads, states, hyper, tx=tx
                    )
            stored = []
            for p, a, s, old in zip(
                params, new_arrays, new_states, states, strict=True
            ):
                p._set_data(a)
                self.state[p] = s = with_hyper(s, old.hyperparams)
                stored.append(s)
            shared[id(group)] = tuple(stored) if same else ()
        return loss

    def state_dict(self) -> dict[str, Any]:
        """torch's structure: ``{"state": {0: {...}}, "param_groups": [...]}``
        (see :mod:`jaxblitz.compat.optim._optim_state`)."""
        return _optim_state.state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _optim_state.load_state_dict(self, state_dict)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            # torch: a blank line between groups, compat's own keys unshown
            lines += [""] * bool(i) + [f"Parameter Group {i}"]
            keys = (k for k in group if k != "params" and k not in _INTERNAL)
            for key in sorted(keys):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"


def _check(
    value: Any,
    low: float,
    message: str,
    high: float | None = None,
    *,
    closed: bool = False,
) -> None:
    """torch's ``low <= value (< high)`` check (``<= high`` if ``closed``): a
    ValueError in torch's words.

    A value that is not a number is a TypeError naming it (torch's is a bare
    "'<' not supported between instances of 'str' and 'float'").
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Tensor):
        raise TypeError(f"{message} (expected a number, got {type(value).__name__})")
    below = high is None or value < high or (closed and value == high)
    if not (low <= value and below):
        raise ValueError(message)


def _check_tensor(name: str, value: Any, foreach: Any = None, capturable=True) -> None:
    """torch's checks on a hyperparameter given as a Tensor (``lr``, ``betas[0]``)."""
    if not isinstance(value, Tensor):
        return
    if foreach and not capturable:
        raise ValueError(
            f"{name} as a Tensor is not supported for capturable=False and foreach=True"
        )
    if value.numel() != 1:
        raise ValueError(f"Tensor {name} must be 1-element")


def _unsupported(name: str, **options: Any) -> None:
    """Refuse torch options compat does not implement, rather than ignore them.

    (``foreach``, ``fused`` and ``capturable`` only choose torch's kernels, so any
    value of theirs is accepted.)
    """
    given = [f"{k}={v!r}" for k, v in options.items() if v]
    if given:
        raise NotImplementedError(
            f"{name}: {', '.join(given)} is not supported by jaxblitz.compat"
        )
