"""Blitz 4, Training a classifier: the tensor path of ``rotate``, ``affine``,
``perspective`` and ``elastic_transform``, as torchvision's ``_functional_tensor``.

Each builds a sampling grid in normalised coordinates and calls compat's
``grid_sample`` (zeros padding, ``align_corners=False``); a ``fill`` colour goes
where an extra all-ones channel, sampled with the image, says the image is not.
The grid depends on the matrix and the sizes only, so it is built on the host in
torch's own arithmetic (its float32 ``linspace``, its ``bmm`` summed left to
right); the image goes through compat ops, recorded for autograd.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from jaxblitz.compat.nn.grid import grid_sample
from jaxblitz.compat.ops.shape_ops import cat
from jaxblitz.compat.tensor import Tensor, _dtype
from jaxblitz.compat.tensor.creation import from_numpy, ones, tensor, torch_linspace


def linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """torch's float32 ``linspace`` on the CPU, bit for bit."""
    return torch_linspace(start, end, steps, np.dtype(np.float32))


def _grid_dtype(img: Tensor) -> Any:
    return img.dtype if img.is_floating_point() else _dtype.float32


def _assert_image_tensor(img: Tensor) -> None:
    if not img.ndim >= 2:
        raise TypeError("Tensor is not a torch image.")


def _check_inputs(
    img: Any,
    matrix: list[float] | None,
    interpolation: str,
    fill: Any,
    coeffs: list[float] | None = None,
) -> None:
    """torch: ``_assert_grid_transform_inputs`` (nearest and bilinear only)."""
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor")
    _assert_image_tensor(img)
    if matrix is not None and not isinstance(matrix, list):
        raise TypeError("Argument matrix should be a list")
    if matrix is not None and len(matrix) != 6:
        raise ValueError("Argument matrix should have 6 float values")
    if coeffs is not None and len(coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    if fill is not None and not isinstance(fill, int | float | tuple | list):
        warnings.warn(
            "Argument fill should be either int, float, tuple or list", stacklevel=3
        )
    channels = 1 if img.ndim == 2 else img.shape[-3]
    if isinstance(fill, tuple | list) and len(fill) > 1 and len(fill) != channels:
        raise ValueError(
            "The number of elements in 'fill' cannot broadcast to match the number "
            f"of channels of the image ({len(fill)} != {channels})"
        )
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(
            f"Interpolation mode '{interpolation}' is unsupported with Tensor input"
        )


_INTEGERS = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)


def _cast_squeeze_in(img: Tensor, req_dtypes: list[Any]) -> tuple[Tensor, ...]:
    """torch: ``_cast_squeeze_in``: a batch of one, in the first of ``req_dtypes``
    unless it is one of them already."""
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(
    img: Tensor, need_cast: bool, need_squeeze: bool, out_dtype: Any
) -> Tensor:
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in _INTEGERS:  # torch: it is better to round before the cast
            img = img.round()
        img = img.to(out_dtype)
    return img


def _apply_grid_transform(img: Tensor, grid: Tensor, mode: str, fill: Any) -> Tensor:
    """torch: ``_apply_grid_transform``: (N, C, H, W) or (C, H, W) images."""
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:  # the same grid for every image of the batch
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:  # a channel of ones marks where the image lands
        mask = ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype)
        img = cat((img, mask), dim=1)
    img = grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :].expand_as(img[:, :-1, :, :])
        img = img[:, :-1, :, :]
        fills = list(fill) if isinstance(fill, tuple | list) else [float(fill)]
        fill_img = tensor(fills, dtype=img.dtype).view(1, len(fills), 1, 1)
        fill_img = fill_img.expand_as(img)
        if mode == "nearest":
            outside = mask < 0.5  # torch: img[mask] = fill_img[mask]
            img = img.clone()
            img[outside] = fill_img[outside]
        else:
            img = img * mask + (1.0 - mask) * fill_img
    img = _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)
    return img


def _affine_grid(
    theta: list[float], w: int, h: int, ow: int, oh: int, dtype: Any
) -> Tensor:
    """torch: ``_gen_affine_grid``: the (1, oh, ow, 2) grid of the inverse affine
    ``theta`` (2x3, pixel units about the image centre)."""
    dt = dtype.np
    d = 0.5
    x = linspace32(-ow * 0.5 + d, ow * 0.5 + d - 1, ow).astype(dt)[None, :, None]
    y = linspace32(-oh * 0.5 + d, oh * 0.5 + d - 1, oh).astype(dt)[:, None, None]
    t = np.asarray(theta, dt).reshape(2, 3).T / np.asarray([0.5 * w, 0.5 * h], dt)
    grid = x * t[0] + y * t[1] + t[2]  # torch: base_grid.bmm(rescaled_theta)
    return from_numpy(grid.astype(dt)[None])


def affine(
    img: Tensor, matrix: list[float], interpolation: str = "nearest", fill: Any = None
) -> Tensor:
    _check_inputs(img, matrix, interpolation, fill)
    h, w = img.shape[-2], img.shape[-1]
    grid = _affine_grid(matrix, w, h, w, h, _grid_dtype(img))
    return _apply_grid_transform(img, grid, interpolation, fill)


def _affine_output_size(matrix: list[float], w: int, h: int) -> tuple[int, int]:
    """torch: ``_compute_affine_output_size``, in float32 as torch computes it."""
    f32 = np.float32
    pts = np.array(
        [[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0]]
        + [[0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]],
        f32,
    )
    theta = np.asarray(matrix, f32).reshape(2, 3)
    new_pts = pts[:, :1] * theta[:, 0] + pts[:, 1:2] * theta[:, 1] + theta[:, 2]
    centre = np.array([w * 0.5, h * 0.5], f32)
    min_vals, max_vals = new_pts.min(0) + centre, new_pts.max(0) + centre
    tol = f32(1e-4)  # truncate to 1e-4 so that ceil(X.0000001) stays X
    cmax = np.ceil(np.trunc(max_vals / tol) * tol)
    cmin = np.floor(np.trunc(min_vals / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def rotate(
    img: Tensor,
    matrix: list[float],
    interpolation: str = "nearest",
    expand: bool = False,
    fill: Any = None,
) -> Tensor:
    _check_inputs(img, matrix, interpolation, fill)
    h, w = img.shape[-2], img.shape[-1]
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    grid = _affine_grid(matrix, w, h, ow, oh, _grid_dtype(img))
    return _apply_grid_transform(img, grid, interpolation, fill)


def _perspective_grid(coeffs: list[float], ow: int, oh: int, dtype: Any) -> Tensor:
    """torch: ``_perspective_grid``: Pillow's
    ``x = (a x + b y + c) / (g x + h y + 1)``, ``y = (d x + e y + f) / (...)``."""
    dt = dtype.np
    d = 0.5
    x = linspace32(d, ow * 1.0 + d - 1.0, ow).astype(dt)[None, :, None]
    y = linspace32(d, oh * 1.0 + d - 1.0, oh).astype(dt)[:, None, None]
    c = np.asarray(coeffs, dt)
    t1 = np.stack([c[0:3], c[3:6]]).T / np.asarray([0.5 * ow, 0.5 * oh], dt)
    t2 = np.stack([[c[6], c[7], dt.type(1.0)]] * 2).T
    grid1 = x * t1[0] + y * t1[1] + t1[2]
    grid2 = x * t2[0] + y * t2[1] + t2[2]
    return from_numpy((grid1 / grid2 - dt.type(1.0)).astype(dt)[None])


def perspective(
    img: Tensor,
    perspective_coeffs: list[float],
    interpolation: str = "bilinear",
    fill: Any = None,
) -> Tensor:
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor.")
    _assert_image_tensor(img)
    _check_inputs(img, None, interpolation, fill, coeffs=perspective_coeffs)
    oh, ow = img.shape[-2], img.shape[-1]
    grid = _perspective_grid(perspective_coeffs, ow, oh, _grid_dtype(img))
    return _apply_grid_transform(img, grid, interpolation, fill)


def elastic_transform(
    img: Tensor, displacement: Tensor, interpolation: str = "bilinear", fill: Any = None
) -> Tensor:
    """The identity grid plus ``displacement`` (1, H, W, 2), sampled."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor. Got {type(img)}")
    h, w = img.shape[-2], img.shape[-1]
    xs, ys = (linspace32((-s + 1) / s, (s - 1) / s, s) for s in (w, h))
    identity = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]), -1)[None]
    grid = from_numpy(identity) + displacement  # torch: _create_identity_grid
    return _apply_grid_transform(img, grid, interpolation, fill)
