"""Blitz 2, "autograd" (function transforms): ``torch.func`` -- ``vmap``, ``grad``,
``jacrev``, ``functional_call``, ``stack_module_state`` ... -- each refused by
name when called.

torch.func transforms a function of torch tensors by running it on batched or
dual tensors. compat's tensors are handles on JAX arrays with a tape for
``backward()``; the transforms would need a second tracing path through every op,
and JAX already has them: ``torch.functional(model)`` gives ``(params,
apply_fn)``, pure JAX, for ``jax.vmap``, ``jax.grad``, ``jax.jacrev`` and
``jax.jvp``. ``torch.vmap`` is this module's ``vmap``.
"""

from __future__ import annotations

from jaxblitz.compat._not_offered import refused

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]

_INSTEAD = (
    "compat has no function transforms; jaxblitz.compat.functional(model) gives "
    "(params, apply_fn) in pure JAX, for jax.vmap, jax.grad, jax.jacrev and jax.jvp "
    "(per-sample gradients: jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))"
)

debug_unwrap = refused("torch.func.debug_unwrap", _INSTEAD)
functional_call = refused("torch.func.functional_call", _INSTEAD)
functionalize = refused("torch.func.functionalize", _INSTEAD)
grad = refused("torch.func.grad", _INSTEAD)
grad_and_value = refused("torch.func.grad_and_value", _INSTEAD)
hessian = refused("torch.func.hessian", _INSTEAD)
jacfwd = refused("torch.func.jacfwd", _INSTEAD)
jacrev = refused("torch.func.jacrev", _INSTEAD)
jvp = refused("torch.func.jvp", _INSTEAD)
linearize = refused("torch.func.linearize", _INSTEAD)
rearrange = refused("torch.func.rearrange", _INSTEAD)
replace_all_batch_norm_modules_ = refused(
    "torch.func.replace_all_batch_norm_modules_", _INSTEAD
)
stack_module_state = refused("torch.func.stack_module_state", _INSTEAD)
vjp = refused("torch.func.vjp", _INSTEAD)
vmap = refused("torch.func.vmap", _INSTEAD)
