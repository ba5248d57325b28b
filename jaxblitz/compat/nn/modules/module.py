"""``torch.nn.modules.module``: torch's implementation module, for the
scripts that import from it; the classes are compat's ``torch.nn``'s."""

from jaxblitz.compat import _not_offered
from jaxblitz.compat.nn.container import (
    _addindent,
)
from jaxblitz.compat.nn.module import (
    Module,
    _IncompatibleKeys,
)

__all__ = [
    "Module",
]

# torch's global hooks (on every module at once) are not implemented
__getattr__ = _not_offered.refuser(
    __name__,
    "torch.nn.modules.module",
    _not_offered.each(
        """register_module_forward_pre_hook register_module_forward_hook
        register_module_full_backward_pre_hook register_module_backward_hook
        register_module_full_backward_hook register_module_buffer_registration_hook
        register_module_module_registration_hook
        register_module_parameter_registration_hook""",
        "global module hooks are not implemented: register the hook on each "
        "module (Module.register_forward_hook...)",
    ),
)
