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
from operator import is_
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jaxblitz.compat import _not_offered, lazy
from jaxblitz.compat._eager import _host_eval, _warm
from jaxblitz.compat.autograd.grad_mode import enable_grad, no_grad
from jaxblitz.compat.optim import _optim_state
from jaxblitz.compat.optim._optim_state import _INTERNAL
from jaxblitz.compat.optim._state_view import StateView
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
    kind = type(state)
    i = _HYPER_AT.get(kind)
    if i is None:
        i = _HYPER_AT[kind] = kind._fields.index("hyperparams")
    return tuple.__new__(kind, (*state[:i], hyper, *state[i + 1 :]))


_HYPER_AT: dict[type, int] = {}  # a state class -> its hyperparams field's index


_update_jit = lazy.jit(_update, static_argnames=("tx",))


def _update_shared(params, grads, first, rest, hyper, *, tx):
    """:func:`_update` for states whose scalar leaves (update counts, SGD's
    ``started`` flag) are the same arrays for every parameter, as ``step()``
    keeps them (:func:`_shares_scalars`): the first parameter's state comes
    whole (``first``), the others as their array leaves alone (``rest``, see
    :func:`_unshare`). The scalar leaves update from themselves and the
    hyperparameters alone (a test checks this of every compat optimizer), so the
    program outputs the first parameter's state whole and only the array leaves
    of the others. Each input is a leaf the call records and each output a
    buffer: the scalar leaves pass once, not once per parameter."""
    states = _unshare(first, rest)
    new_params, new_states = _update(params, grads, states, hyper, tx=tx)
    return new_params, new_states[0], [_arrays(s) for s in new_states[1:]]


_update_shared_jit = lazy.jit(_update_shared, static_argnames=("tx",))


def _arrays(state: Any) -> list:
    """``state``'s array leaves (not its scalars), in order."""
    return [x for x in jax.tree.leaves(state) if x.ndim]


_ABSENT = object()  # not there (a param's state, a structure's _trie)


def _warm_update(arrays, grads, states, hyper, tx) -> Any:
    """Call the program ``step()`` will call for these."""
    if all(a.ndim for a in arrays) and _shares_scalars(states):
        rest = [_arrays(s) for s in states[1:]]
        return _update_shared_jit(arrays, grads, states[0], rest, hyper, tx=tx)
    return _update_jit(arrays, grads, states, hyper, tx=tx)


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
    at = [i for i, x in enumerate(leaves) if x.ndim]
    states = [first]
    for arrays in rest:
        own = leaves.copy()
        for i, x in zip(at, arrays, strict=True):
            own[i] = x
        states.append(treedef.unflatten(own))
    return states


def _restored(first: Any, rest: list, states: list) -> list:
    """The states :func:`_update_shared` returned for ``states``, each whole and
    with its old injected hyperparameters back (``step()`` keeps them). Each is
    ``first`` with its own array leaves grafted in, only the tuples above them
    made anew (:func:`_graft`), where the state allows that; else unflattened."""
    leaves, treedef = jax.tree.flatten(first)
    trie = _TRIES.get(treedef, _ABSENT)
    if trie is _ABSENT:
        trie = _TRIES[treedef] = _trie(first, leaves, treedef)
    if trie is None:
        return [
            with_hyper(s, old.hyperparams)
            for s, old in zip(_unshare(first, rest), states, strict=True)
        ]
    out = [with_hyper(first, states[0].hyperparams)]
    for arrays, old in zip(rest, states[1:], strict=True):
        out.append(_graft(first, trie, [*arrays, old.hyperparams]))
    return out


def _graft(node: tuple, trie: dict, values: list) -> tuple:
    """``node`` with ``values`` put where ``trie`` says (:func:`_trie`): each
    tuple on the way made anew, the rest of ``node`` as it is."""
    parts = list(node)
    for i, at in trie.items():
        parts[i] = values[at] if type(at) is int else _graft(node[i], at, values)
    return tuple.__new__(type(node), parts)


def _trie(first: Any, leaves: list, treedef: Any) -> dict | None:
    """Where ``first``'s array leaves sit, as nested ``{index: ...}`` down its
    tuples to each leaf's number, and its ``hyperparams`` field (number: the
    count of arrays); None where a leaf sits in a node other than a tuple (a
    dict, a pytree node of another kind) or the graft would not rebuild
    ``first`` exactly (checked here, once per state structure)."""
    keys = jax.tree_util.tree_flatten_with_path(first)[0]
    trie: dict = {}
    n = 0
    for path, x in keys:
        if not x.ndim:
            continue
        node, at = first, trie
        for depth, key in enumerate(path):
            kind = type(node)
            if type(key) is jax.tree_util.GetAttrKey and hasattr(kind, "_fields"):
                i = kind._fields.index(key.name)
            elif type(key) is jax.tree_util.SequenceKey and kind is tuple:
                i = key.idx
            else:
                return None
            node = node[i]
            if depth < len(path) - 1:
                at = at.setdefault(i, {})
            elif i in at:
                return None
            else:
                at[i] = n
        n += 1
    if "hyperparams" not in getattr(type(first), "_fields", ()):
        return None
    trie[type(first)._fields.index("hyperparams")] = n
    try:
        built = _graft(first, trie, [*(x for x in leaves if x.ndim), None])
    except (TypeError, IndexError):
        return None
    same = jax.tree.flatten(built)
    if same[1] != treedef or not all(map(is_, same[0], leaves)):
        return None
    return trie


_TRIES: dict[Any, dict | None] = {}  # a state structure -> its _trie


def share_scalars(states: list, arrays: list) -> list:
    """``states`` of ``arrays`` (fresh from ``init``, equal scalar leaves) with
    every scalar leaf the first state's array, so ``step()`` can update them
    once. Not where a parameter is a scalar: its own scalar buffers (a momentum)
    would look alike."""
    if len(states) < 2 or any(not a.ndim for a in arrays):
        return states
    return _unshare(states[0], [_arrays(s) for s in states[1:]])


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
_FROZEN = frozenset({bool, int, float, complex, str, type(None)})
_LISTS = ("params", "param_names")  # group keys no setting is read from


def _frozen(value: Any) -> bool:
    """Whether ``value`` cannot change in place (so one that is still the same
    object still has the same value)."""
    kind = type(value)
    return kind in _FROZEN or (kind is tuple and all(map(_frozen, value)))


class _Plan:
    """What ``step()`` keeps of a param group from one step to the next.

    ``tx`` and ``hyper`` (:meth:`Optimizer._tx`, :meth:`Optimizer._hyperparams`)
    hold while the group's keys and values are the ones in ``keys``/``values``,
    the same objects (``values`` is None where that cannot tell: a value that
    can change in place, such as a tensor lr, or torch.compile's tracers).
    ``stored``: the states the last step stored, updated shared (see
    :func:`_update_shared`), ``rest`` their array leaves as its program returned
    them; ``stored`` is empty where that step did not update them shared.
    """

    __slots__ = ("group", "keys", "values", "tx", "hyper", "stored", "rest")

    def __init__(self, group: dict[str, Any]):
        self.group = group
        self.keys = self.values = self.tx = self.hyper = self.rest = None
        self.stored: tuple = ()


def _number(value: Any) -> Any:
    # torch.compile swaps hyperparameters for tracers, so a changed lr needs no
    # recompilation (jaxblitz.compat.compile); eager steps see Python numbers.
    return value if isinstance(value, jax.Array) else float(value)


class _RequiredParameter:
    """torch's marker for a hyperparameter with no default (``lr=required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


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
    # torch makes the state in the constructor (Adagrad), so an emptied dict is
    # an error at the step rather than a fresh start
    _state_at_init = False

    def __init__(self, params: Any, defaults: dict[str, Any]):
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got {params.type()}"
            )
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self._optax_states: dict[Tensor, Any] = {}  # a param -> its Optax state
        self._state_view = StateView(self)
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

    @property
    def state(self) -> StateView:
        """torch's ``optimizer.state``: each parameter's state in torch's format
        (:mod:`jaxblitz.compat.optim._state_view`)."""
        return self._state_view

    @state.setter
    def state(self, value: Any) -> None:
        # torch: `optimizer.state = defaultdict(dict)` resets it (the old
        # mapping keeps its dicts, no longer the optimizer's)
        self._state_view.detach()
        self._optax_states.clear()
        self._state_view = StateView(self)
        for p, entry in dict(value).items():
            self._state_view[p] = entry

    def _sync_state(self) -> None:
        """Load edits made through :attr:`state` back (before a step reads it)."""
        self._state_view.sync()

    def _torch_entry(self, group: dict[str, Any], p: Tensor, state: Any) -> dict:
        """``p``'s Optax ``state`` as torch's dict of it (empty: torch keeps none)."""
        arrays = self._torch_arrays(group, p, state)
        return {key: Tensor._wrap(a) for key, a in arrays.items()}

    def _torch_arrays(self, group: dict[str, Any], p: Tensor, state: Any) -> dict:
        """:meth:`_torch_entry`'s buffers as arrays (what a step writes into the
        tensors handed out)."""
        return _optim_state._torch_arrays(self, group, state)

    def _settle(self, group: dict[str, Any], new: Any, old: Any) -> Any:
        """A state ``step()`` made from ``old``, with what the host knows of it
        put in (SGD: whether torch keeps a buffer yet)."""
        return new

    def _load_entry(self, group: dict[str, Any], p: Tensor, value: dict) -> Any:
        """``p``'s Optax state from torch's dict ``value`` (``load_state_dict``)."""
        return _optim_state._optax_state(self, group, p, value)

    def zero_grad(self, set_to_none: bool = True) -> None:
        if set_to_none:
            for group in self.param_groups:
                for p in group["params"]:
                    p.grad = None
            return
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:  # torch: zeroed in place, the same tensor
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

    def _plan(self, group: dict[str, Any]) -> _Plan:
        """``group``'s :class:`_Plan` (made at its first step)."""
        plans = self.__dict__.get("_plans")
        if plans is None:
            plans = self._plans = {}
        plan = plans.get(id(group))
        if plan is None or plan.group is not group:
            if len(plans) >= len(self.param_groups):  # forget the groups gone
                live = {id(g) for g in self.param_groups}
                for key in [key for key in plans if key not in live]:
                    del plans[key]
            plan = plans[id(group)] = _Plan(group)
        return plan

    def _settings(self, plan: _Plan) -> tuple[optax.GradientTransformation, dict]:
        """:meth:`_tx` and :meth:`_hyperparams` of ``plan.group``: the last step's
        while none of the group's keys and values changed (see :class:`_Plan`)."""
        group = plan.group
        values = tuple(group.values())
        if (
            plan.values is not None
            and len(values) == len(plan.values)
            and all(map(is_, values, plan.values))
            and all(map(is_, group, plan.keys))
        ):
            return plan.tx, plan.hyper
        plan.tx, plan.hyper = self._tx(group), self._hyperparams(group)
        plan.keys, plan.values = tuple(group), None
        kind = type(self)
        if (
            "_traced_derived" not in self.__dict__  # inside torch.compile
            and kind.derived is Optimizer.derived  # reads the group alone
            and kind._tx is Optimizer._tx
            and kind._hyperparams is Optimizer._hyperparams
            and all(_frozen(v) for k, v in group.items() if k not in _LISTS)
        ):
            plan.values = values
        return plan.tx, plan.hyper

    def _states(self, group: dict[str, Any], params: list) -> list:
        """``params``' states: the stored ones, and for params without one (torch
        makes it at the first ``step()``) new ones, made in one program."""
        states = [self._optax_states.get(p, _ABSENT) for p in params]
        if _ABSENT not in states:
            return states
        missing = [p._data for p, s in zip(params, states, strict=True) if s is _ABSENT]
        fresh = iter(init_states(self._tx(group), missing))
        return [next(fresh) if s is _ABSENT else s for s in states]

    @no_grad()
    def step(self, closure: Any = None) -> Any:
        for future in getattr(self, "_warming", None) or ():
            _warm.wait(future)
        self._warming = ()
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        view = self._state_view
        if view.held():  # dicts handed out by `state`: load the edited ones back
            view.sync()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            plan = self._plan(group)
            tx, hyper = self._settings(plan)
            with x64(True):
                states = self._states(group, params)
                arrays = [p._value() for p in params]
                grads = [p.grad._value() for p in params]
                if group.get("maximize"):  # torch: ascend, the gradient negated first
                    grads = [-g for g in grads]
                # The states the last step stored, untouched since: shared, their
                # array leaves the ones that step's program returned.
                last, rest = plan.stored, plan.rest
                if len(last) != len(states) or not all(map(is_, last, states)):
                    rest = None
                    if all(a.ndim for a in arrays) and _shares_scalars(states):
                        rest = [_arrays(s) for s in states[1:]]
                if rest is not None:
                    new_arrays, first, rest = _update_shared_jit(
                        arrays, grads, states[0], rest, hyper, tx=tx
                    )
                    first = self._settle(group, first, states[0])
                    new_states = _restored(first, rest, states)
                else:
                    new_arrays, new_states = _update_jit(
                        arrays, grads, states, hyper, tx=tx
                    )
                    new_states = [
                        self._settle(group, with_hyper(s, old.hyperparams), old)
                        for s, old in zip(new_states, states, strict=True)
                    ]
            for p, a, s in zip(params, new_arrays, new_states, strict=True):
                p._set_data(a)
                self._optax_states[p] = s
            plan.stored, plan.rest = (() if rest is None else tuple(new_states)), rest
            if view.held() and "_traced_derived" not in self.__dict__:
                view.stepped(params, group)  # not inside torch.compile's trace
        lazy.step_end()
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


# torch's global optimizer hooks (on every optimizer at once): importable, as a
# script's imports must be; a call says why it is refused
_GLOBAL_HOOKS = (
    "global optimizer hooks are not implemented: register the hook on each "
    "optimizer (Optimizer.register_step_pre_hook...)"
)
register_optimizer_step_pre_hook = _not_offered.refused(
    "torch.optim.optimizer.register_optimizer_step_pre_hook", _GLOBAL_HOOKS
)
register_optimizer_step_post_hook = _not_offered.refused(
    "torch.optim.optimizer.register_optimizer_step_post_hook", _GLOBAL_HOOKS
)
