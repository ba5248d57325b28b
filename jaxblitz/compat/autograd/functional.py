"""Blitz 2, "autograd" (higher-level API): ``torch.autograd.functional`` --
``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp`` -- refused by name.

They are not implemented: ``torch.autograd.grad`` computes the same products on
compat's tape (a vector-Jacobian product directly; Hessian-vector products and
Jacobian-vector products with ``create_graph=True``), and ``jax.jacrev`` /
``jax.hessian`` take ``jaxblitz.compat.functional(model)``'s ``apply_fn``.
"""

from __future__ import annotations

from jaxblitz.compat._not_offered import refused

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_INSTEAD = (
    "not implemented; torch.autograd.grad computes the same products on compat's "
    "tape (with create_graph=True for second derivatives), and jax.jacrev or "
    "jax.hessian take jaxblitz.compat.functional(model)'s apply_fn"
)

hessian = refused("torch.autograd.functional.hessian", _INSTEAD)
hvp = refused("torch.autograd.functional.hvp", _INSTEAD)
jacobian = refused("torch.autograd.functional.jacobian", _INSTEAD)
jvp = refused("torch.autograd.functional.jvp", _INSTEAD)
vhp = refused("torch.autograd.functional.vhp", _INSTEAD)
vjp = refused("torch.autograd.functional.vjp", _INSTEAD)
