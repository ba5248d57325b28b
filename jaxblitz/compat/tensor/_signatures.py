"""Tensors (Blitz 1): the signatures torch's parser lists when a call matches
none of an overloaded function's, copied from torch's own messages."""

_FACTORY_KWARGS = (  # the keywords every factory takes
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False"
)
# rand, randn
DRAW_OPTIONS = (
    f"(tuple of ints size, *, torch.Generator generator, {_FACTORY_KWARGS})",
    f"(tuple of ints size, *, {_FACTORY_KWARGS})",
)
_FACTORY = "*, " + _FACTORY_KWARGS
EYE_OPTIONS = (f"(int n, {_FACTORY})", f"(int n, int m, {_FACTORY})")
ARANGE_OPTIONS = (
    f"(Number end, {_FACTORY})",
    "(Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = "
    "None, torch.device device = None, bool pin_memory = False, bool requires_grad "
    "= False)",
    f"(Number start, Number end, Number step = 1, {_FACTORY})",
)
LINSPACE_OPTIONS = tuple(
    f"({a} start, {b} end, int steps, {_FACTORY})"
    for a, b in (
        ("Tensor", "Tensor"),
        ("Number", "Tensor"),
        ("Tensor", "Number"),
        ("Number", "Number"),
    )
)
_TO_TAIL = (
    "bool non_blocking = False, bool copy = False, *, torch.memory_format "
    "memory_format = None)"
)
TO_OPTIONS = (
    f"(torch.device device = None, torch.dtype dtype = None, {_TO_TAIL}",
    f"(torch.dtype dtype, {_TO_TAIL}",
    f"(Tensor tensor, {_TO_TAIL}",
)
DEVICE_OPTIONS = ("(torch.device device)", "(str type, int index = -1)")
REDUCE_OPTIONS = (
    "(*, torch.dtype dtype = None)",
    "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)",
)
# Tensor.max and Tensor.min
MAX_OPTIONS = ("()", "(Tensor other)", "(int dim, bool keepdim = False)")
VIEW_OPTIONS = ("(torch.dtype dtype)", "(tuple of ints size)")
NEW_OPTIONS = (
    "(*, torch.device device = None)",
    "(torch.Storage storage)",
    "(Tensor other)",
    "(tuple of ints size, *, torch.device device = None)",
    "(object data, *, torch.device device = None)",
)
