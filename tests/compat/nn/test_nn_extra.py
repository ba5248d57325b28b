"""compat.nn beyond the Blitz, as the Learn-the-Basics and pytorch/examples
scripts use it (ConvTranspose2d ...), checked against real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import jaxblitz.compat as compat

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    """The same random float32 values as a compat tensor and a torch tensor."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (
        compat.tensor(a, requires_grad=True),
        torch.tensor(a, requires_grad=True),
    )


TRANSPOSED = {
    "plain": dict(),
    "stride_padding": dict(stride=2, padding=1),
    "output_padding": dict(stride=2, padding=1, output_padding=1),
    "groups": dict(groups=2),
    "dilation": dict(dilation=2, padding=1),
    "dilation_output_padding": dict(dilation=2, stride=1, output_padding=1),
    "uneven": dict(stride=(2, 3), padding=(0, 2), output_padding=(1, 0)),
    "everything": dict(stride=2, padding=1, output_padding=1, groups=2, dilation=2),
}


@pytest.mark.parametrize("kwargs", TRANSPOSED.values(), ids=TRANSPOSED.keys())
def test_conv_transpose2d_matches_torch_in_value_and_gradients(kwargs):
    groups = kwargs.get("groups", 1)
    x, tx = _pair((2, 4, 5, 6), 0)
    w, tw = _pair((4, 6 // groups, 3, 2), 1)
    b, tb = _pair((6,), 2)
    out = compat.nn.functional.conv_transpose2d(x, w, b, **kwargs)
    expected = torch.nn.functional.conv_transpose2d(tx, tw, tb, **kwargs)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), atol=1e-5
    )
    g = np.random.default_rng(3).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(compat.tensor(g))
    expected.backward(torch.tensor(g))
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(
            ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-4
        )
    assert out.grad_fn.name() == expected.grad_fn.name()


def test_conv_transpose2d_of_an_unbatched_image_keeps_it_unbatched():
    x, tx = _pair((4, 3, 3))
    w, tw = _pair((4, 2, 3, 3), 1)
    out = compat.nn.functional.conv_transpose2d(x, w, stride=2)
    expected = torch.nn.functional.conv_transpose2d(tx, tw, stride=2)
    assert tuple(out.shape) == (2, 7, 7)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(),
                               atol=1e-5)  # fmt: skip


BAD = {
    "output_padding_too_big": ((1, 4, 5, 5), (4, 2, 3, 3), dict(output_padding=1)),
    "wrong_channels": ((1, 3, 5, 5), (4, 2, 3, 3), dict()),
    "groups_not_dividing": ((1, 4, 5, 5), (4, 2, 3, 3), dict(groups=3)),
    "too_small": ((1, 4, 5, 5), (4, 2, 3, 3), dict(padding=5)),
    "negative_padding": ((1, 4, 5, 5), (4, 2, 3, 3), dict(padding=-1)),
    "zero_stride": ((1, 4, 5, 5), (4, 2, 3, 3), dict(stride=0)),
    "zero_dilation": ((1, 4, 5, 5), (4, 2, 3, 3), dict(dilation=0)),
    "two_d_input": ((5, 5), (4, 2, 3, 3), dict()),
    "three_strides": ((1, 4, 5, 5), (4, 2, 3, 3), dict(stride=(1, 2, 3))),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_conv_transpose2d_refuses_bad_arguments_in_torchs_words(case):
    shape, wshape, kwargs = case
    x, tx = _pair(shape)
    w, tw = _pair(wshape, 1)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.conv_transpose2d(tx, tw, **kwargs)
    with pytest.raises(RuntimeError) as ours:
        compat.nn.functional.conv_transpose2d(x, w, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_conv_transpose2d_module_prints_and_is_shaped_as_torchs():
    kwargs = dict(stride=2, padding=1, output_padding=1, groups=2, bias=False)
    ours = compat.nn.ConvTranspose2d(4, 6, (3, 2), **kwargs)
    theirs = torch.nn.ConvTranspose2d(4, 6, (3, 2), **kwargs)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.weight.shape) == (4, 3, 3, 2)
    assert ours.bias is None
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_conv_transpose2d_module_draws_from_torchs_bound():
    layer = compat.nn.ConvTranspose2d(8, 16, 4)
    bound = 1 / np.sqrt(16 * 4 * 4)  # fan_in = out_channels / groups * kH * kW
    weight, bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert bias.shape == (16,) and np.abs(bias).max() <= bound


def test_conv_transpose2d_module_reaches_a_requested_output_size():
    layer = compat.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
    x = compat.zeros(1, 4, 5, 5)
    assert tuple(layer(x, output_size=(10, 10)).shape) == (1, 3, 10, 10)
    with pytest.raises(ValueError, match=r"valid sizes range from \[9, 9\] to"):
        layer(x, output_size=(12, 12))


def test_conv_transpose2d_module_refuses_other_padding_modes_as_torch():
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        compat.nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect")


# -- torchvision.utils and datasets.FakeData (torchvision itself is not installed:
# its recipe, written out, is the reference) ----------------------------------------


def test_make_grid_normalizes_over_value_range_and_clamps():
    import jaxblitz.compat.vision.utils as vutils

    x = compat.tensor([[[[-2.0, 0.0], [0.5, 1.0]]], [[[3.0, -1.0], [0.0, 0.0]]]])
    grid = vutils.make_grid(x, nrow=2, padding=1, normalize=True, value_range=(-1, 1))
    assert tuple(grid.shape) == (3, 4, 7)  # (C, 2 + 2*1, 2*2 + 3*1)
    # torch: clamp to (-1, 1), then (x + 1) / 2; padding stays pad_value 0
    assert grid[0, 1:3, 1:3].tolist() == [[0.0, 0.5], [0.75, 1.0]]
    assert grid[0, 1:3, 4:6].tolist() == [[1.0, 0.0], [0.5, 0.5]]
    assert grid[:, 0].abs().sum().item() == 0.0


def test_make_grid_scale_each_normalizes_every_image_on_its_own():
    import jaxblitz.compat.vision.utils as vutils

    x = compat.tensor([[[[0.0, 2.0]]], [[[10.0, 30.0]]]])
    grid = vutils.make_grid(x, padding=0, normalize=True, scale_each=True)
    assert grid[0].tolist() == [[0.0, 1.0, 0.0, 1.0]]


def test_save_image_writes_the_grid_as_8_bit_rgb(tmp_path):
    from PIL import Image

    import jaxblitz.compat.vision.utils as vutils

    x = compat.tensor([[[[0.0, 0.5], [1.0, 2.0]]]] * 3)  # 3 gray 2x2 images
    vutils.save_image(x, tmp_path / "g.png", nrow=3, padding=1, pad_value=1.0)
    im = Image.open(tmp_path / "g.png")
    assert im.mode == "RGB" and im.size == (10, 4)
    pixels = np.asarray(im)
    # torch: grid.mul(255).add_(0.5).clamp_(0, 255) to uint8
    assert pixels[1:3, 1:3, 0].tolist() == [[0, 128], [255, 255]]
    assert pixels[0, 0].tolist() == [255, 255, 255]


def test_fake_data_gives_the_same_image_for_an_index_and_a_target_below_classes():
    from PIL import Image

    from jaxblitz.compat.vision import datasets

    data = datasets.FakeData(size=4, image_size=(3, 6, 5), num_classes=3)
    img, target = data[1]
    assert isinstance(img, Image.Image) and img.size == (5, 6) and img.mode == "RGB"
    assert 0 <= target < 3 and data[1][1] == target
    assert np.array_equal(np.asarray(data[1][0]), np.asarray(img))
    assert len(data) == 4
    with pytest.raises(IndexError, match="FakeData index out of range"):
        data[4]


def test_torchvision_models_refuse_vgg16_by_name():
    from jaxblitz.compat.vision import models

    with pytest.raises(NotImplementedError, match=r"torchvision\.models\.vgg16 is"):
        models.vgg16(weights="IMAGENET1K_V1")


def test_saving_a_whole_module_is_refused_and_names_the_state_dict_way(tmp_path):
    with pytest.raises(NotImplementedError, match=r"whole nn\.Module.*state_dict\(\)"):
        compat.save(compat.nn.Linear(2, 2), tmp_path / "model.pth")
    assert not (tmp_path / "model.pth").exists()


def test_scatter_with_a_zero_dim_index_scatters_as_torch():
    ours = compat.zeros(5).scatter_(0, compat.tensor(3), value=1)
    theirs = torch.zeros(5).scatter_(0, torch.tensor(3), value=1)
    assert ours.tolist() == theirs.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]


ONE_HOT = {
    "inferred": ([0, 2], -1),
    "given": ([0, 2], 5),
    "zero_dim": (1, 3),
    "two_d": ([[1, 0], [2, 2]], 4),
}


@pytest.mark.parametrize("case", ONE_HOT.values(), ids=ONE_HOT.keys())
def test_one_hot_matches_torch(case):
    values, n = case
    ours = compat.nn.functional.one_hot(compat.tensor(values), n)
    theirs = torch.nn.functional.one_hot(torch.tensor(values), n)
    assert ours.tolist() == theirs.tolist()
    assert str(ours.dtype) == str(theirs.dtype) == "torch.int64"


ONE_HOT_BAD = {
    "float": ([0.0, 2.0], -1),
    "negative": ([-1, 2], -1),
    "too_big": ([0, 2], 2),
    "empty_inferred": ([], -1),
}


@pytest.mark.parametrize("case", ONE_HOT_BAD.values(), ids=ONE_HOT_BAD.keys())
def test_one_hot_refuses_what_torch_refuses_in_its_words(case):
    values, n = case
    dtype = "int64" if values == [] else None
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.one_hot(
            torch.tensor(values, dtype=getattr(torch, dtype or "int64"))
            if dtype
            else torch.tensor(values),
            n,
        )
    c_values = (
        compat.tensor(values, dtype=compat.int64) if dtype else compat.tensor(values)
    )
    with pytest.raises(RuntimeError) as ours:
        compat.nn.functional.one_hot(c_values, n)
    assert str(ours.value) == str(theirs.value)


def test_unflatten_module_reshapes_and_prints_as_torchs():
    ours, theirs = compat.nn.Unflatten(1, (2, 5)), torch.nn.Unflatten(1, (2, 5))
    assert repr(ours) == repr(theirs)
    assert tuple(ours(compat.zeros(3, 10)).shape) == (3, 2, 5)
