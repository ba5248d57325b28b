"""``torch.fft`` and ``torch.special`` in compat against PyTorch, for what the
OpInfo samples leave out: the import paths, ``out=``, norms, the frequency
factories, the refusals by name, domains and derivatives at the edges."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import jaxblitz.compat as ct

pt = pytest.importorskip("torch")


def both(array):
    """The same values as a torch tensor and a compat tensor."""
    return pt.from_numpy(np.array(array)), ct.tensor(np.array(array))


def close(ours, theirs, **tol):
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)


# -- torch.fft -----------------------------------------------------------------


def test_fft_and_special_import_as_torch_s_submodules():
    fft = importlib.import_module("jaxblitz.compat.fft")
    special = importlib.import_module("jaxblitz.compat.special")
    assert ct.fft is fft and ct.special is special
    for module, theirs in ((fft, pt.fft), (special, pt.special)):
        names = {n for n in dir(theirs) if callable(getattr(theirs, n))}
        names = {n for n in names if not n.startswith("_")} - {"Tensor"}
        assert names <= set(module.__all__)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_hfftn_and_irfftn_match_torch_values_and_gradients(norm):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5))
    cot = rng.standard_normal((3, 6, 8))
    for name in ("hfftn", "irfftn"):
        tx, cx = both(x)
        tx.requires_grad_(True)
        cx.requires_grad_(True)
        theirs = getattr(pt.fft, name)(tx, s=(6, 8), dim=(1, 2), norm=norm)
        ours = getattr(ct.fft, name)(cx, s=(6, 8), dim=(1, 2), norm=norm)
        close(ours, theirs, rtol=1e-10, atol=1e-12)
        theirs.backward(pt.from_numpy(cot))
        ours.backward(ct.tensor(cot))
        close(cx.grad, tx.grad, rtol=1e-10, atol=1e-12)
        assert type(ours.grad_fn).__name__ == "FftC2RBackward0"


def test_irfft_writes_out_and_refuses_an_integer_out():
    tx, cx = both(np.arange(5.0, dtype=np.float32))
    t_out, c_out = pt.empty(8, dtype=pt.float64), ct.empty(8, dtype=ct.float64)
    pt.fft.irfft(tx, n=8, out=t_out)
    got = ct.fft.irfft(cx, n=8, out=c_out)
    assert got is c_out
    close(c_out, t_out, rtol=1e-6)
    with pytest.raises(RuntimeError, match="irfft expects a floating point output"):
        ct.fft.irfft(cx, out=ct.empty(8, dtype=ct.int64))


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda F, x: F.irfft(x, n=0), "Invalid number of data points \\(0\\)"),
        (lambda F, x: F.irfftn(x, dim=(0, 0)), "FFT dims must be unique"),
        (lambda F, x: F.hfftn(x, s=(4,), dim=(0, 1)), "same length"),
        (lambda F, x: F.irfft(x, norm="half"), 'Invalid normalization mode: "half"'),
        (lambda F, x: F.fft2(x, dim=(0, 0)), "FFT dims must be unique"),
    ],
)
def test_bad_fft_arguments_raise_torch_s_errors(call, error):
    tx, cx = both(np.ones((3, 4), np.float32))
    with pytest.raises(RuntimeError, match=error):
        call(pt.fft, tx)
    with pytest.raises(RuntimeError, match=error):
        call(ct.fft, cx)


@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft", "fft2", "ifftn", "rfftn"])
def test_transforms_with_complex_results_are_refused_by_name(name):
    with pytest.raises(NotImplementedError, match=f"fft.{name}: complex results"):
        getattr(ct.fft, name)(ct.ones(4, 4))


def test_frequencies_match_torch_dtype_values_and_flags():
    for name, n, d in (("fftfreq", 7, 0.3), ("fftfreq", 8, 1.0), ("rfftfreq", 9, 2)):
        for dtype in (None, "float64"):
            kw = {} if dtype is None else {"dtype": getattr(pt, dtype)}
            ck = {} if dtype is None else {"dtype": getattr(ct, dtype)}
            theirs = getattr(pt.fft, name)(n, d, requires_grad=True, **kw)
            ours = getattr(ct.fft, name)(n, d, requires_grad=True, **ck)
            close(ours, theirs, rtol=0, atol=0)
            assert ours.requires_grad and ours.is_leaf
    out = ct.empty(2, dtype=ct.float64)
    assert ct.fft.fftfreq(5, out=out) is out and out.dtype is ct.float64
    with pytest.raises(RuntimeError, match="requires a floating point or complex"):
        ct.fft.fftfreq(5, dtype=ct.int64)


def test_fftshift_and_ifftshift_undo_each_other_as_torch_s():
    tx, cx = both(np.arange(15).reshape(3, 5))
    for dim in (None, 1, (0, 1), -2):
        close(ct.fft.fftshift(cx, dim), pt.fft.fftshift(tx, dim), rtol=0)
        close(ct.fft.ifftshift(cx, dim), pt.fft.ifftshift(tx, dim), rtol=0)
        back = ct.fft.ifftshift(ct.fft.fftshift(cx, dim), dim)
        assert ct.equal(back, cx)


# -- torch.special -------------------------------------------------------------


def test_special_names_are_compat_s_own_functions():
    x = ct.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    assert ct.equal(ct.special.expit(x), ct.sigmoid(x))
    assert type(ct.special.expit(x).grad_fn).__name__ == "SigmoidBackward0"
    assert type(ct.special.gammaln(x).grad_fn).__name__ == "LgammaBackward0"
    assert type(ct.special.psi(x).grad_fn).__name__ == "DigammaBackward0"
    assert type(ct.special.ndtr(x).grad_fn).__name__ == "MulBackward1"


def test_special_out_writes_or_refuses_as_torch():
    tx, cx = both(np.array([0.1, 0.7]))
    t_out, c_out = pt.empty(2, dtype=pt.float32), ct.empty(2, dtype=ct.float32)
    pt.special.erfcx(tx, out=t_out)
    assert ct.special.erfcx(cx, out=c_out) is c_out
    close(c_out, t_out, rtol=1e-6)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output"):
        ct.special.expit(cx, out=ct.empty(2, dtype=ct.int64))


def test_zeta_follows_torch_s_domain():
    grid = np.array([-2.0, 0.0, 0.5, 1.0, 1.5, 3.0, np.inf, np.nan])
    x, q = np.meshgrid(grid, np.concatenate([grid, [-1.5, -3.0]]), indexing="ij")
    theirs = pt.special.zeta(pt.from_numpy(x), pt.from_numpy(q))
    ours = ct.special.zeta(ct.tensor(x), ct.tensor(q))
    close(ours, theirs, rtol=1e-10)


def test_zeta_has_a_derivative_in_q_only():
    tq, cq = both(np.array([1.5, 2.0, 4.0]))
    tq.requires_grad_(True)
    cq.requires_grad_(True)
    pt.special.zeta(3.0, tq).sum().backward()
    ours = ct.special.zeta(3.0, cq)
    assert type(ours.grad_fn).__name__ == "SpecialZetaBackward1"
    ours.sum().backward()
    close(cq.grad, tq.grad, rtol=1e-10)
    cx = ct.tensor([3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative for 'zeta"):
        ct.special.zeta(cx, 2.0).backward()


def test_bessel_derivatives_at_zero_are_torch_s():
    for name in ("i1", "i1e", "i0e", "entr"):
        tx, cx = both(np.array([0.0, 1e-20, 0.25, 2.0]))
        tx.requires_grad_(True)
        cx.requires_grad_(True)
        getattr(pt.special, name)(tx).sum().backward()
        getattr(ct.special, name)(cx).sum().backward()
        close(cx.grad, tx.grad, rtol=1e-10)


def test_polynomials_of_high_degree_and_at_the_ends_match_torch():
    x = np.array([-1.0, -0.7, 0.0, 0.3, 0.999, 1.0, 1.5])
    n = np.array([0.0, 3.0, 9.0, 12.9, 25.0, -1.0, 7.0])
    names = [
        name
        for name in dir(pt.special)
        if name.endswith(("_polynomial_t", "_u", "_v", "_w", "_h", "_he", "_l", "_p"))
    ]
    assert len(names) == 12
    for name in names:
        theirs = getattr(pt.special, name)(pt.from_numpy(x), pt.from_numpy(n))
        ours = getattr(ct.special, name)(ct.tensor(x), ct.tensor(n))
        close(ours, theirs, rtol=1e-9, atol=1e-9)
        assert not ours.requires_grad


@pytest.mark.parametrize(
    "name",
    [
        "bessel_j0",
        "bessel_j1",
        "bessel_y0",
        "bessel_y1",
        "modified_bessel_k0",
        "modified_bessel_k1",
        "scaled_modified_bessel_k0",
        "scaled_modified_bessel_k1",
        "airy_ai",
    ],
)
def test_bessel_and_airy_functions_match_torch_across_their_range(name):
    x = np.concatenate(
        [
            np.linspace(-40, 40, 161),
            np.geomspace(1e-30, 700, 40),
            [0.0, -0.0, 1e30, np.inf, -np.inf, np.nan],
        ]
    ).astype(np.float32)
    theirs = getattr(pt.special, name)(pt.from_numpy(x))
    ours = getattr(ct.special, name)(ct.tensor(x))
    close(ours, theirs, rtol=1e-4, atol=1e-5)
    assert not ours.requires_grad


def test_bessel_j0_in_float64_is_accurate_where_torch_s_is_not():
    # J0(5.7) = 0.0599200097240374... (mpmath); torch's CPU kernel gives
    # 0.0599198996517846
    ours = ct.special.bessel_j0(ct.tensor([5.7], dtype=ct.float64)).item()
    assert abs(ours - 0.05992000972403747) < 1e-15


@pytest.mark.parametrize(
    "name", ["ndtri", "bessel_j0", "zeta", "legendre_polynomial_p"]
)
def test_functions_without_a_half_precision_kernel_refuse_it_as_torch(name):
    x = ct.tensor([0.5, 2.0], dtype=ct.float16)
    args = (x, x) if name in ("zeta", "legendre_polynomial_p") else (x,)
    with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented'):
        getattr(ct.special, name)(*args)
    assert ct.special.i1e(x).dtype is ct.float16  # these have one
