# ruff: noqa: E501 -- torch's messages, verbatim
"""Blitz 1, "Tensors": how torch refuses an ``out=`` tensor of another dtype,
per op (:mod:`._out` applies it). Structured kernels want the result's own
dtype (``exact``), TensorIterator ones any dtype the result casts to; each
message is the op's own, with ``{want}``/``{got}`` the result's and the out's
dtype names (``Float``) and ``{want_cpp}``/``{got_cpp}`` their C++ names
(``float``). A tuple gives one rule per result; for an op whose other
overload has one result (``max(input, other)``) that overload is elementwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Rule(NamedTuple):
    exact: bool  # the result's dtype only, else any it casts to
    message: str
    error: type = RuntimeError
    takes_dtype: bool = False  # computed in the out's dtype where none is given


CAST = Rule(False, "result type {want} can't be cast to the desired output type {got}")
EXACT = Rule(
    True, "Expected out tensor to have dtype {want_cpp}, but got {got_cpp} instead"
)
FOUND = Rule(True, "Found dtype {got} but expected {want}")
FACTORY = Rule(
    True, "dtype {want} does not match dtype of out parameter ({got})", takes_dtype=True
)
CAT = Rule(
    False,
    "torch.cat(): input types can't be cast to the desired output type {got}",
    TypeError,
)
SCALAR_TYPE = Rule(True, "expected scalar_type {want} but found {got}")
SCALAR_TYPE_ = Rule(True, "expected scalar type {want} but found {got}")
DOT = Rule(True, "result dtype {got} does not match input dtype {want}")


def _matmul(input: Any, other: Any, *args: Any) -> Rule:
    """matmul's words are its kernel's: dot's for two vectors, mm's else."""
    vectors = getattr(input, "ndim", 0) == 1 and getattr(other, "ndim", 0) == 1
    return DOT if vectors else EXACT


# sum, cumsum...: torch computes in the out's dtype (sum of 0.6 and 0.6 into a
# long out is 0)
REDUCED = EXACT._replace(takes_dtype=True)

RULES: dict[str, Rule | tuple[Rule, ...] | Callable[..., Rule]] = {
    "abs": FOUND,
    "acos": CAST,
    "acosh": CAST,
    "add": CAST,
    "addbmm": Rule(
        True, "self and mat2 must have the same dtype, but got {got} and {want}"
    ),
    "addcdiv": CAST,
    "addcmul": CAST,
    "addmm": EXACT,
    "addmv": EXACT,
    "addr": CAST,
    "alias_copy": EXACT,
    "amax": Rule(
        True,
        "Expected the dtype for input and out to match, but got {want} for input's dtype and {got} for out's dtype.",
    ),
    "amin": Rule(
        True,
        "Expected the dtype for input and out to match, but got {want} for input's dtype and {got} for out's dtype.",
    ),
    "aminmax": EXACT,
    "angle": CAST,
    "arange": FACTORY,
    "argmax": EXACT,
    "argmin": EXACT,
    "as_strided_copy": EXACT,
    "asin": CAST,
    "asinh": CAST,
    "atan": CAST,
    "atan2": CAST,
    "atanh": CAST,
    "baddbmm": EXACT,
    "bernoulli": CAST,
    "bmm": EXACT,
    "cat": CAT,
    "ceil": FOUND,
    "cholesky": Rule(
        False,
        "cholesky: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "cholesky_inverse": Rule(
        False,
        "cholesky_inverse: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "cholesky_solve": Rule(
        False,
        "cholesky_solve: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "clamp": CAST,
    "clamp_max": CAST,
    "clamp_min": CAST,
    "column_stack": CAT,
    "conj_physical": FOUND,
    "copysign": CAST,
    "cos": CAST,
    "cosh": CAST,
    "cross": EXACT,
    "cummax": SCALAR_TYPE,
    "cummin": SCALAR_TYPE,
    "deg2rad": CAST,
    "diag": EXACT,
    "diagonal_copy": EXACT,
    "diff": SCALAR_TYPE,
    "digamma": CAST,
    "dot": DOT,
    "dstack": CAT,
    "empty": FACTORY,
    "erf": CAST,
    "erfc": CAST,
    "erfinv": CAST,
    "exp": CAST,
    "exp2": CAST,
    "expand_copy": EXACT,
    "expm1": CAST,
    "eye": FACTORY,
    "floor": FOUND,
    "floor_divide": CAST,
    "fmax": CAST,
    "fmin": CAST,
    "fmod": CAST,
    "frac": FOUND,
    "frexp": (
        Rule(
            True,
            "torch.frexp() expects mantissa to have dtype {want_cpp} but got {got_cpp}",
        ),
        Rule(
            True,
            "torch.frexp() expects exponent to have {want_cpp} dtype but got {got_cpp}",
        ),
    ),
    "full": FACTORY,
    "gather": EXACT,
    "geqrf": (
        Rule(
            False,
            "torch.geqrf: Expected a to be safely castable from {want} dtype, but got a with dtype {got}",
        ),
        Rule(
            False,
            "torch.geqrf: Expected tau to be safely castable from {want} dtype, but got tau with dtype {got}",
        ),
    ),
    "heaviside": Rule(
        True, "heaviside is not yet implemented for tensors with different dtypes."
    ),
    "histc": Rule(
        True,
        "torch.histogram: input tensor and hist tensor should have the same dtype, but got input {want_cpp} and hist {got_cpp}",
    ),
    "histogram": (
        Rule(
            True,
            "torch.histogram: input tensor and hist tensor should have the same dtype, but got input {want_cpp} and hist {got_cpp}",
        ),
        Rule(
            True,
            "torch.histogram: input tensor and bin_edges tensor should have the same dtype, but got input {want_cpp} and bin_edges {got_cpp} for dimension 0",
        ),
    ),
    "hstack": CAT,
    "hypot": CAST,
    "i0": CAST,
    "igamma": CAST,
    "igammac": CAST,
    "index_add": EXACT,
    "index_copy": EXACT,
    "index_select": Rule(
        True, "index_select(): self and result must have the same scalar type"
    ),
    "inner": Rule(
        True,
        "tensordot: Expected the output tensor to have dtype {want}, but got an output tensor with dtype {got}",
    ),
    "kron": CAST,
    "kthvalue": (
        Rule(True, "output values must be of same type as input"),
        Rule(True, "output indices must be of scalar type {want}"),
    ),
    "ldexp": Rule(False, "ldexp can't be cast to the desired output type {got}"),
    "lerp": CAST,
    "lgamma": CAST,
    "linalg.cholesky": EXACT,
    "linalg.cholesky_ex": EXACT,
    "linalg.cond": Rule(
        False,
        "linalg.cond: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.cross": EXACT,
    "linalg.det": EXACT,
    "linalg.eigh": EXACT,
    "linalg.eigvalsh": EXACT,
    "linalg.householder_product": Rule(
        False,
        "torch.linalg.householder_product: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.inv": EXACT,
    "linalg.inv_ex": EXACT,
    "linalg.ldl_factor": EXACT,
    "linalg.ldl_factor_ex": EXACT,
    "linalg.ldl_solve": EXACT,
    "linalg.lstsq": (
        Rule(
            False,
            "torch.linalg.lstsq: Expected solution to be safely castable from {want} dtype, but got solution with dtype {got}",
        ),
        Rule(
            False,
            "torch.linalg.lstsq: Expected solution to be safely castable from {want} dtype, but got solution with dtype {got}",
        ),
        CAST,
        Rule(
            False,
            "torch.linalg.lstsq: Expected singular_values to be safely castable from {want} dtype, but got singular_values with dtype {got}",
        ),
    ),
    "linalg.lu": EXACT,
    "linalg.lu_factor": EXACT,
    "linalg.lu_factor_ex": EXACT,
    "linalg.lu_solve": EXACT,
    "linalg.matrix_norm": Rule(
        True, "linalg.matrix_norm expected out tensor dtype {want} but got: {got}"
    ),
    "linalg.matrix_power": Rule(
        False,
        "matrix_power: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.matrix_rank": CAST,
    "linalg.multi_dot": Rule(
        True,
        "multi_dot(): expected out tensor to have dtype {want_cpp} but got {got_cpp}",
    ),
    "linalg.norm": Rule(
        True, "linalg.norm expected out tensor dtype {want} but got: {got}"
    ),
    "linalg.pinv": Rule(
        False,
        "linalg.pinv: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.qr": EXACT,
    "linalg.slogdet": EXACT,
    "linalg.solve": EXACT,
    "linalg.solve_ex": EXACT,
    "linalg.solve_triangular": SCALAR_TYPE_,
    "linalg.svd": EXACT,
    "linalg.svdvals": EXACT,
    "linalg.tensorinv": Rule(
        False,
        "tensorinv: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.tensorsolve": Rule(
        False,
        "tensorsolve: Expected result to be safely castable from {want} dtype, but got result with dtype {got}",
    ),
    "linalg.vecdot": Rule(
        True, "linalg.vecdot: Expected out of dtype{want} but found {got}"
    ),
    "linalg.vector_norm": EXACT,
    "linspace": FACTORY,
    "log": CAST,
    "log10": CAST,
    "log1p": CAST,
    "log2": CAST,
    "log_softmax": EXACT,
    "logaddexp": CAST,
    "logaddexp2": CAST,
    "logcumsumexp": SCALAR_TYPE,
    "logit": CAST,
    "logspace": FACTORY,
    "logsumexp": Rule(
        False,
        "logsumexp(): Expected floating point type for result tensor, but got: {got}",
    ),
    "lu": CAST,
    "lu_solve": EXACT,
    "lu_unpack": EXACT,
    "masked_select": Rule(
        True, "masked_select(): self and result must have the same scalar type"
    ),
    "matmul": _matmul,
    "maximum": CAST,
    # (torch.mean(input) without a dim refuses as "mean.dtype_out(): input types...")
    "mean": CAST,
    "minimum": CAST,
    "mm": EXACT,
    "mode": (
        Rule(True, "expected scalar type '{want}' but got '{got}' for values output"),
        Rule(True, "expected scalar type '{want}' but got '{got}' for indices output"),
    ),
    "msort": EXACT,
    "mul": CAST,
    "multinomial": Rule(True, "multinomial expects {want} tensor out, got: {got}"),
    "mv": Rule(
        True,
        "addmv input tensors must have the same dtype, but got {got}, {want}, and {want}",
    ),
    "nan_to_num": Rule(
        True, "nan_to_num: dtype of out: {got} should be same as input: {want}"
    ),
    "nanquantile": Rule(
        True, "quantile() out tensor must be same dtype as the input tensor"
    ),
    "narrow_copy": Rule(
        True,
        "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
    ),
    "neg": FOUND,
    "nextafter": CAST,
    "nn.functional.avg_pool2d": EXACT,
    "nn.functional.avg_pool3d": EXACT,
    "nn.functional.gelu": FOUND,
    "nn.functional.hardshrink": FOUND,
    "nn.functional.linear": EXACT,
    "nn.functional.logsigmoid": SCALAR_TYPE_,
    "nn.functional.normalize": CAST,
    "nn.functional.softplus": FOUND,
    "nn.functional.softshrink": FOUND,
    "nonzero": Rule(
        True,
        "nonzero: Expected out tensor to have scalar type {want} but got scalar type{got}",
    ),
    "norm": EXACT,
    "ones": FACTORY,
    "ormqr": Rule(
        True,
        "torch.ormqr: Expected input and result to have the same dtype, but input has dtype{want} and result has dtype {got}",
    ),
    "outer": CAST,
    "permute_copy": EXACT,
    "pow": CAST,
    "qr": EXACT,
    "quantile": Rule(
        True, "quantile() out tensor must be same dtype as the input tensor"
    ),
    "rad2deg": CAST,
    "randn": FACTORY,
    "reciprocal": CAST,
    "remainder": CAST,
    "renorm": EXACT,
    "round": FOUND,
    "rsqrt": CAST,
    "scatter": EXACT,
    "scatter_add": EXACT,
    "sgn": FOUND,
    "sigmoid": CAST,
    "sign": FOUND,
    "sin": CAST,
    "sinc": CAST,
    "sinh": CAST,
    "slice_scatter": EXACT,
    "softmax": EXACT,
    "sort": EXACT,
    "special.airy_ai": CAST,
    "special.bessel_j0": CAST,
    "special.bessel_j1": CAST,
    "special.bessel_y0": CAST,
    "special.bessel_y1": CAST,
    "special.chebyshev_polynomial_t": CAST,
    "special.chebyshev_polynomial_u": CAST,
    "special.chebyshev_polynomial_v": CAST,
    "special.chebyshev_polynomial_w": CAST,
    "special.entr": CAST,
    "special.erfcx": CAST,
    "special.hermite_polynomial_h": CAST,
    "special.hermite_polynomial_he": CAST,
    "special.i0e": CAST,
    "special.i1": CAST,
    "special.i1e": CAST,
    "special.laguerre_polynomial_l": CAST,
    "special.legendre_polynomial_p": CAST,
    "special.log_ndtr": CAST,
    "special.modified_bessel_i0": CAST,
    "special.modified_bessel_i1": CAST,
    "special.modified_bessel_k0": CAST,
    "special.modified_bessel_k1": CAST,
    "special.ndtr": CAST,
    "special.ndtri": CAST,
    "special.scaled_modified_bessel_k0": CAST,
    "special.scaled_modified_bessel_k1": CAST,
    "special.shifted_chebyshev_polynomial_t": CAST,
    "special.shifted_chebyshev_polynomial_u": CAST,
    "special.shifted_chebyshev_polynomial_v": CAST,
    "special.shifted_chebyshev_polynomial_w": CAST,
    "special.spherical_bessel_j0": CAST,
    "special.xlog1py": CAST,
    "special.zeta": CAST,
    "split_with_sizes_copy": EXACT,
    "sqrt": CAST,
    "square": CAST,
    "squeeze_copy": EXACT,
    "stack": CAT,
    "std": CAST,
    "sub": CAST,
    "svd": EXACT,
    "t_copy": EXACT,
    "take": Rule(
        True,
        "take(): self and out expected to have the same dtype, but got self.dtype = {want} and out.dtype = {got}",
    ),
    "take_along_dim": EXACT,
    "tan": CAST,
    "tanh": CAST,
    "tensordot": Rule(
        True,
        "tensordot: Expected the output tensor to have dtype {want}, but got an output tensor with dtype {got}",
    ),
    "topk": EXACT,
    "transpose_copy": EXACT,
    "triangular_solve": EXACT,
    "tril": EXACT,
    "triu": EXACT,
    "true_divide": CAST,
    "trunc": FOUND,
    "unbind_copy": EXACT,
    "unfold_copy": EXACT,
    "unsqueeze_copy": EXACT,
    "var": CAST,
    "vdot": DOT,
    "view_copy": EXACT,
    "vstack": CAT,
    "where": Rule(True, "Expected out type to be {want} but got {got}"),
    "xlogy": CAST,
    "zeros": FACTORY,
    "max": (EXACT, EXACT),
    "min": (EXACT, EXACT),
    "median": (EXACT, EXACT),
    "nanmedian": (EXACT, EXACT),
    "sum": REDUCED,
    "prod": REDUCED,
    "cumsum": REDUCED,
    "cumprod": REDUCED,
    "rand": FACTORY,
    "randint": FACTORY,
    # results of dtype bool (comparisons, logic, tests)
    "eq": CAST,
    "ne": CAST,
    "lt": CAST,
    "le": CAST,
    "gt": CAST,
    "ge": CAST,
    "logical_and": CAST,
    "logical_or": CAST,
    "logical_xor": CAST,
    "logical_not": CAST,
    "isin": EXACT,
    "isposinf": Rule(True, "isposinf does not support non-boolean outputs."),
    "isneginf": Rule(True, "isneginf does not support non-boolean outputs."),
    "signbit": Rule(True, "signbit does not support non-boolean outputs."),
    "all": Rule(True, "all only supports bool tensor for result, got: {got}"),
    "any": Rule(True, "any only supports bool tensor for result, got: {got}"),
    # integer ops, and factories of a default dtype, OpInfo lacks samples of
    "bitwise_and": CAST,
    "bitwise_or": CAST,
    "bitwise_xor": CAST,
    "bitwise_not": CAST,
    "bitwise_left_shift": CAST,
    "bitwise_right_shift": CAST,
    "gcd": CAST,
    "lcm": CAST,
    "randperm": FACTORY,
    "range": FACTORY,
    # OpInfo variants
    "div": CAST,
    "polygamma": CAST,
    "mvlgamma": CAST,
    "nanmean": CAST,
    "nansum": CAST,
    "scatter_reduce": EXACT,
    "index_reduce": EXACT,
    "normal": CAST,
    "float_power": Rule(
        True,
        "the output given to float_power has dtype {got} but the operation's "
        "result requires dtype {want}",
    ),
}

# torch's other names of these ops: the same rule, and the op's own name in the
# autograd refusal (torch.true_divide refuses as "div()")
ALIASES = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctan2": "atan2",
    "arctanh": "atanh",
    "clip": "clamp",
    "concat": "cat",
    "concatenate": "cat",
    "divide": "div",
    "fix": "trunc",
    "ger": "outer",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "multiply": "mul",
    "negative": "neg",
    "not_equal": "ne",
    "row_stack": "vstack",
    "subtract": "sub",
    "true_divide": "div",
    "det": "linalg.det",
    "inverse": "linalg.inv",
    "matrix_power": "linalg.matrix_power",
    "orgqr": "linalg.householder_product",
    "linalg.matmul": "matmul",
    "special.digamma": "digamma",
    "special.erf": "erf",
    "special.erfc": "erfc",
    "special.erfinv": "erfinv",
    "special.exp2": "exp2",
    "special.expit": "sigmoid",
    "special.expm1": "expm1",
    "special.gammainc": "igamma",
    "special.gammaincc": "igammac",
    "special.gammaln": "lgamma",
    "special.i0": "i0",
    "special.log1p": "log1p",
    "special.logit": "logit",
    "special.logsumexp": "logsumexp",
    "special.multigammaln": "mvlgamma",
    "special.polygamma": "polygamma",
    "special.psi": "digamma",
    "special.round": "round",
    "special.sinc": "sinc",
    "special.xlogy": "xlogy",
}
