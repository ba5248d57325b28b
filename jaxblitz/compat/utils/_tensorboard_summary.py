"""The protocol buffers ``torch.utils.tensorboard``'s ``SummaryWriter`` writes
(torch's ``tensorboard/summary.py``), from compat tensors, NumPy arrays or numbers;
needs the ``tensorboard`` package."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
from tensorboard.compat.proto.summary_pb2 import SummaryMetadata as _Metadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from jaxblitz.compat.tensor import Tensor
from jaxblitz.compat.tensor._dtype import bfloat16, float16


def make_np(x: Any) -> np.ndarray:
    """A tensor, array or number as a NumPy array (bfloat16 as float16, as torch)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        x = x.to(float16) if x.dtype == bfloat16 else x
        return x.detach().cpu().numpy()
    raise NotImplementedError(
        f"Got {type(x)}, but numpy array or torch tensor are expected."
    )


def scalar(
    name: str, value: Any, new_style: bool = False, double_precision: bool = False
) -> Summary:
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions). Was given size: "
            f"{array.size} and {array.ndim} dimensions."
        )
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    proto = (
        TensorProto(double_val=[number], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[number], dtype="DT_FLOAT")
    )
    metadata = _Metadata(plugin_data=_Metadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None):
    """torch's histogram: NumPy's buckets, merged down to ``max_bins``, trimmed
    to the non-empty range with one empty bucket before it."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        if len(counts) % step:
            counts = np.pad(counts, [[0, step - len(counts) % step]])
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = np.append(limits[:-1:step], limits[-1])
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1 : end] if start > 0 else np.append([0], counts[:end])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None):
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """NCHW images tiled into one CHW image, 8 to a row, as torch's tensorboard."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(array: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            "You can not use the same dimension shorthand twice. "
            f"input_format: {input_format}"
        )
    if array.ndim != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {array.shape}, input_format: {input_format}"
        )
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = array.transpose([input_format.find(c) for c in "NCHW"])
        return _grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = array.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    hw = array.transpose([input_format.find(c) for c in "HW"])
    return np.stack([hw] * 3, 2)


def image(tag: str, value: Any, rescale: float = 1, dataformats: str = "NCHW"):
    """A PNG of the image(s): floats in [0, 1] scaled by 255, uint8 as they are."""
    from PIL import Image

    hwc = convert_to_HWC(make_np(value), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = hwc.shape
    picture = Image.fromarray(hwc).resize(
        (int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS
    )
    with io.BytesIO() as out:
        picture.save(out, format="PNG")
        encoded = out.getvalue()
    proto = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=encoded
    )
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def text(tag: str, string: str) -> Summary:
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    metadata = _Metadata(
        plugin_data=_Metadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[string.encode(encoding="utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    value = Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=proto)
    return Summary(value=[value])


def _plugin_summary(tag: str, **content: Any) -> Summary:
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content)
    metadata = _Metadata(
        plugin_data=_Metadata.PluginData(
            plugin_name=PLUGIN_NAME, content=data.SerializeToString()
        )
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata)])


def hparams(
    hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None
) -> tuple[Summary, Summary, Summary]:
    """The experiment, session-start and session-end summaries of the hparams
    plugin, as torch's."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import (
        SessionEndInfo,
        SessionStartInfo,
    )

    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, dict):
            raise TypeError(
                f"parameter: {name} should be a dictionary, nothing logged."
            )
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged."
        )
    for k, v in domains.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                f"type as hparam_dict[{k}]."
            )
    infos = []
    start = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        # torch's order: a bool is an int, so it is logged as a number
        if isinstance(v, int | float):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError(
                "value should be one of int, float, str, bool, or torch.Tensor"
            )
        setattr(start.hparams[k], field, v)
        discrete = None
        if k in domains:
            values = [struct_pb2.Value(**{field: d}) for d in domains[k]]
            discrete = struct_pb2.ListValue(values=values)
        infos.append(
            HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=discrete)
        )
    metrics = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    experiment = Experiment(hparam_infos=infos, metric_infos=metrics)
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (
        _plugin_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
        _plugin_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
        _plugin_summary(metadata.SESSION_END_INFO_TAG, session_end_info=end),
    )
