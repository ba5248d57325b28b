"""Eager mode's speed-ups, behind one switch (``JAXBLITZ_WARM=0`` turns
them off): background warm-up compiles of the backward (:mod:`._warm`), the
fused backward replay (:mod:`._fused`) and host-side evaluation of constant
programs (:mod:`._host_eval`). Lazy execution (:mod:`jaxblitz.compat.lazy`)
needs none of them: a lazy step is one program."""
