"""What a GPU (or TPU) run checks before benchmarks/run.py times it there.

Run: python benchmarks/check_device.py

Prints the versions and devices, then compares on JAX's default device:
- the core's LeNet loss and gradients (the backend's pick of convolution) with
  the CPU's other implementation (im2col against ``lax.conv``) on the same
  float32 inputs, as a relative error (the core runs XLA's default precision: a
  GPU's float32 convolutions and products are TF32 there, expect ~1e-3);
- compat's float32 products on its ``cuda`` device against a float64 reference:
  ``a @ b`` and ``F.linear`` (512x1024 by 1024x256), as the largest error over
  the largest value, with PyTorch's default flags (float32 products) and with
  ``torch.set_float32_matmul_precision("high")`` (TF32), beside PyTorch's on CUDA
  when a CUDA PyTorch is installed; the card's name is printed. Without a GPU
  this check says so and passes;
- one Blitz training step of compat on its ``cuda`` device with PyTorch's on
  CUDA, from the same weights and batch (loss and the step's new weights).
Exits 1 when a check fails.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

from jaxblitz import kernels, models, train


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def core_check(tol: float) -> bool:
    cpu = jax.devices("cpu")[0]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    params = train.init_state(train.Config(), 3).params

    def loss(p, x, y, impl):
        return models.cross_entropy(models.lenet(p, x, impl=impl), y)

    grad = jax.jit(jax.value_and_grad(loss), static_argnums=3)
    here = grad(params, jnp.asarray(x), jnp.asarray(y), None)
    # The reference: the CPU, with the other implementation where this one is
    # the CPU's own (im2col there, so ``lax.conv``'s).
    other = "xla" if models.default_impl() == "im2col" else "im2col"
    ref_params = jax.device_put(params, cpu)  # committed: runs on the CPU
    ref = grad(ref_params, jax.device_put(x, cpu), jax.device_put(y, cpu), other)
    errors = {"loss": rel(here[0], ref[0])}
    for path, g in jax.tree_util.tree_leaves_with_path(here[1]):
        want = ref[1]
        for key in path:
            want = want[key.key]
        errors[jax.tree_util.keystr(path)] = rel(g, want)
    worst = max(errors.values())
    print(
        f"core: default impl {models.default_impl()!r}, im2col_backend "
        f"{kernels.im2col_backend()}, grad_chunk(512) {kernels.grad_chunk(512)}; "
        f"loss and gradients vs the CPU's {other!r}: worst relative error "
        f"{worst:.2e} ({max(errors, key=errors.get)})"
    )
    return worst < tol


def _products(lib, F, device: str, a, b) -> list[float]:
    """Largest error over the largest value of float32 ``a @ b`` and
    ``F.linear(a, b.T)`` on ``device``, against float64 products on the host."""
    ref = a.astype(np.float64) @ b.astype(np.float64)
    x, w = lib.tensor(a).to(device), lib.tensor(b).to(device)
    errors = []
    for y in (x @ w, F.linear(x, w.t().contiguous())):
        got = y.cpu().numpy().astype(np.float64)
        errors.append(float(np.abs(got - ref).max() / np.abs(ref).max()))
    return errors


def precision_check(tol: float) -> bool:
    """compat's float32 products on a GPU: float32 with PyTorch's default flags,
    TF32 with ``set_float32_matmul_precision("high")``; PyTorch CUDA's beside."""
    import jaxblitz.compat as ctorch
    import jaxblitz.compat.nn.functional as cF

    if not ctorch.cuda.is_available():
        print(
            "precision: no GPU in this process, skipped (on the CPU float32 "
            "products are float32 whatever the flags)"
        )
        return True
    rng = np.random.default_rng(2)
    a = rng.standard_normal((512, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 256), dtype=np.float32)
    card = ctorch.cuda.get_device_name()
    ok = True
    for level in ("highest", "high"):
        ctorch.set_float32_matmul_precision(level)
        try:
            mm, linear = _products(ctorch, cF, "cuda", a, b)
        finally:
            ctorch.set_float32_matmul_precision("highest")
        print(
            f"precision on {card}: compat, float32 matmul precision {level!r}: "
            f"a @ b {mm:.1e}, F.linear {linear:.1e} (largest error / largest value "
            "against float64)"
        )
        if level == "highest":
            ok = max(mm, linear) < tol
    try:
        import torch
    except ImportError:
        print("precision: PyTorch not installed, no comparison")
        return ok
    if not torch.cuda.is_available():
        print("precision: this PyTorch has no CUDA, no comparison")
        return ok
    mm, linear = _products(torch, torch.nn.functional, "cuda", a, b)
    print(
        f"precision on {torch.cuda.get_device_name()}: PyTorch {torch.__version__} "
        f"default flags: a @ b {mm:.1e}, F.linear {linear:.1e}"
    )
    return ok


def compat_check(tol: float) -> bool:
    try:
        import torch
    except ImportError:
        print("compat: PyTorch not installed, no comparison")
        return True
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from bench_compat import blitz_net, device_for

    import jaxblitz.compat as ctorch
    import jaxblitz.compat.nn.functional as cF
    from jaxblitz.compat import nn as cnn

    device, cdevice = device_for(torch), device_for(ctorch)
    torch.manual_seed(0)
    net = blitz_net(torch, torch.nn, torch.nn.functional)
    cnet = blitz_net(ctorch, cnn, cF)
    cnet.load_state_dict(
        {k: ctorch.tensor(v.numpy()) for k, v in net.state_dict().items()}
    )
    net.to(device)
    cnet.to(cdevice)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, 32)
    losses = []
    for lib, model, dev in ((torch, net, device), (ctorch, cnet, cdevice)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt.zero_grad()
        loss = lib.nn.CrossEntropyLoss()(
            model(lib.tensor(x).to(dev)), lib.tensor(y).to(dev)
        )
        loss.backward()
        opt.step()
        losses.append(loss.item())
    new = {k: v.cpu().numpy() for k, v in net.state_dict().items()}
    cnew = {k: v.cpu().numpy() for k, v in cnet.state_dict().items()}
    worst = max(rel(cnew[k], new[k]) for k in new)
    where = next(iter(cnet.parameters())).device
    print(
        f"compat on {where} vs PyTorch {torch.__version__} on {device}: loss "
        f"{losses[1]:.6f} vs {losses[0]:.6f}; new weights' worst relative "
        f"error {worst:.2e}"
    )
    return abs(losses[1] - losses[0]) < tol * abs(losses[0]) and worst < tol


def main() -> int:
    print(
        f"jax {jax.__version__}, default backend {jax.default_backend()}, "
        f"devices {jax.devices()}"
    )
    tol = 1e-4 if jax.default_backend() == "cpu" else 2e-2
    ok = core_check(tol)
    ok = precision_check(1e-5) and ok  # float32: ~1e-7; TF32 would be ~1e-4
    ok = compat_check(tol) and ok
    print("device checks:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
