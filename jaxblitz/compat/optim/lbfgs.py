"""Blitz 3/4 (update the weights): ``torch.optim.LBFGS``, limited-memory BFGS
with an optional strong-Wolfe line search.

Optax's ``lbfgs`` takes a value-and-gradient function and runs its own
zoom line search; torch's takes a ``closure`` that re-evaluates the model, keeps
its curvature pairs across ``step()`` calls and searches with minFunc's rules.
This is torch's algorithm step for step on compat tensors (its decisions are
host-side comparisons of scalars, as in torch), so ``state_dict()`` holds what
torch's holds: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``.
The curvature pairs alone are kept otherwise, in fixed-size buffers
(:mod:`._lbfgs_history`): torch's lists of them are filled in when the state is
read, and at the end of every step once it was read, so a state (or list) held
across steps is live, as torch's, which its steps change in place, are. As
torch's, a ``history_size`` lowered below the pairs held lets the lists grow past
it, and one changed after ``al`` was made ends in torch's ``IndexError`` once the
pairs outnumber ``al``'s entries.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from jaxblitz.compat.autograd.grad_mode import enable_grad, no_grad
from jaxblitz.compat.ops._arith import mul
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.optim import _optim_state
from jaxblitz.compat.optim._lbfgs_history import History
from jaxblitz.compat.optim.optimizer import Optimizer, _check, _check_tensor
from jaxblitz.compat.tensor._tensor_base import TensorBase


def _scalar(value: Any) -> Any:
    """A Python number (torch reads a 0-dim tensor's item)."""
    return float(value) if isinstance(value, TensorBase) else value


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through two points and their slopes, in
    ``bounds`` (torch's ``_cubic_interpolate``)."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(
    obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25
):
    """torch's ``_strong_wolfe``: bracket, then zoom (minFunc's ``WolfeLineSearch``)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0],
            bracket_f[0],
            bracket_gtd[0],
            bracket[1],
            bracket_f[1],
            bracket_gtd[1],
        )
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """``torch.optim.LBFGS``: one param group; ``step(closure)`` re-evaluates
    the model as often as its iterations and line search need."""

    # torch's state as it is: a dict kept with the first parameter, no Optax state;
    # its history lists filled in from the buffers when it is read
    @property  # type: ignore[override]
    def state(self) -> dict[Any, Any]:
        history = self.__dict__.get("_history")
        if history is not None:
            history.export()
        self._handed_out = True  # held from now on: each step refreshes its lists
        return self._raw_state()

    def _raw_state(self) -> dict[Any, Any]:
        return self.__dict__.setdefault("_lbfgs_state", collections.defaultdict(dict))

    @state.setter
    def state(self, value: Any) -> None:
        self._lbfgs_state = value
        self._history = None  # the buffers go with the state they were of

    def __init__(
        self,
        params: Any,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ):
        _check_tensor("lr", lr)
        _check(lr, 0.0, f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(
            params,
            dict(  # torch's keys, in torch's order
                lr=lr,
                max_iter=max_iter,
                max_eval=max_eval,
                tolerance_grad=tolerance_grad,
                tolerance_change=tolerance_change,
                history_size=history_size,
                line_search_fn=line_search_fn,
            ),
        )
        if len(self.param_groups) != 1:
            raise ValueError(
                "LBFGS doesn't support per-parameter options (parameter groups)"
            )
        self._params = self.param_groups[0]["params"]

    def _warm_up(self, group: dict[str, Any]) -> None:
        return None  # no update program: the steps are tensor ops

    def _gather_flat_grad(self) -> TensorBase:
        views = [
            p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
            for p in self._params
        ]
        return cat(views, 0)

    def _add_grad(self, step_size: Any, update: TensorBase) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            piece = update[offset : offset + numel].view_as(p)
            p.add_(piece * step_size)  # torch: alpha=step_size
            offset += numel

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, pdata in zip(self._params, x, strict=True):
            p.copy_(pdata)
        return loss, flat_grad

    @no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # torch keeps the whole state with the first parameter
        state = self._raw_state().setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        opt_cond = flat_grad.abs().max() <= tolerance_grad
        if opt_cond:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        history = self._history_of(state, history_size)
        H_diag = state.get("H_diag")  # noqa: N806 -- torch's
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                history = self._history = History(history_size)
                H_diag = 1  # noqa: N806
            else:  # the L-BFGS update, then the two-loop recursion
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    history.push(y, s, 1.0 / ys, history_size)
                    H_diag = ys / y.dot(y)  # noqa: N806
                if "al" not in state:
                    state["al"] = history.make_al(history_size)
                al = state["al"]
                if history.count > (
                    list.__len__(al) if isinstance(al, list) else len(al)
                ):
                    # torch's al[i] = ... for the newest pair, past al's end (its
                    # history_size changed after al was made)
                    raise IndexError("list assignment index out of range")
                if history.count:  # the two-loop recursion, one call
                    d = history.direction(flat_grad, H_diag)
                else:
                    d = mul(flat_grad.neg(), H_diag)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals,
                )  # fmt: skip
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # re-evaluate, unless this was the last
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # no progress
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        old_dirs, old_stps, ro, _ = history.lists
        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=H_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        if self.__dict__.get("_handed_out"):  # torch's lists, changed in place
            history.export()
        return orig_loss

    def _history_of(self, state: dict, history_size: int) -> History:
        """The buffers of the history ``state`` holds: those of the last step,
        unless its lists are others (a loaded state), written to, or too few
        rows."""
        history = self.__dict__.get("_history")
        if history is not None and history.held_by(state):
            if history.size >= history_size:
                return history
            history.export()
        self._history = History.adopt(state, history_size)
        return self._history

    def state_dict(self) -> dict[str, Any]:
        """torch's structure; the state (one entry, the first parameter's) is
        the live dict, as torch's is."""
        state = self.state
        out = _optim_state.state_dict(self)  # param groups (no Optax states)
        index = {id(p): i for i, p in enumerate(self._params)}
        out["state"] = {index[id(p)]: s for p, s in state.items()}
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        _optim_state.load_state_dict(self, {**state_dict, "state": {}})
        self._history = None  # made from the loaded lists at the next step
        self._params = self.param_groups[0]["params"]
        groups = state_dict["param_groups"]
        by_id = dict(zip(groups[0]["params"], self._params, strict=True))
        for k, v in state_dict["state"].items():  # torch's cast: tensors kept
            if k in by_id:
                self.state[by_id[k]] = _optim_state._cast(by_id[k], v, groups, k)
