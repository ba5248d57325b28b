"""compat's dtype promotion and math against real PyTorch (skipped without it).

``result_type``/``promote_types``/``can_cast`` over every pair of operand kinds
(tensors with dims, 0-dim tensors, Python and NumPy numbers) and dtypes, with the
default dtype float32 and float64; then each op over a grid of dtypes and operand
kinds: the same result dtype, the same values (exact for integers and bool, a
tolerance per float dtype) or the same error type.

The grids run with ``jax.disable_jit()``: every case is a new dtype signature, and
compiling each (about 50 ms) would take minutes, while eager JAX reuses one small
program per primitive. What is under test -- the dtype compat picks and the pure
function it runs -- is the same code; a sample of each grid also runs jitted.
"""

import contextlib

import jax
import numpy as np
import pytest

import jaxblitz.compat as torch
from jaxblitz.compat.compile import CompileError

pt = pytest.importorskip("torch")

INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
DTYPES = ("bool", *INTS, *FLOATS)
# Values exact in every dtype (bfloat16 too), and no zero but in bool: integer
# division by a bool tensor takes the ZeroDivisionError path.
VALUES = {
    "bool": [True, False, True, True],
    "uint8": [7, 2, 3, 250],
    "signed": [-7, -2, 3, 5],
    "float": [-2.5, -0.75, 1.5, 3.25],
}
ZERO_DIM = {"bool": True, "uint8": 3, "signed": -2, "float": -1.5}
NUMBERS = (True, 3, -2.5)
NUMPY_NUMBERS = (np.bool_(True), np.int64(2), np.float32(0.5))
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-10}
JITTED_PER_GRID = 2  # cases of each grid also run jitted


def _family(name: str) -> str:
    if name in ("bool", "uint8"):
        return name
    return "float" if "float" in name else "signed"


def _pair(name: str, zero_dim: bool = False, values=None):
    """The same tensor in compat and in torch."""
    if values is None:
        family = _family(name)
        values = ZERO_DIM[family] if zero_dim else VALUES[family]
    ours = torch.tensor(values, dtype=getattr(torch, name))
    return ours, pt.tensor(values, dtype=getattr(pt, name))


TENSORS = {(d, z): _pair(d, z) for d in DTYPES for z in (False, True)}


def _operands(kind: str):
    """(label, compat operand, torch operand) for each operand of one kind."""
    if kind in ("dim", "0-dim"):
        for d in DTYPES:
            ours, theirs = TENSORS[d, kind == "0-dim"]
            yield f"{kind} {d}", ours, theirs
    elif kind == "number":
        for v in NUMBERS:
            yield repr(v), v, v
    else:
        for v in NUMPY_NUMBERS:
            yield f"np.{type(v).__name__}({v})", v, v


def _pairs(left_kinds, right_kinds):
    for lk in left_kinds:
        for rk in right_kinds:
            for la, lo, lt in _operands(lk):
                for ra, ro, rt in _operands(rk):
                    yield f"{la}, {ra}", (lo, ro), (lt, rt)


def _singles(kinds=("dim", "0-dim"), zero_dim=DTYPES):
    for kind in kinds:
        for label, ours, theirs in _operands(kind):
            if kind == "dim" or label.split()[-1] in zero_dim:
                yield label, (ours,), (theirs,)


def _name(d) -> str:
    return str(d).removeprefix("torch.")


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as error:  # noqa: BLE001 -- the error is the outcome
        return error


def _difference(ours, theirs) -> str | None:
    """Why ``ours`` (compat) is not ``theirs`` (torch), or None."""
    if isinstance(theirs, Exception):
        kinds = (NotImplementedError, TypeError, ValueError, RuntimeError, Exception)
        kind = next(k for k in kinds if isinstance(theirs, k))
        if isinstance(ours, kind) and not (
            kind is RuntimeError and isinstance(ours, NotImplementedError)
        ):
            return None
        got = repr(ours) if isinstance(ours, Exception) else f"a {ours.dtype} result"
        return f"torch raised {theirs!r}, compat gave {got}"
    if isinstance(ours, Exception):
        return f"compat raised {ours!r}, torch gave {theirs.dtype}"
    if _name(ours.dtype) != _name(theirs.dtype):
        return f"dtype {ours.dtype}, torch {theirs.dtype}"
    if tuple(ours.shape) != tuple(theirs.shape):
        return f"shape {tuple(ours.shape)}, torch {tuple(theirs.shape)}"
    name = _name(theirs.dtype)
    expected = theirs.detach()
    expected = expected.to(pt.float64 if name in TOLERANCE else expected.dtype).numpy()
    got = np.asarray(ours.detach()).astype(expected.dtype)
    if name in TOLERANCE:
        tol = TOLERANCE[name]
        same = np.isclose(got, expected, rtol=tol, atol=tol, equal_nan=True).all()
        same = same and (np.signbit(got) == np.signbit(expected))[got == 0].all()
    else:
        same = np.array_equal(got, expected)
    return None if same else f"values {got.tolist()}, torch {expected.tolist()}"


def _check_grid(op, cases) -> None:
    """``op(module, *operands)`` on both libraries, for every case; a sample jitted."""
    cases = list(cases)
    failures = []
    with jax.disable_jit():
        for label, ours, theirs in cases:
            why = _difference(_outcome(op, torch, *ours), _outcome(op, pt, *theirs))
            if why:
                failures.append(f"{label}: {why}")
    step = len(cases) / JITTED_PER_GRID
    for label, ours, theirs in (
        cases[int((i + 0.5) * step)] for i in range(JITTED_PER_GRID)
    ):
        why = _difference(_outcome(op, torch, *ours), _outcome(op, pt, *theirs))
        if why:
            failures.append(f"{label} (jitted): {why}")
    assert not failures, f"{len(failures)} differ:\n" + "\n".join(failures[:40])


@contextlib.contextmanager
def default_dtype(name: str):
    """Both libraries' default dtype set to ``name`` inside, restored after."""
    before = torch.get_default_dtype(), pt.get_default_dtype()
    torch.set_default_dtype(getattr(torch, name))
    pt.set_default_dtype(getattr(pt, name))
    try:
        yield
    finally:
        torch.set_default_dtype(before[0])
        pt.set_default_dtype(before[1])


# ---------------------------------------------------------------------------
# The promotion functions
# ---------------------------------------------------------------------------


def test_promote_types_and_can_cast_match_torch_for_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            ours = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert _name(ours) == _name(
                pt.promote_types(getattr(pt, a), getattr(pt, b))
            )
            ours = torch.can_cast(getattr(torch, a), getattr(torch, b))
            assert ours == pt.can_cast(getattr(pt, a), getattr(pt, b)), (a, b)


KINDS = ("dim", "0-dim", "number", "numpy")


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_matches_torch_over_every_pair_of_operand_kinds(default):
    with default_dtype(default):
        failures = []
        for label, ours, theirs in _pairs(KINDS, KINDS):
            got = _outcome(torch.result_type, *ours)
            expected = pt.result_type(*theirs)
            if isinstance(got, Exception) or _name(got) != _name(expected):
                failures.append(f"{label}: {got!r}, torch {expected}")
        assert not failures, "\n".join(failures[:40])


def test_the_known_bugs_of_issue_20_are_fixed():
    assert (torch.ones(3) ** torch.tensor([1, 2, 3])).dtype is torch.float32
    both = torch.tensor([True, False]) + torch.tensor([True, True])
    assert both.dtype is torch.bool and both.tolist() == [True, True]
    assert (
        torch.tensor([1], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8)
    ).dtype is torch.int16
    assert (
        torch.tensor([1]) + torch.tensor([1.0], dtype=torch.float16)
    ).dtype is torch.float16


def test_complex_numbers_are_refused_as_not_implemented():
    with pytest.raises(NotImplementedError, match="complex"):
        torch.ones(2) * 1j


# ---------------------------------------------------------------------------
# Binary ops
# ---------------------------------------------------------------------------

BINARY = {
    "add": lambda m, a, b: a + b,
    "add(alpha=2)": lambda m, a, b: m.add(a, b, alpha=2),
    "sub": lambda m, a, b: a - b,
    "sub(alpha=2)": lambda m, a, b: m.sub(a, b, alpha=2),
    "mul": lambda m, a, b: a * b,
    "truediv": lambda m, a, b: a / b,
    "div(trunc)": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div(floor)": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "floordiv": lambda m, a, b: a // b,
    "mod": lambda m, a, b: a % b,
    "fmod": lambda m, a, b: m.fmod(a, b),
    "pow": lambda m, a, b: a**b,
    "and": lambda m, a, b: a & b,
    "or": lambda m, a, b: a | b,
    "xor": lambda m, a, b: a ^ b,
    "lshift": lambda m, a, b: a << b,
    "rshift": lambda m, a, b: a >> b,
    "eq": lambda m, a, b: a == b,
    "ne": lambda m, a, b: a != b,
    "lt": lambda m, a, b: a < b,
    "ge": lambda m, a, b: a >= b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "logical_and": lambda m, a, b: m.logical_and(a, b),
    "logical_xor": lambda m, a, b: m.logical_xor(a, b),
}
# written as Python operators: also tried with the number or 0-dim tensor first
REFLECTED = {
    *("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"),
    *("and", "or", "xor", "lshift", "rshift", "eq", "ne", "lt", "ge"),
}


def _binary_cases(name):
    yield from _pairs(("dim",), ("dim", "0-dim", "number", "numpy"))
    if name in REFLECTED:  # 3 + x, np.float32(0.5) * x
        yield from _pairs(("number", "numpy"), ("dim",))


BROADCAST = {  # (2, 1) with (3,): every binary op broadcasts as torch
    d: (_pair(d, values=[[-2], [3]]), _pair(d, values=[1, -3, 2])) for d in DTYPES
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_matches_torch_over_the_dtype_grid(name):
    cases = list(_binary_cases(name))
    for d in ("uint8", "int64", "float32"):
        (a, ta), (b, tb) = BROADCAST[d]
        cases.append((f"broadcast {d}", (a, b), (ta, tb)))
    _check_grid(BINARY[name], cases)


@pytest.mark.parametrize("name", ["truediv", "pow", "lt"])
def test_binary_op_with_float64_default_dtype_matches_torch(name):
    with default_dtype("float64"):
        cases = _pairs(("dim",), ("number", "numpy"))
        _check_grid(BINARY[name], cases)


def test_integer_division_by_zero_raises_torchs_error():
    x = torch.tensor([5, -3])
    for divide in (
        lambda: x // 0,
        lambda: x % torch.tensor([1, 0]),
        lambda: torch.fmod(x, 0),
        lambda: torch.div(x, 0, rounding_mode="trunc"),
        lambda: torch.tensor([1], dtype=torch.uint8) // 256,  # 256 wraps to 0
    ):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            divide()
    assert (x / 0).tolist() == [float("inf"), float("-inf")]
    assert (torch.tensor([5.0]) // 0).tolist() == [float("inf")]


def test_floor_division_and_remainder_follow_python_fmod_the_dividend():
    a, b = [-7, 7, -7, 7], [2, -2, -2, 2]
    ours = torch.tensor(a), torch.tensor(b)
    assert (ours[0] // ours[1]).tolist() == [x // y for x, y in zip(a, b, strict=True)]
    assert (ours[0] % ours[1]).tolist() == [x % y for x, y in zip(a, b, strict=True)]
    assert torch.fmod(*ours).tolist() == [-1, 1, -1, 1]


def test_integer_pow_refuses_a_negative_number_exponent_as_torch():
    with pytest.raises(RuntimeError, match="negative integer powers"):
        torch.tensor([2]) ** -1
    base = torch.tensor([2, 1, -1, -1, 0, 3])
    exponent = torch.tensor([-1, -5, -3, -2, -1, 40])
    theirs = pt.tensor([2, 1, -1, -1, 0, 3]) ** pt.tensor([-1, -5, -3, -2, -1, 40])
    assert (base**exponent).tolist() == theirs.tolist()  # 3**40 wraps alike


def test_shifts_past_the_width_and_by_negative_amounts_match_torch():
    for dtype in ("uint8", "int8", "int32", "int64"):
        values = [-128, -1, 1, 100] if dtype != "uint8" else [255, 1, 2, 100]
        amounts = [-1, 0, 7, 8, 63, 64, 70, 200]
        for shift in ("lshift", "rshift"):
            op = BINARY[shift]
            x, y = _pair(dtype, values=values), _pair("int64", values=amounts[:4])
            z = _pair("int64", values=amounts[4:])
            for b in (y, z):
                theirs = op(pt, x[1], b[1])
                assert _difference(op(torch, x[0], b[0]), theirs) is None


def test_comparisons_cast_a_number_to_the_tensors_dtype_as_torch():
    x = torch.tensor([44, 255], dtype=torch.uint8)
    assert (x == 300).tolist() == [True, False]  # 300 wraps to 44 in uint8
    assert (x == -1).tolist() == [False, True]
    assert (torch.tensor([0.1], dtype=torch.float16) == 0.1).tolist() == [True]


def test_bool_subtraction_and_negation_are_refused_with_torchs_messages():
    t = torch.tensor([True])
    with pytest.raises(RuntimeError, match="with two bool tensors"):
        t - True
    with pytest.raises(RuntimeError, match="with a bool tensor"):
        torch.ones(1) - t
    with pytest.raises(RuntimeError, match="Negation, the `-` operator"):
        torch.neg(t)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
        ~torch.ones(1)


def test_integer_division_by_a_tensor_inside_compile_names_the_cause():
    def step(x, n):
        return x // n

    with pytest.raises(CompileError, match="integer division by a tensor"):
        torch.compile(step)(torch.tensor([5]), torch.tensor([2]))
    floats = torch.compile(step)(torch.tensor([5.0]), torch.tensor([2.0]))
    assert floats.tolist() == [2.0]


def test_operands_that_are_not_numbers_give_pythons_answers():
    x = torch.ones(2)
    with pytest.raises(TypeError):
        assert x @ 2
    assert (x == None) is False  # noqa: E711 -- the operator is what is tested
    assert (x != "a") is True
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        assert x < None


# ---------------------------------------------------------------------------
# Unary ops and reductions
# ---------------------------------------------------------------------------


def _method(name):
    return lambda m, a: getattr(a, name)()


UNARY = {
    name: _method(name)
    for group in (
        ("neg", "abs", "sign", "square", "positive", "relu", "reciprocal"),
        ("floor", "ceil", "round", "trunc", "frac", "sqrt", "rsqrt", "erf"),
        ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid"),
        ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh"),
        ("isnan", "isinf", "isfinite", "logical_not", "bitwise_not"),
    )
    for name in group
}
UNARY["invert"] = lambda m, a: ~a
UNARY["round(decimals=1)"] = lambda m, a: a.round(decimals=1)
UNARY["clamp(-1, 2)"] = lambda m, a: a.clamp(-1, 2)
UNARY["clamp(min=0.5)"] = lambda m, a: a.clamp(min=0.5)
UNARY["clamp_max(True)"] = lambda m, a: a.clamp_max(True)
UNARY["clamp(-300, 300)"] = lambda m, a: a.clamp(-300, 300)
UNARY["rtruediv"] = lambda m, a: 3 / a
UNARY["rpow"] = lambda m, a: 2**a


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op_matches_torch_over_the_dtypes(name):
    _check_grid(UNARY[name], _singles(("dim",)))  # 0-dim: the same code


def test_unary_ops_on_nan_inf_and_signed_zero_match_torch():
    specials = [float("nan"), float("-inf"), -0.0, float("inf")]
    cases = [(f, *_pair(f, values=specials)) for f in FLOATS]
    cases = [(label, (ours,), (theirs,)) for label, ours, theirs in cases]
    for name in ("sign", "floor", "round", "frac", "relu", "isinf", "abs", "rsqrt"):
        _check_grid(UNARY[name], cases)


REDUCTIONS = {
    "sum": lambda m, a: a.sum(),
    "sum(0)": lambda m, a: a.sum(0),
    "sum(dtype)": lambda m, a: a.sum(dtype=m.float64),
    "prod(dtype=bool)": lambda m, a: a.prod(0, dtype=m.bool),
    "prod": lambda m, a: a.prod(),
    "prod(0, keepdim)": lambda m, a: a.prod(0, keepdim=True),
    "mean": lambda m, a: a.mean(),
    "mean(dtype=int64)": lambda m, a: a.mean(dtype=m.int64),
    "cumsum": lambda m, a: a.cumsum(0),
    "cumprod": lambda m, a: a.cumprod(0),
    "std": lambda m, a: a.std(),
    "var(correction=0)": lambda m, a: a.var(0, correction=0),
    "var(False)": lambda m, a: a.var(False),
    "std(correction=5)": lambda m, a: a.std(correction=5),
    "logsumexp": lambda m, a: a.logsumexp(0),
    "max": lambda m, a: a.max(),
    "max(0)": lambda m, a: a.max(0).values,
    "amin": lambda m, a: a.amin(),
    "argmax": lambda m, a: a.argmax(),
    "argmin(0)": lambda m, a: a.argmin(0),
    "all": lambda m, a: a.all(),
    "any(0)": lambda m, a: a.any(0),
    "norm": lambda m, a: a.norm(),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_matches_torch_over_the_dtypes(name):
    _check_grid(REDUCTIONS[name], _singles(zero_dim=("bool", "int8", "bfloat16")))


def test_max_like_reductions_over_nothing_raise_torchs_errors():
    empty = _pair("float32", values=np.zeros((2, 0)).tolist())
    cases = [("(2, 0) float32", (empty[0],), (empty[1],))]
    for op in (
        lambda m, a: a.amax(),
        lambda m, a: a.amin(1),
        lambda m, a: a.max(),
        lambda m, a: a.max(1),
        lambda m, a: a.argmax(),
        lambda m, a: a.argmin(1),
    ):
        _check_grid(op, cases)
    assert torch.amax(empty[0], 0).shape == (0,)


def test_functions_refuse_numbers_where_torch_wants_a_tensor():
    x = torch.tensor([1, 2])
    for call in (
        lambda: torch.remainder(2, 3),
        lambda: torch.pow(2, 3),
        lambda: torch.bitwise_and(2, 3),
        lambda: torch.fmod(2, x),
        lambda: torch.rsub(2, x),
        lambda: torch.clamp_min(2, x),
        lambda: torch.maximum(x, 2),
        lambda: torch.eq(2, x),
    ):
        with pytest.raises(TypeError):
            call()
    assert torch.pow(2, x).tolist() == [2, 4]  # a number base is torch's too
    assert torch.remainder(5, x).tolist() == [0, 1]


# ---------------------------------------------------------------------------
# Ops of three operands, matrix products, cat and stack
# ---------------------------------------------------------------------------

CONDITION = _pair("bool", values=[True, False, False, True])


def test_where_promotes_its_two_values_as_torch():
    def op(m, a, b):
        return m.where(CONDITION[m is pt], a, b)

    _check_grid(op, _pairs(("dim",), ("dim", "0-dim", "number")))
    _check_grid(op, _pairs(("number",), ("number", "dim")))


def test_where_refuses_a_condition_that_is_not_bool():
    for cond in (torch.ones(2), torch.tensor([1, 0])):
        with pytest.raises(RuntimeError, match="boolean tensor"):
            torch.where(cond, 1, 2)
    with pytest.warns(UserWarning, match="uint8 condition"):
        torch.where(torch.tensor([1, 0], dtype=torch.uint8), 1, 2)


def test_clamp_with_tensor_bounds_promotes_as_torch():
    def op(m, a, b):
        return m.clamp(a, min=b, max=b + 2 if b.dtype != m.bool else b)

    _check_grid(op, _pairs(("dim",), ("dim", "0-dim")))


def test_addcmul_addcdiv_and_lerp_match_torch():
    _check_grid(
        lambda m, a, b: m.addcmul(a, b, b, value=2), _pairs(("dim",), ("dim", "0-dim"))
    )
    cases = list(_pairs(("dim",), ("dim",)))
    _check_grid(lambda m, a, b: m.addcdiv(a, b, a, value=0.5), cases)
    _check_grid(lambda m, a, b: m.lerp(a, b, 0.25), cases)
    _check_grid(lambda m, a, b: m.lerp(a, b, b), cases)


MATRICES = {d: _pair(d, values=[[1, 2], [3, 1]]) for d in DTYPES}


def test_matrix_products_refuse_mixed_dtypes_as_torch():
    cases = [
        (
            f"{a}, {b}",
            (MATRICES[a][0], MATRICES[b][0]),
            (MATRICES[a][1], MATRICES[b][1]),
        )
        for a in DTYPES
        for b in DTYPES
    ]
    _check_grid(lambda m, a, b: a @ b, cases)
    _check_grid(lambda m, a, b: a[0] @ b[0], cases)
    _check_grid(lambda m, a, b: a @ b[0], cases)
    _check_grid(lambda m, a, b: m.addmm(a, a, b, beta=0.5, alpha=2), cases)


def test_cat_and_stack_promote_as_torch():
    def cat(m, a, b):
        return m.cat([a, b])

    def stack(m, a, b):
        return m.stack([a, b])

    _check_grid(cat, _pairs(("dim",), ("dim",)))
    _check_grid(stack, _pairs(("0-dim",), ("0-dim",)))


# ---------------------------------------------------------------------------
# Gradients and grad_fn names of the math ops
# ---------------------------------------------------------------------------

X = [[-1.5, 0.5, 2.0], [1.0, -0.25, 3.0]]
Y = [[2.0, -0.5, 2.0], [1.0, 0.75, -3.0]]
GRADIENT_OPS = {
    "remainder": lambda m, x, y: x % y,
    "fmod": lambda m, x, y: m.fmod(x, y),
    "pow": lambda m, x, y: x.abs() ** y,
    "rpow": lambda m, x, y: 2**x,
    "rtruediv": lambda m, x, y: 3 / x,
    "div(floor)": lambda m, x, y: x.div(y, rounding_mode="floor"),
    "clamp at the bounds": lambda m, x, y: x.clamp(-0.25, 2.0),
    "clamp tensors": lambda m, x, y: x.clamp(min=y),
    "maximum ties": lambda m, x, y: m.maximum(x, y),
    "lerp": lambda m, x, y: m.lerp(x, y, 0.75),
    "lerp tensor": lambda m, x, y: m.lerp(x, y, y.sigmoid()),
    "addcmul": lambda m, x, y: m.addcmul(x, x, y, value=2),
    "addcdiv": lambda m, x, y: m.addcdiv(x, x, y, value=0.5),
    "addmm": lambda m, x, y: m.addmm(x[:, :2], x, y.t(), beta=0.5),
    "prod": lambda m, x, y: x.prod(1),
    "cumprod": lambda m, x, y: x.cumprod(1),
    "cumsum": lambda m, x, y: x.cumsum(0),
    "std": lambda m, x, y: x.std(1),
    "var": lambda m, x, y: x.var(correction=0),
    "logsumexp": lambda m, x, y: x.logsumexp(1),
    "amax ties": lambda m, x, y: y.amax(),
    "where": lambda m, x, y: m.where(x > 0, x, y),
    "unary": lambda m, x, y: x.square() + x.sign() + x.round() + x.frac() + x.erf(),
    "rsqrt_log1p": lambda m, x, y: y.abs().rsqrt() + x.abs().log1p() + x.expm1(),
    "trig": lambda m, x, y: x.tan() + x.atan() + (x / 4).asin() + x.sinh(),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_OPS))
def test_gradient_and_grad_fn_name_match_torch(name):
    results = []
    for m in (torch, pt):
        x = m.tensor(X, requires_grad=True)
        y = m.tensor(Y, requires_grad=True)
        out = GRADIENT_OPS[name](m, x, y)
        out.backward(m.ones_like(out))
        results.append((out, x.grad, y.grad))
    (out, gx, gy), (rout, rgx, rgy) = results
    assert out.grad_fn.name() == rout.grad_fn.name()
    assert _difference(out, rout) is None
    for ours, theirs in ((gx, rgx), (gy, rgy)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert _difference(ours, theirs) is None, (ours, theirs)


def test_ops_without_a_derivative_raise_torchs_error_in_backward():
    x = torch.ones(3, requires_grad=True)
    for out in (x // 2, 2 % x):
        assert out.grad_fn.name() == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::"):
            out.sum().backward()
    assert not (x > 0).requires_grad and not x.isnan().requires_grad


@pytest.mark.parametrize("cast", ["long", "int", "bool", "byte", "half", "double"])
def test_a_cast_of_a_tensor_that_requires_grad_requires_grad_when_floating(cast):
    theirs = getattr(pt.ones(2, requires_grad=True), cast)()
    ours = getattr(torch.ones(2, requires_grad=True), cast)()
    assert ours.requires_grad == theirs.requires_grad
    assert (ours.grad_fn is None) == (theirs.grad_fn is None)
